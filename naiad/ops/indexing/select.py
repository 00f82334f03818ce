"""Reading by index along one dim: index_select, gather and take_along_dim, from one kernel.

Both see the operand as (outer, D, inner) around the indexed dim and the result as
(outer, K, inner); result[o, k, i] = x[o, index[o, k, i], i], where index_select's index is one
vector (strides 0 along outer and inner). Each program copies a tile of the result (row_blocks.py).
Negative indices count from the end, as torch's; the kernel asserts their range
(index_range.py), and on the CPU one outside raises torch's IndexError.
"""

from __future__ import annotations

import math

import torch

from ... import language as tl
from ...errors import KernelAssertionError
from ...runtime.jit import jit
from .. import index_range
from ..allocate import empty, written_to
from ..dtypes import tl_dtype
from ..kept import KeptTable, tensor_kind
from ..reduce.rows import normalized_dims
from ..registry import aten, composite
from .row_blocks import tile, tiles_and_grid

__all__ = ["gather", "index_select", "take_along_dim"]


@jit(do_not_specialize=["O", "K", "D"])
def _take_kernel(x, index, out, O, K, D, INNER, s_xo, s_xd, s_xi, s_no, s_nk, s_ni,
                 BLOCK_O: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_I: tl.constexpr,
                 ONE_PER_ROW: tl.constexpr):  # fmt: skip
    """The result's (O, K, INNER) view. ONE_PER_ROW: the index is the same along INNER
    (index_select's, s_ni 0), read once per row, so that a row of x is read where it lies
    (on the CPU one vector load, where an index per element made it a gather)."""
    o, k, i, mask = tile(O, K, INNER, BLOCK_O, BLOCK_K, BLOCK_I)
    if ONE_PER_ROW:
        j = tl.load(index + o * s_no + k * s_nk, mask=(o < O) & (k < K), other=0)
    else:
        j = tl.load(index + o * s_no + k * s_nk + i * s_ni, mask=mask, other=0)
    j = j.to(tl.int64)
    tl.device_assert((j >= -D) & (j < D), "index out of range in self")
    j = tl.where(j < 0, j + D, j)
    v = tl.load(x + o * s_xo + j * s_xd + i * s_xi, mask=mask)
    tl.store(out + (o * K + k) * INNER + i, v, mask=mask)


# What one kind of call decides (the operand's and the index's dtype, device, shape and
# strides, the dim, index_select or gather): the result's shape and the kernel's bound launch
# (JITFunction.bind_launch); a call of a known kind checks its indices, allocates and
# launches. Kept where the kernel reads the operand and the index as they lie (views of the
# call's own tensors). Host time of index_select over 16 x 64 on the development CPU: 17.6 us
# a call without (the launch keyed every argument, the (outer, D, inner) views made again).
_PLANS = KeptTable(1024)


def _planned(key, x, index):
    """The result of a call of a known kind, or None where its kind has no plan."""
    plan = _PLANS.get(key)
    if plan is None:
        return None
    shape, d, dim, launch = plan
    out = empty(shape, x.dtype, x.device)
    try:
        launch(x, index, out)
    except KernelAssertionError as failure:
        raise _outside(failure, index, d, dim) from None
    return out


def _outside(failure, index, d: int, dim: int) -> Exception:
    """torch's IndexError for an index outside [-d, d) where the kernel's assert stopped
    (index_range.refusal)."""
    return index_range.refusal(failure, index, -d, d, lambda bad: _out_of_range(d, dim))


def _out_of_range(d: int, dim: int) -> Exception:
    return IndexError(f"index out of range in self (size {d} along dim {dim})")


def _take(x, dim, index3, shape, key=None, source=None, index=None):
    """x read at index3 ((outer, K, inner), strides allowed) along `dim`, shaped `shape`; the
    call's plan kept under `key` where the kernel reads `source` and `index` (the call's own
    operand and index, of which x and index3 are views) as they lie."""
    tl_dtype(x.dtype)
    index_range.check_index_dtype(index3, "the index")
    outer, k, inner = index3.shape
    d = x.shape[dim] if x.dim() else 1
    x3 = x.reshape(outer, d, inner)
    out = empty(shape, x.dtype, x.device)
    if not out.numel():
        index_range.check_on_host(index3, -d, d, lambda bad: _out_of_range(d, dim))
    else:
        *blocks, grid = tiles_and_grid(outer, k, inner, x.device)
        arguments = (x3, index3, out, outer, k, d, inner, *x3.stride(), *index3.stride(),
                     *blocks, index3.stride(2) == 0)  # fmt: skip
        checks = index_range.KERNEL_CHECKS
        try:
            _take_kernel[grid](*arguments, **checks)
        except KernelAssertionError as failure:
            raise _outside(failure, index3, d, dim) from None
        as_they_lie = key is not None and x3.data_ptr() == source.data_ptr()
        if as_they_lie and index3.data_ptr() == index.data_ptr():
            names = _take_kernel.arg_names[:3]
            launch = _take_kernel.bind_launch(names, grid, *arguments, typed=names[:2], **checks)
            _PLANS.put(key, (shape, d, dim, launch))
    return out


@aten("index_select.default", "index_select.out")
def index_select(input, dim, index, *, out=None):
    """input's slices along `dim` at the positions in the vector `index`."""
    key = ("index_select", tensor_kind(input), tensor_kind(index), dim)
    result = _planned(key, input, index)
    if result is None:
        (dim,) = normalized_dims(dim, max(input.dim(), 1))
        shape = list(input.shape)
        outer, inner = math.prod(shape[:dim]), math.prod(shape[dim + 1 :])
        flat = index.reshape(-1)
        index3 = flat.view(1, -1, 1).expand(outer, flat.numel(), inner)
        if input.dim():
            shape[dim] = flat.numel()
        result = _take(input, dim, index3, shape, key, input, index)
    return written_to(result, out)


@aten("gather.default", "gather.out")
def gather(input, dim, index, *, sparse_grad=False, out=None):
    """result[p] = input[p with its `dim` coordinate replaced by index[p]]."""
    key = ("gather", tensor_kind(input), tensor_kind(index), dim)
    result = _planned(key, input, index)
    if result is None:
        (dim,) = normalized_dims(dim, max(input.dim(), 1))
        if not index.numel():  # as torch: an empty index's dtype and shape go unchecked
            return written_to(empty(index.shape, input.dtype, input.device), out)
        _check_gather_shapes(input, dim, index)
        shape = list(index.shape)
        region = [slice(0, n) if d != dim else slice(None) for d, n in enumerate(shape)]
        source = input[tuple(region)] if input.dim() else input
        outer, inner = math.prod(shape[:dim]), math.prod(shape[dim + 1 :])
        index3 = index.reshape(outer, shape[dim] if shape else 1, inner)
        result = _take(source, dim, index3, shape, key, input, index)
    return written_to(result, out)


def broadcast_along(shape, indices_shape, dim):
    """The shapes take_along_dim reads its operand and indices as: broadcast against each other
    but along `dim`, where each keeps its own size."""
    rest = [1 if d == dim else n for d, n in enumerate(shape)]
    other = [1 if d == dim else n for d, n in enumerate(indices_shape)]
    common = list(torch.broadcast_shapes(rest, other))
    source = [shape[d] if d == dim else n for d, n in enumerate(common)]
    wanted = [indices_shape[d] if d == dim else n for d, n in enumerate(common)]
    return source, wanted


@composite("take_along_dim.default")
def take_along_dim(input, indices, dim=None):
    """gather with `indices` and input broadcast against each other except along `dim`; with no
    dim, of the flattened input at the flattened indices (torch's take_along_dim)."""
    if indices.dtype != torch.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {indices.dtype}"
        )
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {input.dim()} dimensions for input, and {indices.dim()} "
            "dimensions for indices"
        )
    dim = normalized_dims(dim, input.dim())[0]
    source, wanted = broadcast_along(input.shape, indices.shape, dim)
    return gather(input.expand(source), dim, indices.expand(wanted))


def _check_gather_shapes(input, dim: int, index) -> None:
    """torch's rule for gather's index: input's rank (a 0-dim tensor as one of a single
    element), and no larger than input along every dim but `dim`."""
    if max(index.dim(), 1) != max(input.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d, (size, bound) in enumerate(zip(index.shape, input.shape)):
        if d != dim and size > bound:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be "
                f"no larger than self {list(input.shape)} apart from dimension {dim}"
            )
