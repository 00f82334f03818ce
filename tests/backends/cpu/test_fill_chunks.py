"""Fills of a repeated byte on the CPU (codegen/views.py): up to FILL_CHUNK_BYTES stored inline,
a larger power of two as a loop calling `naiad.fill.<byte>`, never the C library's memset.
Values against NumPy, on seeded random data around the filled block (issue 18: a 16 KiB fill
stored inline was 512 stores in one block, a third of tutorial 06's object code)."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.backends.cpu.codegen.views import FILL_CHUNK_BYTES


@naiad.jit
def store_full(out_ptr, n_cols, VALUE: tl.constexpr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """One ROWS x COLS block of VALUE per program, side by side along the columns."""
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.program_id(0) * COLS + tl.arange(0, COLS)[None, :]
    tl.store(out_ptr + rows * n_cols + cols, tl.full([ROWS, COLS], VALUE, out_ptr.dtype.element_ty))


@naiad.jit
def sum_blocks(x_ptr, out_ptr, n_blocks, ROWS: tl.constexpr, COLS: tl.constexpr):
    """out = the sum of n_blocks ROWS x COLS blocks, from a zeroed accumulator."""
    offs = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    acc = tl.zeros([ROWS, COLS], dtype=tl.float32)
    for i in range(n_blocks):
        acc += tl.load(x_ptr + i * ROWS * COLS + offs)
    tl.store(out_ptr + offs, acc)


@pytest.mark.parametrize(
    "dtype, value, rows",
    [(np.float32, 0.0, 64), (np.int32, -1, 64), (np.float32, 0.0, 16)],
    ids=["zeros-16KiB", "minus-one-16KiB", "zeros-4KiB"],
)
def test_a_filled_block_holds_its_value_and_nothing_else_changes(
    cpu_fresh_cache, dtype, value, rows
):
    cols, programs = 64, 3
    rng = np.random.default_rng(18)
    out = (rng.standard_normal((rows, cols * programs)) * 100).astype(dtype)
    before = out.copy()
    kernel = store_full[(2,)](out, cols * programs, VALUE=value, ROWS=rows, COLS=cols)
    np.testing.assert_array_equal(out[:, : 2 * cols], np.full((rows, 2 * cols), value, dtype))
    np.testing.assert_array_equal(out[:, 2 * cols :], before[:, 2 * cols :])
    chunked = rows * cols * 4 > FILL_CHUNK_BYTES
    byte = 0 if value == 0 else 255
    assert (f"@naiad.fill.{byte}" in kernel.asm["llir"]) == chunked
    assert "memset" not in kernel.asm["asm"]


def test_a_zeroed_accumulator_sums_the_blocks(cpu_fresh_cache):
    rows, cols, n = 64, 64, 5
    x = np.random.default_rng(19).standard_normal((n, rows, cols)).astype(np.float32)
    out = np.full((rows, cols), np.nan, np.float32)
    kernel = sum_blocks[(1,)](x, out, n, ROWS=rows, COLS=cols)
    np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-5)
    assert "@naiad.fill.0" in kernel.asm["llir"] and "memset" not in kernel.asm["asm"]
