"""`cpu-carried-reductions` (backends/cpu/carried_reductions.py): a block a loop carries only to
reduce it after the loop is reduced step by step in the loop, on the CPU.

Each kernel runs compiled (`NAIAD_BACKEND=cpu`) on seeded random data against NumPy (sums
within a few ulp of their magnitude, extrema and integers exactly); the CPU's TTGIR shows
whether the rewrite happened: the reduction inside the loop and no block carried, or, where
it is not legal, the kernel as written.
"""

import numpy as np
import pytest
from fixture_kernels.propagating_extrema import maximum, minimum

import naiad
import naiad.language as tl
from naiad import knobs


@naiad.jit
def _multiply(a, b):
    return a * b


@naiad.jit
def accumulate(x_ptr, out_ptr, n, OP: tl.constexpr, START: tl.constexpr, OTHER: tl.constexpr,
               BLOCK: tl.constexpr):  # fmt: skip
    row = tl.program_id(0)
    acc = tl.full([BLOCK], START, x_ptr.dtype.element_ty)
    for begin in range(0, n, BLOCK):
        cols = begin + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * n + cols, mask=cols < n, other=OTHER)
        if OP == "sum":
            acc += v
        elif OP == "prod":
            acc *= v
        elif OP == "max":
            acc = tl.maximum(acc, v)
        elif OP == "select max":  # naiad.ops' amax of integers
            acc = tl.where(v > acc, v, acc)
        else:
            acc = acc ^ v
    if OP == "sum":
        result = tl.sum(acc, axis=0)
    elif OP == "prod":
        result = tl.reduce(acc, 0, _multiply)
    elif OP == "max" or OP == "select max":
        result = tl.max(acc, axis=0)
    else:
        result = tl.xor_sum(acc, axis=0)
    tl.store(out_ptr + row, result)


@naiad.jit
def selected_extremum(x_ptr, out_ptr, n, OP: tl.constexpr, ROWS: tl.constexpr,
                      BLOCK: tl.constexpr):  # fmt: skip
    """naiad.ops' amax / amin: a NaN-propagating extremum kept by a select in the loop, then
    reduced by maximumf / minimumf ("max", "min"; "max then maxnum": by tl.max, which lets
    numbers win over NaN, so the select's lanes may not be reduced in the loop)."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    start = float("inf") if OP == "min" else float("-inf")
    acc = tl.full([ROWS, BLOCK], start, tl.float32)
    for begin in range(0, n, BLOCK):
        cols = begin + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=cols[None, :] < n, other=start)
        if OP == "min":
            acc = tl.where((acc > v) | (v != v), v, acc)  # the compare the other way round
        else:
            acc = tl.where((v > acc) | (v != v), v, acc)
    if OP == "min":
        result = tl.reduce(acc, 1, minimum)
    elif OP == "max":
        result = tl.reduce(acc, 1, maximum)
    else:
        result = tl.max(acc, 1)
    tl.store(out_ptr + rows, result)


@naiad.jit
def row_sums_of_tiles(x_ptr, out_ptr, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """A [ROWS, BLOCK] block carried and summed along its rows after the loop."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    acc = tl.zeros([ROWS, BLOCK], tl.float32)
    for begin in range(0, n, BLOCK):
        acc += tl.load(x_ptr + rows[:, None] * n + begin + tl.arange(0, BLOCK)[None, :])
    tl.store(out_ptr + rows, tl.sum(acc, axis=1))


@naiad.jit
def sum_and_keep(x_ptr, out_ptr, kept_ptr, n, BLOCK: tl.constexpr):
    """The block is stored too after the loop: not rewritten."""
    acc = tl.zeros([BLOCK], tl.float32)
    for begin in range(0, n, BLOCK):
        acc += tl.load(x_ptr + begin + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.sum(acc, axis=0))
    tl.store(kept_ptr + tl.arange(0, BLOCK), acc)


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


def _rows(rows, n, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-(2**20), 2**20, size=(rows, n)).astype(dtype)
    return rng.standard_normal((rows, n)).astype(dtype)


def _carries(kernel, block: str) -> bool:
    """Whether the loop of `kernel`'s CPU TTGIR carries a `block` (a type, `tensor<128xf32>`),
    and so was left as written."""
    (loop,) = [line for line in kernel.asm["ttgir"].splitlines() if "scf.for" in line]
    return block in loop


@pytest.mark.parametrize(("op", "dtype", "start"), [
    ("sum", np.float32, 0.0), ("sum", np.float32, 0.25), ("max", np.float32, float("-inf")),
    ("xor", np.int32, 0), ("sum", np.int64, 3), ("prod", np.float32, 1.0),
    ("select max", np.int32, -(2**21)), ("select max", np.int64, -(2**21)),
])  # fmt: skip
@pytest.mark.parametrize("n", [700, 1024, 64])
def test_carried_blocks_reduced_in_the_loop(op, dtype, start, n):
    x = _rows(4, n, dtype, n)
    if op == "prod":
        x = 1 + x / 64
    out = np.empty(4, dtype)
    other = {"max": float("-inf"), "prod": 1, "select max": start}.get(op, 0)
    kernel = accumulate[(4,)](x, out, n, op, start, other, 128)
    block = np.full((4, 128), start, dtype)
    if op == "sum":
        if np.issubdtype(dtype, np.integer):
            np.testing.assert_array_equal(out, x.sum(axis=1) + block.sum(axis=1))
        else:
            want = x.astype(np.float64).sum(axis=1) + block.sum(axis=1)
            bound = 8 * np.finfo(dtype).eps * (np.abs(x).astype(np.float64).sum(axis=1) + 32)
            np.testing.assert_array_less(np.abs(out - want), bound)
    elif op == "prod":
        np.testing.assert_allclose(out, x.astype(np.float64).prod(axis=1), rtol=4e-5)
    elif op in ("max", "select max"):
        np.testing.assert_array_equal(out, x.max(axis=1))
    else:
        np.testing.assert_array_equal(out, np.bitwise_xor.reduce(x, axis=1))
    assert not _carries(kernel, "tensor<128x")


def test_a_tile_carried_and_summed_along_its_rows():
    x = _rows(16, 512, np.float32, 5)
    out = np.empty(16, np.float32)
    kernel = row_sums_of_tiles[(2,)](x, out, 512, 8, 64)
    want = x.astype(np.float64).sum(axis=1)
    np.testing.assert_array_less(np.abs(out - want), 8e-6 * np.abs(x).sum(axis=1))
    assert not _carries(kernel, "tensor<8x64xf32>")


def test_a_block_read_after_the_loop_stays_carried():
    x = _rows(1, 256, np.float32, 6)[0]
    out, kept = np.empty(1, np.float32), np.empty(64, np.float32)
    kernel = sum_and_keep[(1,)](x, out, kept, 256, 64)
    np.testing.assert_allclose(kept, x.reshape(4, 64).sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-5)
    assert _carries(kernel, "tensor<64xf32>")


def _with_nans(rows, n, seed):
    """Random rows, one with NaNs of both signs, one of negative numbers and a NaN, one all
    NaN, one of zeros of both signs."""
    x = _rows(rows, n, np.float32, seed)
    negative_nan = np.array([0xFFC00001], np.uint32).view(np.float32)[0]
    x[1, [3, n - 2]] = np.nan, negative_nan
    x[2] = -np.abs(x[2])
    x[2, n // 2] = negative_nan
    x[3] = np.nan
    x[4] = np.where(np.arange(n) % 3 == 0, 0.0, -0.0)
    return x


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize(("n", "rows"), [(1024, 1), (700, 1), (1024, 8), (96, 8)])
def test_a_nan_propagating_select_is_reduced_in_the_loop(op, n, rows):
    x = _with_nans(8, n, n + rows)
    out = np.full(8, 1.5, np.float32)
    kernel = selected_extremum[(8 // rows,)](x, out, n, op, rows, 128)
    want = x.max(axis=1) if op == "max" else x.min(axis=1)  # NaN wins, as torch's amax
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    np.testing.assert_array_equal(out[~np.isnan(want)], want[~np.isnan(want)])  # -0 == +0
    assert not _carries(kernel, "x128xf32>" if rows > 1 else "tensor<128x")


def test_a_select_reduced_by_a_maximum_that_drops_nan_stays_carried():
    """tl.max lets numbers win over NaN: lanes the select holds at NaN must reach it as they
    are, so the loop keeps the block."""
    x = _with_nans(8, 256, 3)
    out = np.full(8, 1.5, np.float32)
    kernel = selected_extremum[(8,)](x, out, 256, "max then maxnum", 1, 128)
    lanes = np.where(np.isnan(x[:, :128]) | np.isnan(x[:, 128:]), np.nan,
                     np.maximum(x[:, :128], x[:, 128:]))  # fmt: skip
    np.testing.assert_array_equal(out, np.fmax.reduce(lanes, axis=1))
    assert _carries(kernel, "tensor<1x128xf32>")
