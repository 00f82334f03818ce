"""tl.make_tensor_descriptor: block loads and stores (partial tiles at the edges are padded on load
and clipped on store) and its argument checks. Gathers, scatters and block atomics have their own
files (test_descriptor_gather_scatter.py, test_descriptor_atomics.py)."""

import numpy as np
import pytest
from memory_helpers import assert_exact, kernel_error, poisoned, random_array, rng

import naiad
import naiad.language as tl


@naiad.jit
def _desc_scale(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr, PADDING: tl.constexpr):
    s = tl.make_tensor_descriptor(
        src, shape=[M, N], strides=[N, 1], block_shape=[BM, BN], padding_option=PADDING
    )
    d = tl.make_tensor_descriptor(dst, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    x = s.load([off_m, off_n])
    d.store([off_m, off_n], x * 3)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_load_store_with_partial_tiles(dtype):
    gen = rng(1)
    m, n, bm, bn = 37, 50, 16, 16
    x = random_array((m, n), dtype, gen)
    dst = poisoned((m, n), dtype)
    _desc_scale[(-(-m // bm), -(-n // bn))](x, dst, m, n, bm, bn, "zero")
    assert_exact(dst, x * x.dtype.type(3))


@pytest.mark.full
@pytest.mark.parametrize(
    "dtype",
    ["bfloat16", "float64", "int8", "int16", "int64", "uint8", "uint16", "uint32", "uint64"],
)
def test_load_store_all_dtypes(dtype):
    gen = rng(2)
    m, n, bm, bn = 21, 40, 8, 32
    x = random_array((m, n), dtype, gen)
    dst = poisoned((m, n), dtype)
    _desc_scale[(-(-m // bm), -(-n // bn))](x, dst, m, n, bm, bn, "zero")
    assert_exact(dst, x * x.dtype.type(3))


@naiad.jit
def _desc_edge_tile(
    src, dst, M, N, off_m, off_n, BM: tl.constexpr, BN: tl.constexpr, PADDING: tl.constexpr
):
    s = tl.make_tensor_descriptor(src, [M, N], [N, 1], [BM, BN], padding_option=PADDING)
    x = tl.load_tensor_descriptor(s, [off_m, off_n])
    tl.store(dst + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], x)


@pytest.mark.parametrize("padding", ["zero", "nan"])
@pytest.mark.parametrize("off_m,off_n", [(8, 16), (-4, -8), (0, 0)])
def test_edge_tiles_read_the_padding(padding, off_m, off_n):
    gen = rng(3)
    m, n = 12, 20
    x = random_array((m, n), np.float32, gen)
    dst = poisoned((8, 16), np.float32)
    _desc_edge_tile[(1,)](x, dst, m, n, off_m, off_n, 8, 16, padding)
    rows = off_m + np.arange(8)[:, None]
    cols = off_n + np.arange(16)[None, :]
    inside = (rows >= 0) & (rows < m) & (cols >= 0) & (cols < n)
    expected = np.full((8, 16), 0.0 if padding == "zero" else np.nan, np.float32)
    expected[inside] = x[
        np.broadcast_to(rows, (8, 16))[inside], np.broadcast_to(cols, (8, 16))[inside]
    ]
    assert_exact(dst, expected)


@naiad.jit
def _desc_store_edge(dst, M, N, off_m, off_n, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(dst, [M, N], [N, 1], [BM, BN])
    value = (tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]).to(tl.float32) + 1
    tl.store_tensor_descriptor(d, [off_m, off_n], value)


@pytest.mark.parametrize("off_m,off_n", [(8, 16), (-4, -8)])
def test_edge_tile_stores_are_clipped(off_m, off_n):
    m, n = 12, 20
    dst = poisoned((m, n), np.float32)
    _desc_store_edge[(1,)](dst, m, n, off_m, off_n, 8, 16)
    expected = np.full((m, n), np.nan, np.float32)
    value = np.arange(8 * 16, dtype=np.float32).reshape(8, 16) + 1
    for i in range(8):
        for j in range(16):
            r, c = off_m + i, off_n + j
            if 0 <= r < m and 0 <= c < n:
                expected[r, c] = value[i, j]
    assert_exact(dst, expected)


@naiad.jit
def _desc_3d(src, dst, A, B, C, BA: tl.constexpr, BB: tl.constexpr, BC: tl.constexpr):
    s = tl.make_tensor_descriptor(src, [A, B, C], [B * C, C, 1], [BA, BB, BC])
    d = tl.make_tensor_descriptor(dst, [A, B, C], [B * C, C, 1], [BA, BB, BC])
    for i in range(0, A, BA):
        for k in range(0, C, BC):
            d.store([i, 0, k], s.load([i, 0, k]) - 1)


def test_3d_descriptor():
    gen = rng(4)
    a, b, c = 3, 4, 20
    x = random_array((a, b, c), np.int32, gen)
    dst = poisoned((a, b, c), np.int32)
    _desc_3d[(1,)](x, dst, a, b, c, 2, 4, 8)
    assert_exact(dst, x - 1)


@naiad.jit
def _desc_properties(src, dst):
    d = tl.make_tensor_descriptor(src, [16, 16], [16, 1], [8, 16])
    tl.static_assert(d.dtype == tl.float16)
    tl.static_assert(d.block_shape[0] == 8 and d.block_shape[1] == 16)
    x = d.load([8, 0])
    tl.static_assert(x.dtype == tl.float16)
    tl.store(dst + tl.arange(0, 8)[:, None] * 16 + tl.arange(0, 16)[None, :], x)


def test_descriptor_properties():
    gen = rng(5)
    x = random_array((16, 16), np.float16, gen)
    dst = poisoned((8, 16), np.float16)
    _desc_properties[(1,)](x, dst)
    assert_exact(dst, x[8:])


# -------------------------------------------------------------------------------------------------
# errors
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _desc_make(
    src,
    S0: tl.constexpr,
    S1: tl.constexpr,
    B0: tl.constexpr,
    B1: tl.constexpr,
    PADDING: tl.constexpr,
):
    d = tl.make_tensor_descriptor(src, [16, 16], [S0, S1], [B0, B1], padding_option=PADDING)
    d.load([0, 0])


def test_last_stride_must_be_one():
    with kernel_error("last dim must be 1"):
        _desc_make[(1,)](np.ones(256, np.float32), 1, 16, 8, 8, "zero")


def test_block_needs_16_bytes_in_the_last_dimension():
    with kernel_error("at least 16 bytes"):
        _desc_make[(1,)](np.ones(256, np.float32), 16, 1, 8, 2, "zero")
    with kernel_error("at least 16 bytes"):
        _desc_make[(1,)](np.ones(256, np.float16), 16, 1, 8, 4, "zero")
    _desc_make[(1,)](np.ones(256, np.float16), 16, 1, 8, 8, "zero")


def test_nan_padding_of_integers_raises():
    with kernel_error("nan"):
        _desc_make[(1,)](np.ones(256, np.int32), 16, 1, 8, 8, "nan")


def test_bad_padding_raises():
    with kernel_error("padding"):
        _desc_make[(1,)](np.ones(256, np.float32), 16, 1, 8, 8, "ones")


@naiad.jit
def _desc_bad_offsets(src):
    d = tl.make_tensor_descriptor(src, [16, 16], [16, 1], [8, 8])
    d.load([0])


def test_wrong_number_of_offsets_raises():
    with kernel_error("offsets"):
        _desc_bad_offsets[(1,)](np.ones(256, np.float32))


@naiad.jit
def _desc_store_wrong_shape(dst):
    d = tl.make_tensor_descriptor(dst, [16, 16], [16, 1], [8, 8])
    d.store([0, 0], tl.zeros((1, 8), tl.float32))  # broadcastable, but Triton wants [8, 8]


def test_store_of_wrong_shape_raises():
    with kernel_error("block shape"):
        _desc_store_wrong_shape[(1,)](np.ones(256, np.float32))
