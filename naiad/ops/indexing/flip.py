"""flip: the elements in reverse order along the given dims. Each flipped dim is one pass of a
kernel that sees the operand as (outer, D, inner) and copies row (o, k) from row (o, D-1-k), a
tile of rows at a time (row_blocks.py); where the flipped dim is the innermost (inner == 1) a
tile spans the dim, read backwards. Several dims flip one after another (each pass reads what
the last wrote)."""

from __future__ import annotations

import math

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import empty, written_to
from ..convert import to
from ..dtypes import tl_dtype
from ..reduce.rows import normalized_dims
from ..registry import aten
from .row_blocks import tile, tiles_and_grid

__all__ = ["flip"]


@jit(do_not_specialize=["O", "D"])
def _flip_kernel(x, out, O, D, INNER, s_o, s_d, s_i, BLOCK_O: tl.constexpr,
                 BLOCK_D: tl.constexpr, BLOCK_I: tl.constexpr):  # fmt: skip
    """The (O, D, INNER) view of x read backwards along D."""
    o, k, i, mask = tile(O, D, INNER, BLOCK_O, BLOCK_D, BLOCK_I)
    v = tl.load(x + o * s_o + (D - 1 - k) * s_d + i * s_i, mask=mask)
    tl.store(out + (o * D + k) * INNER + i, v, mask=mask)


def _flip_one(x, dim):
    shape = list(x.shape)
    outer, inner = math.prod(shape[:dim]), math.prod(shape[dim + 1 :])
    x3 = x.reshape(outer, shape[dim], inner)
    out = empty(shape, x.dtype, x.device)
    blocks = tiles_and_grid(outer, shape[dim], inner, x.device)
    _flip_kernel[blocks[-1]](x3, out, outer, shape[dim], inner, *x3.stride(), *blocks[:3])
    return out


@aten("flip.default", "flip.out")
def flip(input, dims, *, out=None):
    """input reversed along each dim of `dims`."""
    tl_dtype(input.dtype)
    listed = [dims] if isinstance(dims, int) else list(dims)
    dims = normalized_dims(listed, max(input.dim(), 1)) if listed else []
    if len(dims) != len(listed):
        raise RuntimeError(f"flip: dims has a repeated dim: {listed}")
    result = input
    if input.numel():
        for dim in sorted(d for d in dims if input.dim() and input.shape[d] > 1):
            result = _flip_one(result, dim)
    if result is input:
        result = to(input.contiguous(), input.dtype)
    return written_to(result, out)
