"""flip: the elements in reverse order along the given dims. Each flipped dim is one pass of a
kernel that sees the operand as (outer, D, inner) and copies row (o, k) from row (o, D-1-k); where
the flipped dim is the innermost (inner == 1) each program takes a block of one (o) row and
reads it backwards instead (a program per element would be a launch of tiny programs). Several
dims flip one after another (each pass reads what the last wrote)."""

from __future__ import annotations

import math

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import empty, written_to
from ..convert import to
from ..dtypes import tl_dtype
from ..reduce.rows import normalized_dims
from ..registry import aten
from .row_blocks import blocks_and_grid, row_block

__all__ = ["flip"]


@jit(do_not_specialize=["D", "INNER"])
def _flip_kernel(x, out, D, INNER, s_o, s_d, s_i, INNERMOST: tl.constexpr, BLOCK: tl.constexpr):
    if INNERMOST:  # a block of one row, read backwards
        o, k, mask = row_block(D, BLOCK)
        v = tl.load(x + o * s_o + (D - 1 - k) * s_d, mask=mask)
        tl.store(out + o * D + k, v, mask=mask)
    else:
        row, i, mask = row_block(INNER, BLOCK)
        o = row // D
        k = row % D
        v = tl.load(x + o * s_o + (D - 1 - k) * s_d + i * s_i, mask=mask)
        tl.store(out + row * INNER + i, v, mask=mask)


def _flip_one(x, dim):
    shape = list(x.shape)
    outer, inner = math.prod(shape[:dim]), math.prod(shape[dim + 1 :])
    x3 = x.reshape(outer, shape[dim], inner)
    out = empty(shape, x.dtype, x.device)
    innermost = inner == 1
    if innermost:
        block, grid = blocks_and_grid(outer, shape[dim])
    else:
        block, grid = blocks_and_grid(outer * shape[dim], inner)
    _flip_kernel[grid](x3, out, shape[dim], inner, *x3.stride(), innermost, block)
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
