"""triu and tril: the upper or lower triangle of the last two dims, zeros elsewhere; one kernel,
each program a tile of the batch's rows (row_blocks.py). The in-place forms only write zeros
over the other triangle, in the input as it lies, as torch's do: so a view whose elements share
memory (an expanded or an overlapping one) ends as torch leaves it, where a copy back would
have written every element (or been refused)."""

from __future__ import annotations

import math

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import empty, written_to
from ..dtypes import tl_dtype
from ..kept import KeptTable
from ..registry import aten
from .row_blocks import tile, tiles_and_grid

__all__ = ["tril", "triu"]


@jit(do_not_specialize=["B", "R", "C", "diagonal"])
def _triangle_kernel(x, out, B, R, C, s_b, s_r, s_c, diagonal, UPPER: tl.constexpr,
                     IN_PLACE: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_R: tl.constexpr,
                     BLOCK_C: tl.constexpr):  # fmt: skip
    """out = the triangle of x, or, IN_PLACE, zeros written over x's other triangle (`out` not
    read), for the batch of B matrices of R x C."""
    b, r, c, mask = tile(B, R, C, BLOCK_B, BLOCK_R, BLOCK_C)
    if UPPER:
        keep = c - r >= diagonal
    else:
        keep = c - r <= diagonal
    at = x + b * s_b + r * s_r + c * s_c
    if IN_PLACE:
        zeros = tl.zeros(mask.shape, x.dtype.element_ty)
        tl.store(at, zeros, mask=mask & ~keep)
    else:
        v = tl.load(at, mask=mask & keep, other=0)
        tl.store(out + (b * R + r) * C + c, v, mask=mask)


# The launch per kind of call (the input's shape, strides, dtype and device, the diagonal, the
# side, in place or not): its grid and its kernel's launch bound to them
# (JITFunction.bind_launch), so that a call only allocates and launches; 1024 kinds.
_LAUNCHES = KeptTable(1024)


def _launch(x, result, diagonal, upper, in_place):
    """The bound launch of `x` (a matrix, or a batch of them in one leading dim) into
    `result` (`x` itself in place) for this kind of call, or None where there is nothing to
    do."""
    if not result.numel():
        return None
    rows, cols = x.shape[-2:]
    strides = x.stride() if x.dim() == 3 else (0, *x.stride())  # a matrix: a batch of one
    batch = result.numel() // (rows * cols)
    *blocks, grid = tiles_and_grid(batch, rows, cols, x.device)
    return _triangle_kernel.bind_launch(
        ("x", "out"), grid, x, result, batch, rows, cols, *strides, diagonal, upper, in_place,
        *blocks,
    )  # fmt: skip


def _run(input, x, result, diagonal, upper, in_place):
    key = (input.shape, input.stride(), input.dtype, input.device, diagonal, upper, in_place)
    launch = _LAUNCHES.get(key)
    if launch is None:
        tl_dtype(input.dtype)
        launch = _LAUNCHES.put(key, [_launch(x, result, diagonal, upper, in_place)])
    if launch[0] is not None:
        launch[0](x, result)


def _check(input):
    if input.dim() < 2:
        raise RuntimeError("triu/tril: input tensor must have at least 2 dimensions")


def _triangle(input, diagonal, upper, out=None):
    _check(input)
    # a matrix is read as it lies (no view made per call); a batch as one leading dim (a
    # flattening, which an empty batch takes too: a reshape to -1 rows cannot size it)
    x = input if input.dim() == 2 else input.flatten(0, -3)
    result = empty(input.shape, input.dtype, input.device)
    _run(input, x, result, diagonal, upper, False)
    return written_to(result, out)


def _triangle_in_place(input, diagonal, upper):
    """Zeros over the other triangle of `input`, in place; where its batch dims do not merge
    into one (an expanded or a permuted batch), entry by entry of its first dim (rare: a
    launch each)."""
    _check(input)
    x = input
    if input.dim() > 3:
        try:
            x = input.view(math.prod(input.shape[:-2]), *input.shape[-2:])
        except RuntimeError:
            for entry in input.unbind(0):
                _triangle_in_place(entry, diagonal, upper)
            return input
    _run(input, x, x, diagonal, upper, True)
    return input


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
    return _triangle_in_place(input, diagonal, True)


@aten("tril_.default")
def tril_(input, diagonal=0):
    return _triangle_in_place(input, diagonal, False)
