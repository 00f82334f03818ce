"""The standard library, written in the kernel language itself: the compiler sees it as ordinary
kernel code (and inlines it), the interpreter runs it as Python.

Python's `and`/`or` are not used on tensors here (they are on constexprs only): this file runs
unrewritten in the interpreter, so tensor logic is spelled with `&`, `|` and `where`.
"""

from __future__ import annotations

from . import dtypes as t
from . import math
from .core import _tensor_member, _unwrap_if_constexpr, constexpr, jit
from .creation import arange, full
from .reduction import associative_scan, reduce
from .shape import broadcast_to, expand_dims, reshape


def _log2(n: int) -> int:
    n = _unwrap_if_constexpr(n)
    log = 0
    while (1 << log) < n:
        log += 1
    if (1 << log) != n:
        raise ValueError(f"{n} is not a power of 2")
    return log


def _same_width_int(dtype):
    return {1: t.int1, 8: t.int8, 16: t.int16, 32: t.int32, 64: t.int64}[dtype.primitive_bitwidth]


# -------------------------------------------------------------------------------------------------
# elementwise
# -------------------------------------------------------------------------------------------------
@_tensor_member
@jit
def cdiv(x, div):
    """ceil(x / div) for positive integers."""
    return (x + (div - 1)) // div  # as Triton: `x_int8 + (128 - 1)` fits int8, `x + 128` does not


@_tensor_member
@jit
def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return 1 / (1 + math.exp(-x))


@_tensor_member
@jit
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """exp(x - max) / sum(exp(x - max)) along `dim` (0 when None).

    As in Triton, `keep_dims` also applies to the intermediate max and sum, so with
    keep_dims=False they broadcast from the right (which suits dim=0 of a 2-D block).
    """
    _dim = 0 if _unwrap_if_constexpr(dim) is None else dim
    z = x - max(x, _dim, keep_dims=keep_dims)
    num = math.exp(z)
    den = sum(num, _dim, keep_dims=keep_dims)
    return math.fdiv(num, den, ieee_rounding)


@_tensor_member
@jit
def ravel(x, can_reorder=False):
    """`x` as a 1-D tensor."""
    return reshape(x, [x.numel], can_reorder=can_reorder)


@jit
def swizzle2d(i, j, size_i, size_j, size_g):
    """Map row-major (i, j) to a grouped order: groups of `size_g` rows, column-major inside.

    Used to reorder matmul tiles so neighbouring programs share operand blocks in the L2 cache.
    """
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = math.minimum(size_i - off_i, size_g)
    ij = ij % size_gj
    new_i = off_i + ij % size_g
    new_j = ij // size_g
    return new_i, new_j


@jit
def zeros(shape, dtype):
    """A block of `shape` filled with zeros of `dtype`."""
    return full(shape, 0, dtype)


@jit
def zeros_like(input):
    """Zeros of the shape and dtype of `input`."""
    return zeros(input.shape, input.dtype)


# -------------------------------------------------------------------------------------------------
# reductions
# -------------------------------------------------------------------------------------------------
@jit
def _sum_combine(a, b):
    return a + b


@jit
def _prod_combine(a, b):
    return a * b


@jit
def _xor_combine(a, b):
    return a ^ b


@jit
def _or_combine(a, b):
    return a | b


@jit
def _elementwise_max(a, b):
    return math.maximum(a, b)


@jit
def _elementwise_min(a, b):
    return math.minimum(a, b)


def _sum_dtype(dtype, requested):
    """Triton's `_pick_sum_dtype`: narrow integers accumulate in 32 bits ((u)int8/16 and int1 in
    (u)int32); floats keep their type (an fp16 sum is fp16; pass dtype=tl.float32 to widen)."""
    requested = _unwrap_if_constexpr(requested)
    if requested is not None:
        return requested
    if dtype.is_int_signed() and dtype.int_bitwidth < 32:
        return t.int32
    if dtype.is_int_unsigned() and dtype.int_bitwidth < 32:
        return t.uint32
    return None


def _promote_bfloat16(x):
    return x.to(t.float32) if x.dtype.is_bf16() else x


@_tensor_member
@jit
def sum(input, axis=None, keep_dims=False, dtype=None):
    """Sum along `axis` (all elements when None)."""
    out_dtype = _sum_dtype(input.dtype, dtype)
    if out_dtype is not None:
        input = input.to(out_dtype)
    return reduce(input, axis, _sum_combine, keep_dims=keep_dims)


@_tensor_member
@jit
def xor_sum(input, axis=None, keep_dims=False):
    """Bitwise xor of the elements along `axis` (integers only)."""
    if not input.dtype.is_int():
        raise ValueError("xor_sum only supported for integers")
    return reduce(input, axis, _xor_combine, keep_dims=keep_dims)


@_tensor_member
@jit
def reduce_or(input, axis, keep_dims=False):
    """Bitwise or of the elements along `axis` (integers only)."""
    if not input.dtype.is_int():
        raise ValueError("reduce_or only supported for integers")
    return reduce(input, axis, _or_combine, keep_dims=keep_dims)


@jit
def _argmax_combine(value1, index1, value2, index2, tie_break_left):
    if tie_break_left:
        tie = (value1 == value2) & (index1 < index2)
        gt = (value1 > value2) | tie
    else:
        gt = value1 > value2
    return math.where(gt, value1, value2), math.where(gt, index1, index2)


@jit
def _argmin_combine(value1, index1, value2, index2, tie_break_left):
    if tie_break_left:
        tie = (value1 == value2) & (index1 < index2)
        lt = (value1 < value2) | tie
    else:
        lt = value1 < value2
    return math.where(lt, value1, value2), math.where(lt, index1, index2)


@jit
def _argmax_combine_tie_break_left(value1, index1, value2, index2):
    return _argmax_combine(value1, index1, value2, index2, True)


@jit
def _argmax_combine_tie_break_fast(value1, index1, value2, index2):
    return _argmax_combine(value1, index1, value2, index2, False)


@jit
def _argmin_combine_tie_break_left(value1, index1, value2, index2):
    return _argmin_combine(value1, index1, value2, index2, True)


@jit
def _argmin_combine_tie_break_fast(value1, index1, value2, index2):
    return _argmin_combine(value1, index1, value2, index2, False)


def _wrap_axis(axis, rank):
    """Triton's `_wrap_axis`: a negative axis counts from the end; out of range is an error."""
    if not -rank <= axis < rank:
        raise ValueError(f"invalid axis {axis}. Expected {-rank} <= axis < {rank}")
    return axis + rank if axis < 0 else axis


def _reduce_with_indices(input, axis, combine_fn, keep_dims=False):
    """The value and index reduction of max/min (plain Python, inlined into them, as Triton)."""
    if _unwrap_if_constexpr(axis) is None:
        input = ravel(input)
        axis = 0
    axis = _unwrap_if_constexpr(axis)
    rank = len(input.shape)
    axis = _wrap_axis(axis, rank)
    index = arange(0, input.shape[axis])
    if rank > 1:
        other_axes = [constexpr(d) for d in range(rank) if d != axis]
        index = expand_dims(index, other_axes)
        index = broadcast_to(index, input.shape)
    return reduce((input, index), axis, combine_fn, keep_dims=keep_dims)


def _to_32_bits(input):
    if input.dtype.primitive_bitwidth < 32:
        return input.to(t.float32 if input.dtype.is_floating() else t.int32)
    return input


@_tensor_member
@jit
def max(
    input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False
):
    """Maximum along `axis` (NaNs are ignored); with `return_indices`, also its first index."""
    input = _promote_bfloat16(input)
    if return_indices:
        fn = (
            _argmax_combine_tie_break_left
            if return_indices_tie_break_left
            else _argmax_combine_tie_break_fast
        )
        return _reduce_with_indices(input, axis, fn, keep_dims=keep_dims)
    return reduce(_to_32_bits(input), axis, _elementwise_max, keep_dims=keep_dims)


@_tensor_member
@jit
def min(
    input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False
):
    """Minimum along `axis` (NaNs are ignored); with `return_indices`, also its first index."""
    input = _promote_bfloat16(input)
    if return_indices:
        fn = (
            _argmin_combine_tie_break_left
            if return_indices_tie_break_left
            else _argmin_combine_tie_break_fast
        )
        return _reduce_with_indices(input, axis, fn, keep_dims=keep_dims)
    return reduce(_to_32_bits(input), axis, _elementwise_min, keep_dims=keep_dims)


@_tensor_member
@jit
def argmax(input, axis, tie_break_left=True, keep_dims=False):
    """The index of the maximum along `axis` (the first one on ties)."""
    _, index = max(
        input,
        axis,
        return_indices=True,
        return_indices_tie_break_left=tie_break_left,
        keep_dims=keep_dims,
    )
    return index


@_tensor_member
@jit
def argmin(input, axis, tie_break_left=True, keep_dims=False):
    """The index of the minimum along `axis` (the first one on ties)."""
    _, index = min(
        input,
        axis,
        return_indices=True,
        return_indices_tie_break_left=tie_break_left,
        keep_dims=keep_dims,
    )
    return index


# -------------------------------------------------------------------------------------------------
# scans
# -------------------------------------------------------------------------------------------------
@_tensor_member
@jit
def cumsum(input, axis=0, reverse=False, dtype=None):
    """Inclusive prefix sum along `axis`."""
    input = _promote_bfloat16(input)
    out_dtype = (
        _sum_dtype(input.dtype, dtype) if input.dtype.is_int() or dtype is not None else None
    )
    if out_dtype is not None:
        input = input.to(out_dtype)
    return associative_scan(input, axis, _sum_combine, reverse)


@_tensor_member
@jit
def cumprod(input, axis=0, reverse=False):
    """Inclusive prefix product along `axis`."""
    input = _promote_bfloat16(input)
    return associative_scan(input, axis, _prod_combine, reverse)
