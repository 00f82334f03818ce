"""triu and tril: the upper or lower triangle of the last two dims, zeros elsewhere; one kernel,
each program a block of one row of one matrix."""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..dtypes import tl_dtype
from ..registry import aten
from .row_blocks import blocks_and_grid, row_block

__all__ = ["tril", "triu"]


@jit(do_not_specialize=["R", "C", "diagonal"])
def _triangle_kernel(x, out, R, C, s_b, s_r, s_c, diagonal, UPPER: tl.constexpr,
                     BLOCK: tl.constexpr):  # fmt: skip
    row, c, mask = row_block(C, BLOCK)
    b = row // R
    r = row % R
    if UPPER:
        keep = c - r >= diagonal
    else:
        keep = c - r <= diagonal
    v = tl.load(x + b * s_b + r * s_r + c * s_c, mask=mask & keep, other=0)
    tl.store(out + row * C + c, v, mask=mask)


def _triangle(input, diagonal, upper, out=None):
    if input.dim() < 2:
        raise RuntimeError("triu/tril: input tensor must have at least 2 dimensions")
    tl_dtype(input.dtype)
    rows, cols = input.shape[-2:]
    x = input.reshape(-1, rows, cols)
    result = torch.empty(input.shape, dtype=input.dtype, device=input.device)
    if result.numel():
        block, grid = blocks_and_grid(x.shape[0] * rows, cols)
        _triangle_kernel[grid](x, result, rows, cols, *x.stride(), diagonal, upper, block)
    return result if out is None else out.resize_(result.shape).copy_(result)


@aten("triu.default", "triu.out")
def triu(input, diagonal=0, *, out=None):
    """The elements on and above the `diagonal`-th diagonal of the last two dims."""
    return _triangle(input, diagonal, True, out)


@aten("tril.default", "tril.out")
def tril(input, diagonal=0, *, out=None):
    """The elements on and below the `diagonal`-th diagonal of the last two dims."""
    return _triangle(input, diagonal, False, out)


@aten("triu_.default")
def triu_(input, diagonal=0):
    return input.copy_(_triangle(input, diagonal, True))


@aten("tril_.default")
def tril_(input, diagonal=0):
    return input.copy_(_triangle(input, diagonal, False))
