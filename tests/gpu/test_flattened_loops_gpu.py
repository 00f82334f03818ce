"""On the GPU: `tl.range(..., flatten=True)` nests, which the NVIDIA back end fuses into one loop
as Triton does, give the nest's values for every trip count (the CPU's cases,
tests/language/test_flattened_loops.py), and a fused persistent matmul's asynchronous wgmma
dot those of float64 over ragged tiles, programs with several tiles and programs with none."""

import numpy as np
import pytest
import torch
from fixture_kernels.flattened_loops import (
    dependent,
    dependent_expected,
    numbered,
    numbered_expected,
    persistent_matmul,
    persistent_matmul_offsets,
)
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("outer, inner", [(10, 10), (0, 5), (5, 0), (1, 1), (3, -2)])
def test_a_fused_nest_runs_every_inner_iteration_once_in_order(outer, inner):
    out = torch.zeros((32, 32), dtype=torch.int32, device="cuda")
    launched = numbered[(1,)](outer, inner, out)
    assert launched.asm["ttgir"].count("scf.for") <= 1  # none where 1 and 1 are specialized
    np.testing.assert_array_equal(out.cpu().numpy(), numbered_expected(outer, inner))


@pytest.mark.parametrize("ordered", [True, False])
def test_fused_inner_bounds_read_the_outer_variable(ordered):
    rows = torch.full((128,), -1, dtype=torch.int32, device="cuda")
    cols = torch.full((128,), -1, dtype=torch.int32, device="cuda")
    dependent[(1,)](10, rows, cols, ordered)
    expected_rows, expected_cols = dependent_expected(10, ordered)
    np.testing.assert_array_equal(rows.cpu().numpy(), expected_rows)
    np.testing.assert_array_equal(cols.cpu().numpy(), expected_cols)


# ragged M and N tiles, tiles not a multiple of the programs, programs without a tile (K and N
# multiples of 16: 16-byte copies, the loop pipelined)
# (persistent_matmul_offsets: tutorial 09's shape, its tile's offsets carried across K steps)
@pytest.mark.parametrize("kernel", [persistent_matmul, persistent_matmul_offsets])
@pytest.mark.parametrize(
    "m, n, k, programs", [(300, 176, 128, 7), (128, 64, 512, 3), (200, 320, 96, 40)]
)
def test_a_fused_persistent_matmul_with_an_asynchronous_dot(m, n, k, programs, kernel):
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("wgmma needs sm_90a")
    gen = torch.Generator().manual_seed(m + n + k)
    a = torch.randn((m, k), generator=gen).half()
    b = torch.randn((k, n), generator=gen).half()
    c = torch.full((m, n), 7.0, device="cuda")
    launched = kernel[(programs,)](
        a.cuda(), b.cuda(), c, m, n, k, PROGRAMS=programs, BM=64, BN=64, BK=32
    )
    assert "tt.flatten" not in launched.asm["ttgir"] and "isAsync = true" in launched.asm["ttgir"]
    expected = a.double().numpy() @ b.double().numpy()
    np.testing.assert_allclose(c.cpu().numpy(), expected, rtol=2e-3, atol=2e-3)
