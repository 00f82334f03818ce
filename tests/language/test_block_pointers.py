"""tl.make_block_ptr / tl.advance / load and store with boundary_check and padding_option.

As in Triton 3.8, a block pointer is the block of pointers
`base + sum_d (offset_d + arange) * stride_d` with the mask `0 <= coordinate < shape` on the checked
dimensions: out-of-bounds lanes read the padding ("zero" or "nan"; unspecified without one) and are
never written.
"""

import numpy as np
import pytest
from memory_helpers import (
    assert_exact,
    kernel_error,
    poisoned,
    random_array,
    rng,
)

import naiad
import naiad.language as tl


# -------------------------------------------------------------------------------------------------
# 1-D copy with padding (Triton's test_block_copy)
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _block_copy_1d(a_ptr, b_ptr, N, start, BLOCK: tl.constexpr, PADDING: tl.constexpr):
    pid = tl.program_id(0)
    # Only [0, N // 2) of `a` is in bounds: the rest of each block is padding.
    a_block = tl.make_block_ptr(
        base=a_ptr,
        shape=(N // 2,),
        strides=(1,),
        offsets=(start + pid * BLOCK,),
        block_shape=(BLOCK,),
        order=(0,),
    )
    b_block = tl.make_block_ptr(
        base=b_ptr,
        shape=(N,),
        strides=(1,),
        offsets=(pid * BLOCK,),
        block_shape=(BLOCK,),
        order=(0,),
    )
    if PADDING is None:
        a = tl.load(a_block, boundary_check=(0,))
    else:
        a = tl.load(a_block, boundary_check=(0,), padding_option=PADDING)
    tl.store(b_block, a, boundary_check=(0,))


def _check_block_copy_1d(dtype, padding, start, seed):
    gen = rng(seed)
    n, block = 100, 32
    a = random_array(n // 2, dtype, gen)  # only the in-bounds half exists
    b = poisoned(n, dtype)
    _block_copy_1d[(4,)](a, b, n, start, block, padding)
    coords = start + np.arange(n)
    inside = (coords >= 0) & (coords < n // 2)
    expected = np.zeros(n, a.dtype)
    expected[inside] = a[coords[inside]]
    if padding is None:
        assert_exact(b[inside], expected[inside])
        return
    if padding == "nan":
        expected[~inside] = np.nan
    assert_exact(b, expected)


@pytest.mark.parametrize("padding", [None, "zero", "nan"])
@pytest.mark.parametrize("start", [0, -20], ids=["upper", "lower-and-upper"])
def test_block_copy_1d(padding, start):
    _check_block_copy_1d("float32", padding, start, seed=1)


@pytest.mark.full
@pytest.mark.parametrize(
    "dtype",
    ["float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "uint32"],
)
@pytest.mark.parametrize("start", [0, -20])
def test_block_copy_1d_dtypes(dtype, start):
    padding = "zero" if dtype.startswith(("int", "uint")) else "nan"
    _check_block_copy_1d(dtype, padding, start, seed=2)


def test_nan_padding_of_integers_raises():
    a, b = np.ones(50, np.int32), np.zeros(100, np.int32)
    with kernel_error("nan"):
        _block_copy_1d[(1,)](a, b, 100, 0, 32, "nan")


def test_bad_padding_option_raises():
    a, b = np.ones(50, np.float32), np.zeros(100, np.float32)
    with kernel_error("padding_option"):
        _block_copy_1d[(1,)](a, b, 100, 0, 32, "ones")


# -------------------------------------------------------------------------------------------------
# 2-D tiles, row- and column-major, partial tiles at the edges
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _tile_copy_2d(
    src,
    dst,
    M,
    N,
    stride_sm,
    stride_sn,
    stride_dm,
    stride_dn,
    BM: tl.constexpr,
    BN: tl.constexpr,
    ORDER: tl.constexpr,
):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    s = tl.make_block_ptr(
        src, (M, N), (stride_sm, stride_sn), (pid_m * BM, pid_n * BN), (BM, BN), ORDER
    )
    d = tl.make_block_ptr(
        dst, (M, N), (stride_dm, stride_dn), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0)
    )
    x = tl.load(s, boundary_check=(0, 1), padding_option="zero")
    tl.store(d, x * 2, boundary_check=(0, 1))


@pytest.mark.parametrize("layout", ["row-major", "column-major"])
def test_2d_tiles_with_partial_edges(layout):
    gen = rng(3)
    m, n, bm, bn = 37, 45, 16, 32
    x = random_array((m, n), np.float32, gen)
    if layout == "column-major":
        src = np.asfortranarray(x)
        strides, order = (1, m), (0, 1)
    else:
        src = x
        strides, order = (n, 1), (1, 0)
    dst = poisoned((m, n), np.float32)
    grid = (-(-m // bm), -(-n // bn))
    _tile_copy_2d[grid](src, dst, m, n, *strides, n, 1, bm, bn, order)
    assert_exact(dst, x * 2)


@naiad.jit
def _padded_tile(
    src,
    dst,
    M,
    N,
    off_m,
    off_n,
    BM: tl.constexpr,
    BN: tl.constexpr,
    CHECK: tl.constexpr,
    PADDING: tl.constexpr,
):
    s = tl.make_block_ptr(src, (M, N), (N, 1), (off_m, off_n), (BM, BN), (1, 0))
    x = tl.load(s, boundary_check=CHECK, padding_option=PADDING)
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    tl.store(dst + rows * BN + cols, x)


@pytest.mark.parametrize("check", [(0, 1), (1,), 1, (0,)])
def test_boundary_check_only_on_listed_dimensions(check):
    gen = rng(4)
    m, n = 16, 12
    src = random_array((m + 8, n), np.float32, gen)  # rows 16..23 exist: dim 0 may go unchecked
    dst = poisoned((8, 16), np.float32)
    _padded_tile[(1,)](src, dst, m, n, 12, 0, 8, 16, check, "nan")
    dims = (check,) if isinstance(check, int) else check
    rows, cols = 12 + np.arange(8)[:, None], np.arange(16)[None, :]
    flat = src.reshape(-1)
    expected = np.full((8, 16), np.nan, np.float32)
    in_memory = rows * n + cols < flat.size
    expected[np.broadcast_to(in_memory, expected.shape)] = flat[
        np.broadcast_to(rows * n + cols, expected.shape)[np.broadcast_to(in_memory, (8, 16))]
    ]
    masked = np.zeros((8, 16), bool)
    if 0 in dims:
        masked |= np.broadcast_to(rows >= m, (8, 16))
    if 1 in dims:
        masked |= np.broadcast_to(cols >= n, (8, 16))
    expected[masked] = np.nan
    if 1 not in dims:
        # Unchecked columns past N wrap into the next row; past the storage they would fault.
        assert not (~masked & ~np.broadcast_to(in_memory, (8, 16))).any()
    assert_exact(dst, expected)


def test_unchecked_block_outside_the_argument_raises():
    src, dst = np.ones((16, 12), np.float32), np.zeros((8, 16), np.float32)
    with kernel_error(r"out-of-bounds load through argument `src`", IndexError):
        _padded_tile[(1,)](src, dst, 16, 12, 12, 0, 8, 16, (1,), "zero", debug=True)


# -------------------------------------------------------------------------------------------------
# 3-D and advance (negative too)
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _copy_3d(src, dst, A, B, C, BA: tl.constexpr, BB: tl.constexpr, BC: tl.constexpr):
    s = tl.make_block_ptr(src, (A, B, C), (B * C, C, 1), (0, 0, 0), (BA, BB, BC), (2, 1, 0))
    d = tl.make_block_ptr(dst, (A, B, C), (B * C, C, 1), (0, 0, 0), (BA, BB, BC), (2, 1, 0))
    for _i in range(0, A, BA):
        for _j in range(0, C, BC):
            x = tl.load(s, boundary_check=(0, 1, 2), padding_option="zero")
            tl.store(d, x + 1, boundary_check=(0, 1, 2))
            s = tl.advance(s, (0, 0, BC))
            d = tl.advance(d, (0, 0, BC))
        s = tl.advance(s, (BA, 0, -((C + BC - 1) // BC) * BC))
        d = tl.advance(d, (BA, 0, -((C + BC - 1) // BC) * BC))


def test_3d_block_pointers_and_advance():
    gen = rng(5)
    a, b, c = 5, 4, 19
    x = random_array((a, b, c), np.int32, gen)
    dst = poisoned((a, b, c), np.int32)
    _copy_3d[(1,)](x, dst, a, b, c, 2, 4, 8)
    assert_exact(dst, x + 1)


@naiad.jit
def _reverse_row_sums(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # Start at the last column block and walk backwards with a negative advance.
    last = ((N + BN - 1) // BN - 1) * BN
    s = tl.make_block_ptr(src, (M, N), (N, 1), (0, last), (BM, BN), (1, 0))
    acc = tl.zeros((BM,), dtype=tl.float64)
    for _ in range(0, N, BN):
        acc += tl.sum(tl.load(s, boundary_check=(0, 1), padding_option="zero"), axis=1)
        s = s.advance((0, -BN))
    d = tl.make_block_ptr(dst, (M,), (1,), (0,), (BM,), (0,))
    tl.store(d, acc, boundary_check=(0,))


def test_negative_advance():
    gen = rng(6)
    m, n = 13, 70
    x = random_array((m, n), np.float64, gen)
    dst = poisoned(m, np.float64)
    _reverse_row_sums[(1,)](x, dst, m, n, 16, 16)
    np.testing.assert_allclose(dst, x.sum(axis=1), rtol=1e-13)


@naiad.jit
def _block_ptr_matmul(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    a = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (0, K - BK), (BM, BK), (1, 0))
    b = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (K - BK, 0), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(a), tl.load(b), acc, input_precision="ieee")
        a = tl.advance(a, (0, -BK))
        b = tl.advance(b, (-BK, 0))
    c = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(c, acc)


def test_block_pointer_matmul_walking_k_backwards():
    gen = rng(7)
    m, n, k = 16, 32, 64
    a = random_array((m, k), np.float32, gen)
    b = random_array((k, n), np.float32, gen)
    c = poisoned((m, n), np.float32)
    _block_ptr_matmul[(1,)](a, b, c, m, n, k, m, n, 16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)


@naiad.jit
def _store_scalar_through_block_ptr(dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_block_ptr(dst, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(d, 3.5, boundary_check=(0, 1))


def test_store_scalar_value_through_block_pointer():
    dst = poisoned((5, 6), np.float32)
    _store_scalar_through_block_ptr[(1,)](dst, 5, 6, 8, 8)
    assert_exact(dst, np.full((5, 6), 3.5, np.float32))


# -------------------------------------------------------------------------------------------------
# errors
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _block_ptr_with_mask(src, dst):
    s = tl.make_block_ptr(src, (8,), (1,), (0,), (8,), (0,))
    tl.store(dst + tl.arange(0, 8), tl.load(s, mask=tl.arange(0, 8) < 4))


def test_mask_with_block_pointer_raises():
    with kernel_error("`mask` and `other` arguments cannot be specified"):
        _block_ptr_with_mask[(1,)](np.ones(8, np.float32), np.zeros(8, np.float32))


@naiad.jit
def _block_ptr_bad_check(src, dst, CHECK: tl.constexpr):
    s = tl.make_block_ptr(src, (8, 8), (8, 1), (0, 0), (8, 8), (1, 0))
    x = tl.load(s, boundary_check=CHECK)
    tl.store(dst + tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :], x)


def test_boundary_check_dimension_out_of_range_raises():
    with kernel_error("boundary_check"):
        _block_ptr_bad_check[(1,)](np.ones(64, np.float32), np.zeros(64, np.float32), (2,))


@naiad.jit
def _block_ptr_bad_shape(src, BLOCK: tl.constexpr, ORDER: tl.constexpr):
    s = tl.make_block_ptr(src, (8, 8), (8, 1), (0, 0), (BLOCK, 8), ORDER)
    tl.load(s)


def test_non_power_of_two_block_raises():
    with kernel_error("power of 2"):
        _block_ptr_bad_shape[(1,)](np.ones(64, np.float32), 6, (1, 0))


def test_order_that_is_not_a_permutation_raises():
    with kernel_error("order"):
        _block_ptr_bad_shape[(1,)](np.ones(64, np.float32), 8, (1, 1))


@naiad.jit
def _advance_wrong_rank(src):
    s = tl.make_block_ptr(src, (8, 8), (8, 1), (0, 0), (8, 8), (1, 0))
    s = tl.advance(s, (8,))
    tl.load(s)


def test_advance_with_wrong_number_of_offsets_raises():
    with kernel_error("advance"):
        _advance_wrong_rank[(1,)](np.ones(64, np.float32))


@naiad.jit
def _advance_plain_pointer(src):
    p = tl.advance(src + tl.arange(0, 8), (1,))
    tl.load(p)


def test_advance_of_plain_pointer_raises():
    with kernel_error("block pointer", TypeError):
        _advance_plain_pointer[(1,)](np.ones(64, np.float32))


@naiad.jit
def _block_ptr_rank_mismatch(src):
    s = tl.make_block_ptr(src, (8, 8), (8,), (0, 0), (8, 8), (1, 0))
    tl.load(s)


def test_rank_mismatch_raises():
    with kernel_error("same length"):
        _block_ptr_rank_mismatch[(1,)](np.ones(64, np.float32))
