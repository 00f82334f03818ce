"""repeat: the operand tiled `repeats` times along each dim. No kernel of its own: the operand,
given a new size-1 dim before each of its dims, is expanded (stride 0) to (r0, n0, r1, n1, ...)
and copied contiguously by the pointwise facility's copy, whose walk reads the stride-0 dims
without moving data; the copy then folds into the result's shape."""

from __future__ import annotations

import torch

from ..allocate import written_to
from ..convert import to
from ..registry import aten

__all__ = ["repeat"]


@aten("repeat.default", "repeat.out")
def repeat(input, repeats, *, out=None):
    """input repeated repeats[d] times along each dim (leading repeats add dims)."""
    repeats = list(repeats)
    if len(repeats) < input.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    shape = [1] * (len(repeats) - input.dim()) + list(input.shape)
    spread = input.reshape(shape)
    interleaved = []
    for n, r in zip(shape, repeats, strict=True):
        interleaved += [r, n]
    expanded = spread.reshape([s for n in shape for s in (1, n)]).expand(interleaved)
    result_shape = [n * r for n, r in zip(shape, repeats, strict=True)]
    result = torch.empty(interleaved, dtype=input.dtype, device=input.device)
    if result.numel():
        to(expanded, input.dtype, out=result)
    result = result.view(result_shape)
    return written_to(result, out)
