"""A masked store whose box the compiler knows to be empty (codegen/loops.py).

The mask ANDs in `v > w` for two casts of the same scalar: the TTIR keeps them apart, the
Linalg layer's CSE makes them one value and folds the comparison to false, so the store's box
has a constant size of 0 and its loops are known never to run. Their bodies were still entered
by a phi naming the block before the loop, which branched past it: LLVM rejected the module
(a generated kernel, seed 295, found it). The kernels also store a block the mask keeps, and
run compiled and in the interpreter on the same random data.
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs


@naiad.jit
def empty_store_1d(x_ptr, out_ptr, kept_ptr, n, f, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=5)
    v = f.to(tl.uint8)
    never = v > f.to(tl.uint8)
    tl.store(out_ptr + offs, x * v, mask=(offs < n) & never)
    tl.store(kept_ptr + offs, x * v, mask=offs < n)


@naiad.jit
def empty_store_2d(x_ptr, out_ptr, kept_ptr, m, n, f, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=mask, other=0.25)
    never = f.to(tl.int8) > f.to(tl.int8)
    tl.store(out_ptr + rows, tl.sum(x, axis=1), mask=(rows < m) & never)
    tl.store(out_ptr + rows[:, None] * n + cols[None, :], x + 1.0, mask=mask & never)
    tl.store(kept_ptr + rows[:, None] * n + cols[None, :], x * f, mask=mask)


def _both(kernel, grid, inputs, outputs, **scalars):
    """The outputs (random, so that a stray write shows) after `kernel` ran in each back end."""
    results = {}
    for backend in ("interpreter", "cpu"):
        arrays = [a.copy() for a in outputs]
        with knobs.override(NAIAD_BACKEND=backend):
            kernel[grid](*inputs, *arrays, **scalars)
        results[backend] = arrays
    return results["interpreter"], results["cpu"]


@pytest.mark.parametrize("n", [1, 20, 64])
def test_empty_box_store_1d(n):
    rng = np.random.default_rng(295 + n)
    x = rng.integers(1, 200, 64).astype(np.uint8)
    outputs = [rng.integers(1, 200, 64).astype(np.uint8) for _ in range(2)]
    expected, got = _both(
        empty_store_1d, (8,), [x], outputs, n=n, f=float(rng.integers(2, 9)), BLOCK=8
    )
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(got[0], outputs[0])


@pytest.mark.parametrize(("m", "n"), [(5, 3), (16, 40)])
def test_empty_box_store_2d(m, n):
    rng = np.random.default_rng(m * 100 + n)
    x = rng.standard_normal((16, n)).astype(np.float64)
    outputs = [rng.standard_normal((16, n)) for _ in range(2)]
    f = float(rng.uniform(1.5, 4.0))
    expected, got = _both(empty_store_2d, (2,), [x], outputs, m=m, n=n, f=f, ROWS=8, COLS=64)
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(got[0], outputs[0])
