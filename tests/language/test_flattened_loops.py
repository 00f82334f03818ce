"""`tl.range(..., flatten=True)`: the CPU back end fuses the nest into one loop
(`fuse-nested-loops`; the NVIDIA back end fuses those without a dot, tests/gpu has their
values there); the values are those of the nest as written,
for every trip count: none, one, several, inner bounds read from the outer induction variable
(assumed ordered or not), code before and after the inner loop, and a persistent matmul. A nest
whose inner loop carries a pointer stays a nest; its values are checked too."""

import numpy as np
import pytest
from fixture_kernels.flattened_loops import (
    dependent,
    dependent_expected,
    numbered,
    numbered_expected,
    persistent_matmul,
    row_blocks,
)
from memory_helpers import assert_exact, poisoned, random_array, rng


@pytest.mark.parametrize("outer, inner", [(10, 10), (0, 5), (5, 0), (1, 1), (3, -2), (-1, 4)])
def test_every_inner_iteration_runs_once_in_order(outer, inner):
    out = np.zeros((32, 32), np.int32)
    numbered[(1,)](outer, inner, out)
    assert_exact(out, numbered_expected(outer, inner))


@pytest.mark.parametrize("assume", [True, False])
def test_inner_bounds_read_the_outer_variable(assume):
    out_i, out_j = np.full(128, -1, np.int32), np.full(128, -1, np.int32)
    dependent[(1,)](10, out_i, out_j, assume)
    ref_i, ref_j = dependent_expected(10, assume)
    assert_exact(out_i, ref_i)
    assert_exact(out_j, ref_j)


@pytest.mark.parametrize("rows, cols", [(5, 37), (3, 0), (1, 16)])
def test_a_pointer_carried_by_the_inner_loop(rows, cols):
    gen = rng(31)
    block = 16
    x = random_array((rows, max(cols, 1)), np.float32, gen)[:, :cols].copy()
    y = random_array(rows, np.float32, gen)
    out = poisoned((rows, block), np.float32)
    row_blocks[(1,)](x, y, out, rows, cols, block)
    padded = np.zeros((rows, -(-cols // block) * block), np.float64)
    padded[:, :cols] = x
    expected = (padded.reshape(rows, -1, block) * y[:, None, None].astype(np.float64)).sum(axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_a_persistent_matmul():
    gen = rng(32)
    m, n, k = 40, 24, 50
    a = random_array((m, k), np.float16, gen)
    b = random_array((k, n), np.float16, gen)
    c = poisoned((m, n), np.float32)
    persistent_matmul[(3,)](a, b, c, m, n, k, PROGRAMS=3, BM=16, BN=16, BK=16)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3)
