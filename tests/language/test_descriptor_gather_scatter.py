"""Tensor descriptor gather and scatter: rows picked by an index block, columns from an offset.
Rows and columns outside the tensor read as the padding and are never written; Triton's argument
rules (a one-row 2-D block, 8 or more int16/int32 row offsets, 32 bytes of 32-bit or narrower
elements a row) are errors."""

import numpy as np
import pytest
from memory_helpers import assert_exact, kernel_error, poisoned, random_array, rng

import naiad
import naiad.language as tl


@naiad.jit
def _gather(
    src, rows_ptr, dst, M, N, y_offset, R: tl.constexpr, C: tl.constexpr, PAD: tl.constexpr
):
    d = tl.make_tensor_descriptor(src, [M, N], [N, 1], [1, C], padding_option=PAD)
    rows = tl.load(rows_ptr + tl.arange(0, R))
    block = d.gather(rows, y_offset)
    tl.store(dst + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :], block)


def _gathered(x, rows, y_offset, cols, padding):
    """NumPy's gather: `x[rows, y_offset:y_offset+cols]`, padding outside `x`."""
    m, n = x.shape
    fill = np.nan if padding == "nan" else 0
    out = np.full((len(rows), cols), fill, x.dtype)
    for i, r in enumerate(rows):
        for j in range(cols):
            c = y_offset + j
            if 0 <= r < m and 0 <= c < n:
                out[i, j] = x[r, c]
    return out


def _row_offsets(gen, count, m, dtype=np.int32):
    """`count` random rows of an `m`-row tensor, a few of them outside it on either side."""
    rows = gen.integers(0, m, count)
    rows[gen.choice(count, 3, replace=False)] = [-1, m, m + 5]
    return rows.astype(dtype)


@pytest.mark.parametrize(
    "dtype, cols, padding, y_offset",
    [("float32", 8, "zero", 17), ("float16", 16, "nan", -3), ("int8", 32, "zero", 0)],
)
def test_gather_reads_the_indexed_rows(dtype, cols, padding, y_offset):
    gen = rng(11)
    m, n, count = 30, 20, 16
    x = random_array((m, n), dtype, gen)
    rows = _row_offsets(gen, count, m)
    dst = poisoned((count, cols), dtype)
    _gather[(1,)](x, rows, dst, m, n, y_offset, count, cols, padding)
    assert_exact(dst, _gathered(x, rows, y_offset, cols, padding))


def test_gather_takes_int16_row_offsets():
    gen = rng(12)
    m, n = 40, 24
    x = random_array((m, n), np.float32, gen)
    rows = _row_offsets(gen, 8, m, np.int16)
    dst = poisoned((8, 16), np.float32)
    _gather[(1,)](x, rows, dst, m, n, 4, 8, 16, "zero")
    assert_exact(dst, _gathered(x, rows, 4, 16, "zero"))


@naiad.jit
def _scatter(dst, rows_ptr, src, M, N, y_offset, R: tl.constexpr, C: tl.constexpr):
    d = tl.make_tensor_descriptor(dst, [M, N], [N, 1], [1, C])
    rows = tl.load(rows_ptr + tl.arange(0, R))
    value = tl.load(src + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    d.scatter(value, rows, y_offset)


@pytest.mark.parametrize("dtype, cols, y_offset", [("float32", 16, 10), ("bfloat16", 16, -5)])
def test_scatter_writes_only_the_indexed_rows_inside(dtype, cols, y_offset):
    gen = rng(13)
    m, n, count = 24, 18, 16
    # distinct rows (which of two writes to one row lands is unspecified), three outside
    rows = np.concatenate([gen.permutation(m)[: count - 3], [-2, m, m + 1]]).astype(np.int32)
    gen.shuffle(rows)
    value = random_array((count, cols), dtype, gen)
    dst = poisoned((m, n), dtype)
    _scatter[(1,)](dst, rows, value, m, n, y_offset, count, cols)
    expected = poisoned((m, n), dtype)
    for i, r in enumerate(rows):
        for j in range(cols):
            c = y_offset + j
            if 0 <= r < m and 0 <= c < n:
                expected[r, c] = value[i, j]
    assert_exact(dst, expected)


# -------------------------------------------------------------------------------------------------
# Triton's argument rules
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _gather_shaped(src, B0: tl.constexpr, C: tl.constexpr, R: tl.constexpr, ROW_TYPE: tl.constexpr):
    d = tl.make_tensor_descriptor(src, [64, 64], [64, 1], [B0, C])
    d.gather(tl.arange(0, R).to(ROW_TYPE), 0)


@pytest.mark.interpreter_only("the rules are the language's, checked before any back end")
@pytest.mark.parametrize(
    "dtype, block_rows, cols, rows, row_type, match",
    [
        (np.float32, 2, 8, 8, tl.int32, "block is one row"),
        (np.float32, 1, 8, 4, tl.int32, "at least 8 rows"),
        (np.float32, 1, 8, 8, tl.int64, "int16 or int32"),
        (np.float16, 1, 8, 8, tl.int32, "at least 16 columns"),
        (np.float64, 1, 8, 8, tl.int32, "at most 32 bits"),
    ],
)
def test_gather_argument_rules(dtype, block_rows, cols, rows, row_type, match):
    with kernel_error(match):
        _gather_shaped[(1,)](np.ones(64 * 64, dtype), block_rows, cols, rows, row_type)


@naiad.jit
def _scatter_value(dst, KIND: tl.constexpr):
    d = tl.make_tensor_descriptor(dst, [64, 64], [64, 1], [1, 8])
    rows = tl.arange(0, 8)
    if KIND == "shape":
        d.scatter(tl.full((8, 16), 1.0, tl.float32), rows, 0)
    elif KIND == "dtype":
        d.scatter(tl.full((8, 8), 1.0, tl.float16), rows, 0)
    else:
        d.scatter(tl.full((8, 8), 1.0, tl.float32), rows[:, None], 0)


@pytest.mark.interpreter_only("the rules are the language's, checked before any back end")
@pytest.mark.parametrize(
    "kind, match", [("shape", r"\[8, 8\] block"), ("dtype", "fp32"), ("rank", "1-D")]
)
def test_scatter_value_and_offsets_rules(kind, match):
    dst = np.ones(64 * 64, np.float32)
    with kernel_error(match):
        _scatter_value[(1,)](dst, kind)
    np.testing.assert_array_equal(dst, 1.0)
