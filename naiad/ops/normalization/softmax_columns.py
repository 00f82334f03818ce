"""softmax and log_softmax, forward and backward, along a dim that is not the last, read and
written where the tensors lie, on the CPU.

A contiguous operand along such a dim is (O, C, I): O outer positions, the dim's C, and a
contiguous inner run of I (a (batch, classes, height, width) softmax over the classes). A program
takes BLOCK_I inner positions of one outer position with the whole of C in one tile
[BLOCK_C, BLOCK_I] of contiguous vectors, reduced over axis 0: one read, one exp an element, no
division per element to find a row. The row form (softmax.py) copies such an operand into rows
and its result back out: 3-6x torch's time on the CPU for (8, 19, 64, 64) over dim 1.
"""

from __future__ import annotations

import math

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..dtypes import tl_dtype
from ..reduce.kernels import _max
from ..reduce.launch import TILE

__all__ = ["column_sizes", "columns_launch"]

# The dim's length held in one tile, and the fewest inner positions worth a tile (fewer: the
# row form's copies cost less than the tiles' masked lanes).
_MOST_C = 256
_LEAST_I = 16
_INDEX32_LIMIT = 2**31 - 1


@jit
def _tile(C, I, INDEX64: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_I: tl.constexpr):
    """The offsets and mask of this program's tile [BLOCK_C, BLOCK_I]: the whole dim at
    BLOCK_I inner positions of one outer position, program (outer, block) of a 1-D grid."""
    program = tl.program_id(0)
    if INDEX64:
        program = program.to(tl.int64)
    blocks = tl.cdiv(I, BLOCK_I)
    outer = program // blocks
    inner = (program % blocks) * BLOCK_I + tl.arange(0, BLOCK_I)
    along = tl.arange(0, BLOCK_C)
    if INDEX64:
        inner, along = inner.to(tl.int64), along.to(tl.int64)
    offsets = outer * C * I + along[:, None] * I + inner[None, :]
    return offsets, (along[:, None] < C) & (inner < I)[None, :]


@jit
def softmax_columns_kernel(x, out, C, I, LOG: tl.constexpr, COMPUTE: tl.constexpr,
                           INDEX64: tl.constexpr, BLOCK_C: tl.constexpr,
                           BLOCK_I: tl.constexpr):  # fmt: skip
    offsets, mask = _tile(C, I, INDEX64, BLOCK_C, BLOCK_I)
    v = tl.load(x + offsets, mask=mask, other=float("-inf")).to(COMPUTE)
    peak = tl.reduce(v, 0, _max)
    shifted = v - tl.where(peak == float("-inf"), 0.0, peak)[None, :]
    e = tl.exp(shifted)
    total = tl.sum(e, 0)
    result = shifted - tl.log(total)[None, :] if LOG else e / total[None, :]
    tl.store(out + offsets, result.to(out.dtype.element_ty), mask=mask)


@jit
def softmax_columns_backward_kernel(grad, out, y, C, I, LOG: tl.constexpr,
                                    COMPUTE: tl.constexpr, INDEX64: tl.constexpr,
                                    BLOCK_C: tl.constexpr, BLOCK_I: tl.constexpr):  # fmt: skip
    """out = y * (grad - sum(grad * y)) for softmax; grad - exp(y) * sum(grad) for
    log_softmax (y is the forward's output), the sums along the dim."""
    offsets, mask = _tile(C, I, INDEX64, BLOCK_C, BLOCK_I)
    g = tl.load(grad + offsets, mask=mask, other=0).to(COMPUTE)
    o = tl.load(y + offsets, mask=mask, other=0).to(COMPUTE)
    if LOG:
        result = g - tl.exp(o) * tl.sum(g, 0)[None, :]
    else:
        result = o * (g - tl.sum(g * o, 0)[None, :])
    tl.store(out + offsets, result.to(out.dtype.element_ty), mask=mask)


def column_sizes(x, d: int):
    """(O, C, I) of a contiguous `x` along dim `d`, or None where the column form does not
    serve: a non-contiguous operand, the last dim, a dim longer than a tile holds, an inner
    run too short for its lanes, or a GPU (sm_90a spilled 2-10 registers in each of these
    kernels, at 4 and at 8 warps: the row form stays there)."""
    if x.device.type != "cpu" or d == x.dim() - 1 or not x.is_contiguous():
        return None
    c, i = x.shape[d], math.prod(x.shape[d + 1 :])
    if not 0 < c <= _MOST_C or i < _LEAST_I or not x.numel():
        return None
    return math.prod(x.shape[:d]), c, i


def columns_launch(x, d: int, operands, compute: torch.dtype, log: bool, backward: bool):
    """Run the forward (operands: x, out) or the backward (grad, out, y) of softmax along dim
    `d` of `x` in the column form, which must serve (`column_sizes`), and return its bound
    launch, taking the same operands."""
    o, c, i = column_sizes(x, d)
    block_c = 1 << (c - 1).bit_length()
    block_i = max(_LEAST_I, min(1 << (i - 1).bit_length(), TILE["cpu"] // block_c))
    grid = (-(-i // block_i) * o,)
    index64 = x.numel() + block_c * block_i > _INDEX32_LIMIT
    kernel = softmax_columns_backward_kernel if backward else softmax_columns_kernel
    names = kernel.arg_names[: len(operands)]
    launch = kernel.bind_launch(
        names, grid, *operands, c, i, typed=names, LOG=log, COMPUTE=tl_dtype(compute),
        INDEX64=index64, BLOCK_C=block_c, BLOCK_I=block_i,
    )  # fmt: skip
    launch(*operands)
    return launch
