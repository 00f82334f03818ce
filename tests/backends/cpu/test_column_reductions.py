"""Reductions over an axis that is not the innermost one, compiled for the CPU: whole vectors of
the kept last axis folded down the reduced axis (codegen/lower_reduce_columns.py).

Each kernel runs compiled (`NAIAD_BACKEND=cpu`) on seeded random blocks against NumPy in
float64 (sums within a few ulp of the column's magnitude, maxima, minima and integer sums
exactly), at lengths from one row to many and widths of one to sixteen vectors; NaN inputs
against the interpreter, whose maximum and minimum ignore a NaN as the compiled code must.
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs

RNG_SEED = 20261129


@naiad.jit
def reduce_columns(x_ptr, out_ptr, OP: tl.constexpr, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    x = tl.load(x_ptr + rows[:, None] * COLS + cols[None, :])
    if OP == "sum":
        result = tl.sum(x, axis=0)
    elif OP == "max":
        result = tl.max(x, axis=0)
    else:
        result = tl.min(x, axis=0)
    tl.store(out_ptr + cols, result)


@naiad.jit
def sum_middle_axis(x_ptr, out_ptr, A: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    """A [A, R * C] block read as [A, R, C] and summed over R (a reshape's middle axis)."""
    flat = tl.arange(0, A)[:, None] * (R * C) + tl.arange(0, R * C)[None, :]
    x = tl.reshape(tl.load(x_ptr + flat), [A, R, C])
    out = tl.arange(0, A)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(out_ptr + out, tl.sum(x, axis=1))


@naiad.jit
def row_sums_by_lanes(x_ptr, out_ptr, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """Row sums whose loop keeps one partial sum per lane of 16 and folds the lanes once after
    it: each step reduces a reshape's middle axis."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    partial = tl.zeros([ROWS, 16], tl.float32)
    for start in range(0, n, BLOCK):
        x = tl.load(x_ptr + rows[:, None] * n + start + tl.arange(0, BLOCK)[None, :])
        partial += tl.sum(tl.reshape(x, [ROWS, BLOCK // 16, 16]), axis=1)
    tl.store(out_ptr + rows, tl.sum(partial, axis=1))


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


def _block(rows: int, cols: int, dtype) -> np.ndarray:
    rng = np.random.default_rng(RNG_SEED + rows * 1000 + cols)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, size=(rows, cols)).astype(dtype)
    return rng.standard_normal((rows, cols)).astype(dtype)


def _expected(x: np.ndarray, op: str) -> np.ndarray:
    if op == "sum":
        return x.astype(np.float64 if x.dtype.kind == "f" else np.int64).sum(axis=0)
    return x.max(axis=0) if op == "max" else x.min(axis=0)


def _check(got: np.ndarray, want, x: np.ndarray, op: str) -> None:
    if op == "sum" and x.dtype.kind == "f":
        scale = np.abs(x).astype(np.float64).sum(axis=0)
        np.testing.assert_array_less(np.abs(got - want), 8 * np.finfo(x.dtype).eps * scale + 1e-30)
    else:
        np.testing.assert_array_equal(got, np.asarray(want).astype(x.dtype))


@pytest.mark.parametrize("rows", [1, 2, 8, 64])
@pytest.mark.parametrize("cols", [16, 64, 256])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_columns_of_f32_blocks(rows, cols, op):
    x = _block(rows, cols, np.float32)
    out = np.empty(cols, np.float32)
    reduce_columns[(1,)](x, out, op, rows, cols)
    _check(out, _expected(x, op), x, op)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int8])
@pytest.mark.parametrize("op", ["sum", "max"])
def test_columns_of_other_types(dtype, op):
    x = _block(32, 32, dtype)
    widened = op == "sum" and dtype == np.int8  # tl.sum of int8 is int32, as Triton's
    out = np.empty(32, np.int32 if widened else dtype)
    reduce_columns[(1,)](x, out, op, 32, 32)
    if widened:
        np.testing.assert_array_equal(out, x.astype(np.int64).sum(axis=0))
    else:
        _check(out, _expected(x, op), x, op)


def test_a_nan_loses_to_numbers_as_in_the_interpreter():
    x = _block(16, 32, np.float32)
    x[3, ::3] = np.nan
    x[:, 5] = np.nan  # a column of NaNs only
    compiled = {op: np.empty(32, np.float32) for op in ("max", "min")}
    for op, out in compiled.items():
        reduce_columns[(1,)](x, out, op, 16, 32)
    with knobs.override(NAIAD_BACKEND="interpreter"):
        for op, out in compiled.items():
            expected = np.empty(32, np.float32)
            reduce_columns[(1,)](x, expected, op, 16, 32)
            np.testing.assert_array_equal(out, expected)
    assert np.isnan(compiled["max"][5]) and not np.isnan(compiled["max"][0])


@pytest.mark.parametrize(("a", "r", "c"), [(4, 8, 16), (2, 3 + 1, 64), (8, 16, 32), (1, 2, 16)])
def test_a_reshapes_middle_axis(a, r, c):
    x = _block(a, r * c, np.float32)
    out = np.empty((a, c), np.float32)
    sum_middle_axis[(1,)](x, out, a, r, c)
    want = x.astype(np.float64).reshape(a, r, c).sum(axis=1)
    scale = np.abs(x).astype(np.float64).reshape(a, r, c).sum(axis=1)
    np.testing.assert_array_less(np.abs(out - want), 8 * np.finfo(np.float32).eps * scale)


@pytest.mark.parametrize(("rows", "block"), [(8, 256), (32, 32), (4, 128)])
def test_row_sums_kept_by_lanes_through_a_loop(rows, block):
    x = _block(2 * rows, 8 * block, np.float32)
    out = np.empty(2 * rows, np.float32)
    row_sums_by_lanes[(2,)](x, out, 8 * block, rows, block)
    want = x.astype(np.float64).sum(axis=1)
    scale = np.abs(x).astype(np.float64).sum(axis=1)
    np.testing.assert_array_less(np.abs(out - want), 16 * np.finfo(np.float32).eps * scale)
