"""A tile loaded through a block pointer is copied row by row on the CPU (codegen/row_copies.py):
rows up to INLINE_COPY_BYTES by `llvm.memcpy.inline`, wider ones by the element loop. Values
against NumPy for 1-, 2-, 4- and 8-byte elements, with the window's last rows past the tensor
(a partial copy, zeros below) and one launch per start row, on seeded random data."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.backends.cpu.codegen.row_copies import INLINE_COPY_BYTES


@naiad.jit
def tile_column_sums(src, dst, M, N, row0, BM: tl.constexpr, BN: tl.constexpr):
    """dst[j] = Σ_i src[row0 + i, j] over the BM x BN window (rows past M read as zero)."""
    window = tl.make_block_ptr(src, (M, N), (N, 1), (row0, 0), (BM, BN), (1, 0))
    x = tl.load(window, boundary_check=(0,), padding_option="zero")
    tl.store(dst + tl.arange(0, BN), tl.sum(x, axis=0))


@pytest.mark.parametrize(
    "dtype, cols",
    [(np.int8, 64), (np.float16, 64), (np.float32, 16), (np.float64, 32), (np.float32, 512)],
)
def test_a_windows_rows_arrive_whole(cpu_fresh_cache, dtype, cols):
    gen = np.random.default_rng(18)
    rows, block_rows = 11, 8
    # Multiples of 1/8 (integers for int8): every sum is exact in every type, in any order.
    src = gen.integers(-9, 10, (rows, cols)).astype(dtype)
    if not np.issubdtype(dtype, np.integer):
        src /= dtype(8)
    by_row = cols * src.itemsize <= INLINE_COPY_BYTES
    for row0 in (0, 3, 6, 10):  # whole, whole, two rows past the end, seven past
        dst = np.full(cols, 99, dtype)
        compiled = tile_column_sums.warmup(
            src, dst, rows, cols, row0, block_rows, cols, grid=(1,), target="cpu"
        )
        assert ("llvm.memcpy.inline" in compiled.asm["llir"]) == by_row
        tile_column_sums[(1,)](src, dst, rows, cols, row0, block_rows, cols)
        expected = src[row0 : row0 + block_rows].astype(np.float64).sum(axis=0)
        np.testing.assert_array_equal(dst, expected.astype(dtype))


@naiad.jit
def store_transposed(src, dst, M, N, row0, BM: tl.constexpr, BN: tl.constexpr):
    """The transpose of src's BN x BM tile into dst's window of BM rows from row0 (rows past M
    not written)."""
    x = tl.load(src + tl.arange(0, BN)[:, None] * BM + tl.arange(0, BM)[None, :])
    window = tl.make_block_ptr(dst, (M, N), (N, 1), (row0, 0), (BM, BN), (1, 0))
    tl.store(window, tl.trans(x), boundary_check=(0,))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int64])
def test_a_tile_stored_from_scratch_lands_row_by_row(cpu_fresh_cache, dtype):
    """A scratch buffer (the transpose) stored into a window of the kernel's memory, whole or
    with its last rows past the end: the rows inside arrive, nothing else is written."""
    gen = np.random.default_rng(19)
    rows, cols, block_rows = 10, 16, 8
    src = gen.integers(-1000, 1000, (cols, block_rows)).astype(dtype)
    for row0 in (0, 2, 5):
        dst = np.full((rows, cols), 77, dtype)
        store_transposed[(1,)](src, dst, rows, cols, row0, block_rows, cols)
        expected = np.full((rows, cols), 77, dtype)
        expected[row0 : row0 + block_rows] = src.T[: rows - row0]
        np.testing.assert_array_equal(dst, expected)
