"""Reading by index along one dim: index_select, gather and take_along_dim, from one kernel.

Both see the operand as (outer, D, inner) around the indexed dim and the result as
(outer, K, inner); result[o, k, i] = x[o, index[o, k, i], i], where index_select's index is one
vector (strides 0 along outer and inner). Each program copies a block of one (o, k) row.
Negative indices count from the end, as torch's; out-of-range ones raise IndexError (on a GPU,
the kernel's device assert: index_range.checked_in_kernel).
"""

from __future__ import annotations

import math

import torch

from ... import language as tl
from ...runtime.jit import jit
from .. import index_range
from ..allocate import written_to
from ..dtypes import tl_dtype
from ..reduce.rows import normalized_dims
from ..registry import aten, composite
from .row_blocks import blocks_and_grid, row_block

__all__ = ["gather", "index_select", "take_along_dim"]


@jit(do_not_specialize=["K", "D", "INNER"])
def _take_kernel(x, index, out, K, D, INNER, s_xo, s_xd, s_xi, s_no, s_nk, s_ni,
                 BLOCK: tl.constexpr):  # fmt: skip
    row, i, mask = row_block(INNER, BLOCK)
    o = row // K
    k = row % K
    j = tl.load(index + o * s_no + k * s_nk + i * s_ni, mask=mask, other=0).to(tl.int64)
    tl.device_assert((j >= -D) & (j < D), "index out of range in self")  # where launched so
    j = tl.where(j < 0, j + D, j)
    v = tl.load(x + o * s_xo + j * s_xd + i * s_xi, mask=mask)
    tl.store(out + row * INNER + i, v, mask=mask)


def _take(x, dim, index3, shape):
    """x read at index3 ((outer, K, inner), strides allowed) along `dim`, shaped `shape`."""
    tl_dtype(x.dtype)
    index_range.check_index_dtype(index3, "the index")
    outer, k, inner = index3.shape
    d = x.shape[dim] if x.dim() else 1
    if index_range.outside_on_host(index3, -d, d) is not None:
        raise IndexError(f"index out of range in self (size {d} along dim {dim})")
    x3 = x.reshape(outer, d, inner)
    out = torch.empty(outer, k, inner, dtype=x.dtype, device=x.device)
    if out.numel():
        block, grid = blocks_and_grid(outer * k, inner)
        _take_kernel[grid](x3, index3, out, k, d, inner, *x3.stride(), *index3.stride(), block,
                           **index_range.kernel_checks(index3))  # fmt: skip
    return out.view(shape)


@aten("index_select.default", "index_select.out")
def index_select(input, dim, index, *, out=None):
    """input's slices along `dim` at the positions in the vector `index`."""
    (dim,) = normalized_dims(dim, max(input.dim(), 1))
    shape = list(input.shape)
    outer, inner = math.prod(shape[:dim]), math.prod(shape[dim + 1 :])
    flat = index.reshape(-1)
    index3 = flat.view(1, -1, 1).expand(outer, flat.numel(), inner)
    if input.dim():
        shape[dim] = flat.numel()
    result = _take(input, dim, index3, shape)
    return written_to(result, out)


@aten("gather.default", "gather.out")
def gather(input, dim, index, *, sparse_grad=False, out=None):
    """result[p] = input[p with its `dim` coordinate replaced by index[p]]."""
    (dim,) = normalized_dims(dim, max(input.dim(), 1))
    shape = list(index.shape)
    region = [slice(0, n) if d != dim else slice(None) for d, n in enumerate(shape)]
    source = input[tuple(region)] if input.dim() else input
    outer, inner = math.prod(shape[:dim]), math.prod(shape[dim + 1 :])
    index3 = index.reshape(outer, shape[dim] if shape else 1, inner)
    result = _take(source, dim, index3, shape)
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
