"""A store of a [1, 1] block's column sum into a one-element box: the Linalg layer folds the sum
over the unit dim into a rank-reducing slice (tensor<1x1> to tensor<1>), so the elementwise
generic that computes the block (rank 2) is stored into a box of rank 1. The store plan lowered
that generic at the store over the box's sizes, one loop for two dims: the code generator raised
an IndexError (naiad.ops' rms_norm backward over one element, found by torch's OpInfo
gradient samples). Now such a store keeps the generic's own loops; compiled and interpreted on
the same random data."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs


@naiad.jit
def column_sums(x_ptr, w_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + cols, tl.sum(x * w[None, :], axis=0), mask=cols < n)


@pytest.mark.parametrize("rows, cols", [(1, 1), (1, 4), (3, 1)])
def test_a_unit_dims_sum_stores_into_its_box(rows, cols):
    rng = np.random.default_rng(rows * 10 + cols)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    w = rng.standard_normal(cols).astype(np.float32)
    blocks = [1 << (size - 1).bit_length() for size in (rows, cols)]
    results = {}
    for backend in ("interpreter", "cpu"):
        out = rng.standard_normal(cols).astype(np.float32)
        with knobs.override(NAIAD_BACKEND=backend):
            column_sums[(1,)](x, w, out, rows, cols, ROWS=blocks[0], COLS=blocks[1])
        results[backend] = out
    expected = (x.astype(np.float64) * w).sum(0)
    np.testing.assert_allclose(results["interpreter"], expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(results["cpu"], results["interpreter"])
