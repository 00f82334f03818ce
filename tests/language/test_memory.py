"""tl.load / tl.store through pointers: masks, `other`, scalars, bools, strides, gathers, hints,
aliasing, and debug mode's bounds checking (Triton's semantics; NumPy is the reference)."""

import numpy as np
import pytest
import torch
from memory_helpers import (
    ALL_DTYPES,
    NP_DTYPES,
    assert_exact,
    kernel_error,
    poisoned,
    random_array,
    rng,
)

import naiad
import naiad.language as tl


# -------------------------------------------------------------------------------------------------
# masked load / store
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _masked_copy(src, dst_full, dst_masked, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(src + offs, mask=mask, other=OTHER)
    tl.store(dst_full + offs, x)
    tl.store(dst_masked + offs, x, mask=mask)


def _check_masked_copy(dtype, seed):
    gen = rng(seed)
    n, block, grid = 70, 32, 3
    src = random_array(n, dtype, gen)  # exactly n elements: the masked tail is past the end
    other = 3 if dtype not in ("float16", "bfloat16", "float32", "float64") else -2.5
    dst_full = poisoned(grid * block, dtype)
    dst_masked = poisoned(n, dtype)
    _masked_copy[(grid,)](src, dst_full, dst_masked, n, other, block)
    expected = np.concatenate([src, np.full(grid * block - n, other).astype(src.dtype)])
    assert_exact(dst_full, expected)
    assert_exact(dst_masked, src)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "uint32", "int64"])
def test_masked_load_store(dtype):
    _check_masked_copy(dtype, seed=1)


@pytest.mark.full
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_masked_load_store_all_dtypes(dtype):
    _check_masked_copy(dtype, seed=2)


@naiad.jit
def _masked_rows(
    src,
    other_row,
    other_col,
    dst_row,
    dst_col,
    dst_scalar,
    M: tl.constexpr,
    N: tl.constexpr,
    m_valid,
    n_valid,
):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    mask = (rows < m_valid) & (cols < n_valid)
    ptrs = src + rows * N + cols
    row = tl.load(other_row + cols)  # [1, N] other, broadcast down the rows
    col = tl.load(other_col + rows)  # [M, 1] other, broadcast along the columns
    scalar = tl.load(other_col + M - 1)  # a loaded scalar as other
    out = rows * N + cols
    tl.store(dst_row + out, tl.load(ptrs, mask=mask, other=row))
    tl.store(dst_col + out, tl.load(ptrs, mask=mask, other=col))
    tl.store(dst_scalar + out, tl.load(ptrs, mask=mask, other=scalar))


def test_other_broadcasts_to_the_pointer_shape():
    gen = rng(3)
    m, n = 8, 16
    src = random_array((m, n), np.float32, gen)
    other_row = random_array(n, np.float32, gen)
    other_col = random_array(m, np.float32, gen)
    outs = [poisoned((m, n), np.float32) for _ in range(3)]
    _masked_rows[(1,)](src, other_row, other_col, *outs, m, n, 5, 11)
    mask = (np.arange(m)[:, None] < 5) & (np.arange(n)[None, :] < 11)
    assert_exact(outs[0], np.where(mask, src, other_row[None, :]))
    assert_exact(outs[1], np.where(mask, src, other_col[:, None]))
    assert_exact(outs[2], np.where(mask, src, other_col[-1]))


@naiad.jit
def _mask_widens_pointer(src, dst, M: tl.constexpr, N: tl.constexpr, m_valid):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    # The pointer is [1, N], the mask [M, 1]: Triton broadcasts the pointer to [M, N].
    x = tl.load(src + cols, mask=rows < m_valid, other=-1.0)
    tl.store(dst + rows * N + cols, x)


def test_load_broadcasts_the_pointer_to_the_mask():
    gen = rng(4)
    src = random_array(8, np.float32, gen)
    dst = poisoned((4, 8), np.float32)
    _mask_widens_pointer[(1,)](src, dst, 4, 8, 3)
    expected = np.where(np.arange(4)[:, None] < 3, src[None, :], np.float32(-1.0))
    assert_exact(dst, expected)


@naiad.jit
def _other_converts(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(src + offs, mask=offs < n, other=7.9)  # fp32 other into an int16 block: truncated
    tl.store(dst + offs, x)


def test_other_is_converted_to_the_element_type():
    gen = rng(5)
    src = random_array(5, np.int16, gen)
    dst = poisoned(8, np.int16)
    _other_converts[(1,)](src, dst, 5, 8)
    assert_exact(dst, np.concatenate([src, np.full(3, 7, np.int16)]))


@naiad.jit
def _store_constant(dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, 7, mask=offs < n)


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint16", "bfloat16"])
def test_store_a_python_constant(dtype):
    dst = poisoned(50, dtype)
    _store_constant[(4,)](dst, 50, 16)
    assert_exact(dst, np.full(50, 7).astype(NP_DTYPES[dtype]))


# -------------------------------------------------------------------------------------------------
# scalar pointers
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _scalar_access(src, dst, n, index):
    x = tl.load(src + 3)
    tl.store(dst, x * 2)
    # A masked scalar load: the lane is off, so the (out-of-bounds) address is never read.
    y = tl.load(src + index, mask=index < n, other=-7.0)
    tl.store(dst + 1, y)
    z = tl.load(src + 1, mask=n > 1, other=-7.0)
    tl.store(dst + 2, z)
    tl.store(dst + index, z, mask=index < n)  # masked-off scalar store: nothing is written


def test_scalar_pointers():
    gen = rng(6)
    src = random_array(6, np.float32, gen)
    dst = poisoned(3, np.float32)
    _scalar_access[(1,)](src, dst, 6, 1000)
    assert_exact(dst, np.array([src[3] * 2, -7.0, src[1]], np.float32))


@naiad.jit
def _scalar_load_with_block_mask(src, dst):
    offs = tl.arange(0, 4)
    tl.store(dst, tl.load(src, mask=offs < 2))


def test_scalar_pointer_with_block_mask_raises():
    src, dst = np.ones(4, np.float32), np.zeros(1, np.float32)
    with kernel_error("Mask argument cannot be block type if pointer argument is not a block"):
        _scalar_load_with_block_mask[(1,)](src, dst)


@naiad.jit
def _scalar_store_of_block(dst):
    tl.store(dst, tl.arange(0, 4))


def test_scalar_pointer_store_of_block_raises():
    with kernel_error("Value argument cannot be block type if pointer argument is not a block"):
        _scalar_store_of_block[(1,)](np.zeros(4, np.int32))


# -------------------------------------------------------------------------------------------------
# bool (int1) arrays: stored as one byte each
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _bool_ops(a, b, out_xor, out_masked, out_cmp, x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(a + offs, mask=mask, other=True)
    q = tl.load(b + offs, mask=mask, other=False)
    tl.store(out_xor + offs, p ^ q, mask=mask)
    tl.store(out_masked + offs, p & ~q)
    tl.store(out_cmp + offs, tl.load(x + offs, mask=mask, other=0.0) > 0, mask=mask)


def test_bool_arrays():
    gen = rng(7)
    n, block = 13, 16
    a, b = random_array(n, bool, gen), random_array(n, bool, gen)
    x = random_array(n, np.float32, gen)
    out_xor, out_masked, out_cmp = poisoned(n, bool), poisoned(block, bool), poisoned(n, bool)
    _bool_ops[(1,)](a, b, out_xor, out_masked, out_cmp, x, n, block)
    assert_exact(out_xor, a ^ b)
    pad_a, pad_b = np.ones(block, bool), np.zeros(block, bool)
    pad_a[:n], pad_b[:n] = a, b
    assert_exact(out_masked, pad_a & ~pad_b)
    assert_exact(out_cmp, x > 0)


def test_bool_torch_tensors():
    gen = rng(8)
    a = torch.from_numpy(random_array(13, bool, gen))
    b = torch.from_numpy(random_array(13, bool, gen))
    x = torch.from_numpy(random_array(13, np.float32, gen))
    outs = [torch.from_numpy(poisoned(n, bool)) for n in (13, 16, 13)]
    _bool_ops[(1,)](a, b, *outs, x, 13, 16)
    assert_exact(outs[0].numpy(), a.numpy() ^ b.numpy())
    assert_exact(outs[2].numpy(), x.numpy() > 0)


# -------------------------------------------------------------------------------------------------
# strided and indirect accesses
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _strided(src, dst, src_stride, dst_stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs * dst_stride, tl.load(src + offs * src_stride))


@pytest.mark.parametrize("src_stride,dst_stride", [(3, 1), (1, 2), (4, 3), (0, 1)])
def test_strided_load_store(src_stride, dst_stride):
    gen = rng(9)
    block = 32
    src = random_array(max(1, (block - 1) * src_stride + 1), np.float32, gen)
    dst = poisoned((block - 1) * dst_stride + 1, np.float32)
    expected = dst.copy()
    _strided[(1,)](src, dst, src_stride, dst_stride, block)
    expected[::dst_stride] = src[::src_stride][:block] if src_stride else src[0]
    assert_exact(dst, expected)


@naiad.jit
def _indirect(src, gather_idx, scatter_idx, dst, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    g = tl.load(gather_idx + offs)
    s = tl.load(scatter_idx + offs)
    tl.store(dst + s, tl.load(src + g) + 1)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_indirect_load_store(dtype, index_dtype):
    gen = rng(10)
    block = 64
    src = random_array(100, dtype, gen)
    gather_idx = gen.integers(0, 100, block).astype(index_dtype)  # repeats allowed
    scatter_idx = gen.permutation(block).astype(index_dtype)
    dst = poisoned(block, dtype)
    _indirect[(1,)](src, gather_idx, scatter_idx, dst, block)
    expected = np.empty(block, src.dtype)
    expected[scatter_idx] = src[gather_idx] + src.dtype.type(1)
    assert_exact(dst, expected)


@naiad.jit
def _narrow_offsets(src, dst):
    offs = tl.arange(0, 256)
    # uint8 offsets 128..255 are zero-extended (never negative), as Triton's addptr does.
    x = tl.load(src + offs.to(tl.uint8))
    # int8 offsets are sign-extended: -128..127 around the middle of the array.
    y = tl.load(src + 128 + offs.to(tl.int8))
    tl.store(dst + offs, x + y)


def test_narrow_integer_offsets():
    gen = rng(11)
    src = random_array(256, np.int32, gen)
    dst = poisoned(256, np.int32)
    _narrow_offsets[(1,)](src, dst)
    offs = np.arange(256)
    assert_exact(dst, src + src[128 + offs.astype(np.int8).astype(np.int64)])


# -------------------------------------------------------------------------------------------------
# cache modifiers, eviction policies, volatile
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _hinted(
    src,
    dst,
    LOAD_CACHE: tl.constexpr,
    STORE_CACHE: tl.constexpr,
    EVICTION: tl.constexpr,
    VOLATILE: tl.constexpr,
):
    offs = tl.arange(0, 16)
    x = tl.load(src + offs, cache_modifier=LOAD_CACHE, eviction_policy=EVICTION, volatile=VOLATILE)
    tl.store(dst + offs, x, cache_modifier=STORE_CACHE, eviction_policy=EVICTION)


@pytest.mark.parametrize(
    "load_cache,store_cache,eviction,volatile",
    [
        ("", "", "", False),
        (".ca", ".wb", "evict_first", False),
        (".cg", ".cg", "evict_last", True),
        (".cv", ".cs", "", False),
        ("", ".wt", "evict_first", False),
    ],
)
def test_cache_and_eviction_hints_are_accepted(load_cache, store_cache, eviction, volatile):
    gen = rng(12)
    src, dst = random_array(16, np.float32, gen), poisoned(16, np.float32)
    _hinted[(1,)](src, dst, load_cache, store_cache, eviction, volatile)
    assert_exact(dst, src)


@pytest.mark.parametrize(
    "load_cache,store_cache,eviction,what",
    [
        (".wb", "", "", "cache_modifier"),  # a store-only modifier on a load
        ("", ".ca", "", "cache_modifier"),  # a load-only modifier on a store
        ("", "", "evict_normal", "eviction"),  # Triton knows evict_first and evict_last only
        ("", "", "evict_everything", "eviction"),
    ],
)
def test_bad_cache_and_eviction_hints_raise(load_cache, store_cache, eviction, what):
    src, dst = np.ones(16, np.float32), np.zeros(16, np.float32)
    with kernel_error(what):
        _hinted[(1,)](src, dst, load_cache, store_cache, eviction, False)


# -------------------------------------------------------------------------------------------------
# argument errors
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _other_without_mask(src, dst):
    offs = tl.arange(0, 8)
    tl.store(dst + offs, tl.load(src + offs, other=0.0))


def test_other_without_mask_raises():
    with kernel_error("`other` cannot be provided without `mask`") as info:
        _other_without_mask[(1,)](np.ones(8, np.float32), np.zeros(8, np.float32))
    assert "tl.load(src + offs, other=0.0)" in str(info.value)


@naiad.jit
def _non_bool_mask(src, dst):
    offs = tl.arange(0, 8)
    tl.store(dst + offs, tl.load(src + offs, mask=offs))


def test_non_bool_mask_raises():
    with kernel_error("int1"):
        _non_bool_mask[(1,)](np.ones(8, np.float32), np.zeros(8, np.float32))


@naiad.jit
def _store_to_const(src: tl.const, dst):
    offs = tl.arange(0, 8)
    tl.store(dst + offs, tl.load(src + offs))
    tl.store(src + offs, 1.0)


def test_store_to_const_pointer_raises():
    src, dst = np.ones(8, np.float32), poisoned(8, np.float32)
    with kernel_error("Cannot store to a constant pointer"):
        _store_to_const[(1,)](src, dst)
    np.testing.assert_array_equal(src, 1.0)


@naiad.jit
def _atomic_on_const(p: tl.const):
    tl.atomic_add(p, 1.0)


def test_atomic_on_const_pointer_raises():
    with kernel_error("Cannot store to a constant pointer"):
        _atomic_on_const[(1,)](np.ones(1, np.float32))


@naiad.jit
def _boundary_check_on_pointer(src, dst):
    offs = tl.arange(0, 8)
    tl.store(dst + offs, tl.load(src + offs, boundary_check=(0,)))


def test_boundary_check_on_plain_pointer_raises():
    with kernel_error("boundary_check"):
        _boundary_check_on_pointer[(1,)](np.ones(8, np.float32), np.zeros(8, np.float32))


@naiad.jit
def _load_non_pointer(x, dst):
    tl.store(dst, tl.load(x))


def test_load_of_non_pointer_raises():
    with kernel_error("Unsupported ptr type"):
        _load_non_pointer[(1,)](3, np.zeros(1, np.int32))


# -------------------------------------------------------------------------------------------------
# aliasing
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _shift(src, dst, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(src + offs)
    tl.store(dst + offs, x + 1)


def test_same_array_passed_twice():
    gen = rng(13)
    a = random_array(32, np.int32, gen)
    expected = a + 1
    _shift[(1,)](a, a, 32)
    assert_exact(a, expected)


def test_overlapping_views():
    gen = rng(14)
    a = random_array(33, np.float32, gen)
    expected = a.copy()
    expected[1:] = a[:-1] + 1  # the whole block is loaded before it is stored
    _shift[(1,)](a[:-1], a[1:], 32)
    assert_exact(a, expected)


def test_overlapping_torch_views():
    gen = rng(15)
    t = torch.from_numpy(random_array(33, np.float32, gen))
    expected = t.numpy().copy()
    expected[1:] = expected[:-1] + 1
    _shift[(1,)](t[:-1], t[1:], 32)
    assert_exact(t.numpy(), expected)


@naiad.jit
def _double_in_place(p, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(p + offs, tl.load(p + offs, mask=mask) * 2, mask=mask)


def test_load_store_same_pointer_many_programs():
    gen = rng(16)
    a = random_array(1000, np.float32, gen)
    expected = a * 2
    _double_in_place[(64,)](a, 1000, 16)
    assert_exact(a, expected)


# -------------------------------------------------------------------------------------------------
# bounds checking
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _oob_load(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(src + offs, mask=offs < n)
    tl.store(dst + offs, x)


def test_out_of_bounds_load_names_argument_offsets_and_line(backend):
    src, dst = np.ones(10, np.float32), np.zeros(16, np.float32)
    with kernel_error(r"out-of-bounds load through argument `src`", IndexError) as info:
        _oob_load[(1,)](src, dst, 12, 16, debug=True)
    error = info.value
    if backend == "interpreter":  # compiled checks report no offsets (docs/cpu.md)
        assert "[10, 11]" in str(error)
    assert error.location.filename == __file__
    assert "tl.load(src + offs, mask=offs < n)" in error.location.source_line


def test_masked_tail_one_past_the_end_is_never_touched():
    gen = rng(17)
    src, dst = random_array(10, np.float32, gen), poisoned(16, np.float32)
    _oob_load[(1,)](src, dst, 10, 16)  # lanes 10..15 point past the end, all masked off
    assert_exact(dst[:10], src)


@naiad.jit
def _oob_store(dst, start, n, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    tl.store(dst + offs, 1.5, mask=offs < n)


def test_out_of_bounds_store_raises_and_writes_nothing(backend):
    dst = poisoned(8, np.float32)
    with kernel_error(r"out-of-bounds store through argument `dst`", IndexError) as info:
        _oob_store[(1,)](dst, 0, 10, 16, debug=True)
    assert np.isnan(dst).all()
    if backend == "interpreter":
        assert "[8, 9]" in str(info.value)


def test_negative_offset_raises(backend):
    dst = poisoned(8, np.float32)
    with kernel_error(r"out-of-bounds store through argument `dst`", IndexError) as info:
        _oob_store[(1,)](dst, -2, 8, 8, debug=True)
    if backend == "interpreter":
        assert "[-2, -1]" in str(info.value)


def test_in_bounds_store_with_masked_tail():
    dst = poisoned(8, np.float32)
    _oob_store[(1,)](dst, 0, 8, 16)
    assert_exact(dst, np.full(8, 1.5, np.float32))


@naiad.jit
def _cross_argument(a, b, dst, offset):
    # `a + offset` reaches into `b`'s storage: still an out-of-bounds access through `a`.
    tl.store(dst, tl.load(a + offset))


def test_access_outside_the_argument_raises_even_if_another_array_is_there():
    a, dst = np.ones(4, np.float32), np.zeros(1, np.float32)
    b = np.ones(4, np.float32)
    offset = (b.ctypes.data - a.ctypes.data) // 4
    with kernel_error(r"argument `a`", IndexError):
        _cross_argument[(1,)](a, b, dst, offset, debug=True)


@naiad.jit
def _oob_atomic(p, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(p + offs, 1, mask=offs < n)


def test_out_of_bounds_atomic_raises(backend):
    p = np.zeros(4, np.int32)
    with kernel_error(r"out-of-bounds atomic through argument `p`", IndexError) as info:
        _oob_atomic[(1,)](p, 6, 8, debug=True)
    if backend == "interpreter":
        assert "[4, 5]" in str(info.value)
    assert_exact(p, np.zeros(4, np.int32))  # no lane was updated
    _oob_atomic[(1,)](p, 4, 8, debug=True)
    assert_exact(p, np.ones(4, np.int32))


@naiad.jit
def _scalar_load_with_block_other(src, dst):
    tl.store(dst, tl.load(src, mask=True, other=tl.zeros((4,), tl.float32)))


def test_scalar_pointer_with_block_other_raises():
    with kernel_error("Other argument cannot be block type if pointer argument is not a block"):
        _scalar_load_with_block_other[(1,)](np.ones(4, np.float32), np.zeros(1, np.float32))
