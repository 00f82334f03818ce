"""Writing by index along one dim: scatter (tensor or value source), scatter_add and index_add,
from one kernel.

The index space is the index tensor's, up to 4 dims, with the indexed dim moved last (a
permutation of strides, no copy): element c of it writes src[c] to out at c's coordinates but
with the last one replaced by index[c]. index_add's vector index is expanded (stride 0) to the
source's shape, and a value source is a 0-dim tensor expanded to the index's shape. Adding
forms add into an fp32 copy for fp16 and bf16, with atomic adds on a GPU (indices may repeat);
on the CPU, where an atomic float add is a compare-and-swap loop, each program adds whole rows
of the index space in order, rows that no other program's additions reach (1024x1024: 155 ms
atomically, 27 ms in one program, in order). Plain scatter stores, and where indices
repeat one of the writes wins, as torch documents.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...errors import KernelAssertionError
from ...runtime.jit import jit
from .. import index_range
from ..allocate import written_to
from ..convert import to
from ..dtypes import Unsupported, tl_dtype
from ..reduce.launch import accumulator
from ..reduce.rows import normalized_dims
from ..registry import aten

__all__ = ["index_add", "scatter", "scatter_add"]

_BLOCK = 1024
# Elements of the index space each program adds on the CPU (whole rows, at least one): a small
# scatter is one program, a large one spreads over the threads.
_ADDED_PER_PROGRAM = 16384
_RANK = 4
_ADDABLE = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64)


@jit(do_not_specialize=["n", "n1", "n2", "n3", "D", "alpha"])
def _scatter_kernel(index, src, out, n, n1, n2, n3, D, alpha,
                    si0, si1, si2, si3, ss0, ss1, ss2, ss3, so0, so1, so2, so3,
                    ACCUMULATE: tl.constexpr, BLOCK: tl.constexpr, WIDE: tl.constexpr):  # fmt: skip
    """Element p of the index space scatters; its coordinates and offsets are 32-bit unless
    WIDE (an index space or a tensor of 2**31 elements or more): a GPU divides 64-bit
    integers in a software routine, four times an element here."""
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WIDE:
        p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < n
    c3 = p % n3
    rest = p // n3
    c2 = rest % n2
    rest = rest // n2
    c1 = rest % n1
    c0 = rest // n1
    j = tl.load(index + c0 * si0 + c1 * si1 + c2 * si2 + c3 * si3, mask=mask, other=0)
    tl.device_assert((j >= -D) & (j < D), "index out of bounds")
    j = j.to(tl.int64) if WIDE else j.to(tl.int32)
    j = tl.where(j < 0, j + D, j)
    v = tl.load(src + c0 * ss0 + c1 * ss1 + c2 * ss2 + c3 * ss3, mask=mask)
    target = out + c0 * so0 + c1 * so1 + c2 * so2 + j * so3
    if ACCUMULATE:
        # relaxed, as torch's atomics: the default acq_rel fenced each addition (a GPU-wide
        # memory barrier and a cache invalidation an element)
        tl.atomic_add(target, (v * alpha).to(out.dtype.element_ty), mask=mask, sem="relaxed")
    else:
        tl.store(target, v.to(out.dtype.element_ty), mask=mask)


@jit(do_not_specialize=["rows", "per_program", "n1", "n2", "n3", "D", "alpha"])
def _rows_add_kernel(index, src, out, rows, per_program, n1, n2, n3, D, alpha,
                     si0, si1, si2, si3, ss0, ss1, ss2, ss3, so0, so1, so2, so3,
                     SCALED: tl.constexpr):  # fmt: skip
    """The adding scatter on the CPU: each program walks `per_program` rows of the index space
    (every coordinate but the scattered one fixed) element by element, in order, each addition
    a plain load and store. A row adds only into the same row of out, so no two programs touch
    the same element and none needs an atomic. `alpha` multiplies only where SCALED (scatter_add
    has none: a multiplication and a load of alpha an element)."""
    first = tl.program_id(0).to(tl.int64) * per_program
    for r in range(first, tl.minimum(first + per_program, rows)):
        c2 = r % n2
        rest = r // n2
        c1 = rest % n1
        c0 = rest // n1
        at_i = index + c0 * si0 + c1 * si1 + c2 * si2
        at_s = src + c0 * ss0 + c1 * ss1 + c2 * ss2
        at_o = out + c0 * so0 + c1 * so1 + c2 * so2
        for c3 in range(0, n3):
            j = tl.load(at_i + c3 * si3).to(tl.int64)
            tl.device_assert((j >= -D) & (j < D), "index out of bounds")
            j = tl.where(j < 0, j + D, j)
            v = tl.load(at_s + c3 * ss3)
            if SCALED:
                v = v * alpha
            target = at_o + j * so3
            tl.store(target, tl.load(target) + v.to(out.dtype.element_ty))


def _four_dims(t, dim):
    """t with `dim` moved last and 1-size dims put in front up to 4 dims (a view)."""
    moved = t.movedim(dim, -1) if t.dim() else t.reshape(1)
    return moved.reshape([1] * (_RANK - moved.dim()) + list(moved.shape))


def _span(t) -> int:
    """The elements from t's first to its last, plus one: what its offsets reach."""
    return 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))


def _outside_scatter(index: int, dim: int, size: int) -> Exception:
    """torch's error for scatter's and scatter_add's index outside the dim."""
    return RuntimeError(f"index {index} is out of bounds for dimension {dim} with size {size}")


def _outside_index_add(index: int, dim: int, size: int) -> Exception:
    """torch's error for index_add's."""
    return IndexError("index out of range in self")


def _scatter_into(out, dim, index, src, accumulate, alpha=1, outside=_outside_scatter):
    """out (written in place) at `index` along `dim`, from src, over index's index space;
    `outside(index, dim, size)` is the error for an index outside the dim, which the kernels
    assert (index_range.py): out may be part written when it is raised."""
    rank = max(out.dim(), 1)
    if rank > _RANK:
        raise Unsupported(f"scatter over {rank} dims")
    d = out.shape[dim] if out.dim() else 1
    if not index.numel():  # torch checks neither an empty index's shape nor its dtype
        return out
    _check_shapes(out, dim, index, src)
    src = src.to(out.dtype) if src.dtype != out.dtype and not accumulate else src
    i4, s4, o4 = (_four_dims(t, dim) for t in (index, src, out))
    n = index.numel()
    n0, n1, n2, n3 = i4.shape
    strides = (*i4.stride(), *s4.stride(), *o4.stride())
    try:
        if accumulate and out.device.type == "cpu":
            rows = n0 * n1 * n2
            per_program = max(1, _ADDED_PER_PROGRAM // n3)
            grid = ((rows + per_program - 1) // per_program,)
            _rows_add_kernel[grid](i4, s4, o4, rows, per_program, n1, n2, n3, d, alpha,
                                   *strides, alpha != 1, **index_range.KERNEL_CHECKS)  # fmt: skip
        else:
            grid = ((n + _BLOCK - 1) // _BLOCK,)
            wide = max(n, *(_span(t) for t in (i4, s4, o4))) >= 2**31
            _scatter_kernel[grid](
                i4, s4, o4, n, n1, n2, n3, d, alpha, *strides, accumulate, _BLOCK, wide,
                **index_range.KERNEL_CHECKS,
            )  # fmt: skip
    except KernelAssertionError as failure:
        raise index_range.refusal(failure, index, -d, d, lambda bad: outside(bad, dim, d)) from None
    return out


def _check_shapes(self, dim, index, src) -> None:
    """torch's rule for the index space: index has self's rank, fits in src, and in self along
    every dim but `dim` (the kernel reads src and writes self at index's positions)."""
    if max(index.dim(), 1) != max(self.dim(), 1) or max(src.dim(), 1) != max(index.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    self_shape, src_shape = self.shape or (1,), src.shape or (1,)  # a 0-dim tensor as (1,)
    for d, size in enumerate(index.shape or (1,)):
        if size > src_shape[d] or (d != dim and size > self_shape[d]):
            raise RuntimeError(
                f"Expected index {list(index.shape)} to be no larger than self "
                f"{list(self.shape)} apart from dimension {dim} and to be no larger size than "
                f"src {list(src.shape)}"
            )


def _check(self, index, src):
    if index.dtype not in (torch.int64, torch.int32) and index.numel():  # torch takes both
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    tl_dtype(self.dtype)
    if src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")


@aten("scatter.src", "scatter.src_out")
def scatter(input, dim, index, src, *, out=None):
    """A copy of input with src[c] (or the number src) written at index[c] along `dim` for each
    position c."""
    if not isinstance(src, torch.Tensor):
        return scatter_value(input, dim, index, src, out=out)
    _check(input, index, src)
    (dim,) = normalized_dims(dim, max(input.dim(), 1))
    result = input.clone(memory_format=torch.contiguous_format)
    _scatter_into(result, dim, index, src, False)
    return written_to(result, out)


@aten("scatter.value", "scatter.value_out")
def scatter_value(input, dim, index, value, *, out=None):
    source = torch.full((), value, dtype=input.dtype, device=input.device)
    return scatter(input, dim, index, source.expand(index.shape), out=out)


def _added(input, dim, index, src, alpha, outside=_outside_scatter):
    if input.dtype not in _ADDABLE:
        raise Unsupported(f"scatter_add of {input.dtype}")
    (dim,) = normalized_dims(dim, max(input.dim(), 1))
    wide = accumulator(input.dtype)
    result = to(input.contiguous(), wide) if wide != input.dtype else input.clone()
    result = result.contiguous()
    _scatter_into(result, dim, index, src, True, alpha, outside)
    return result if wide == input.dtype else to(result, input.dtype)


@aten("scatter_add.default", "scatter_add.out")
def scatter_add(input, dim, index, src, *, out=None):
    """A copy of input with src[c] added at index[c] along `dim` for each position c."""
    _check(input, index, src)
    result = _added(input, dim, index, src, 1)
    return written_to(result, out)


@aten("index_add.default", "index_add.out")
def index_add(input, dim, index, source, *, alpha=1, out=None):
    """A copy of input with source's k-th slice along `dim`, times alpha, added at index[k]."""
    if index.dim() > 1 or index.dtype not in (torch.int64, torch.int32):
        raise RuntimeError("index_add_(): Index is supposed to be a vector of int64 or int32")
    if source.dtype != input.dtype:
        raise RuntimeError("index_add_(): self and source must have the same scalar type")
    (d,) = normalized_dims(dim, max(input.dim(), 1))
    if source.dim() and source.shape[d] != index.numel():
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.numel()}) should be equal to "
            f"source.size(dim) ({source.shape[d]})"
        )
    if source.dim() != input.dim() or any(
        a != b for i, (a, b) in enumerate(zip(source.shape, input.shape)) if i != d
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(input.shape)} source.shape = "
            f"{list(source.shape)}"
        )
    shape = [1] * max(source.dim(), 1)
    shape[d] = index.numel()
    spread = index.reshape(shape).expand(source.shape if source.dim() else [1])
    result = _added(input, d, spread, source.reshape(spread.shape), alpha, _outside_index_add)
    return written_to(result, out)


@aten("index_add_.default")
def index_add_(input, dim, index, source, *, alpha=1):
    return input.copy_(index_add(input, dim, index, source, alpha=alpha))


@aten("scatter_add_.default")
def scatter_add_(input, dim, index, src):
    return input.copy_(scatter_add(input, dim, index, src))


@aten("scatter_.src", "scatter_.value")
def scatter_(input, dim, index, src):
    """scatter in place, from a tensor or a number (`src`)."""
    return input.copy_(scatter(input, dim, index, src))
