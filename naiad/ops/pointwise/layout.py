"""The index space of an elementwise op: broadcast shapes, strides, and the fewest dims.

A generated kernel walks the output's elements in one flat range and recovers each operand's
offset from the dims of that range. Fewer dims mean fewer divisions per element, so the walk
first drops dims of size 1, orders the rest as the output lies in memory (outermost first), and
merges neighbours that every operand steps through as one (stride[i] == stride[i+1] * size[i+1]).
Contiguous operands of one shape collapse to a single dim of stride 1, which the compiler
specializes on and vectorizes.
"""

from __future__ import annotations

import torch

__all__ = ["Walk", "broadcast_shape", "broadcast_strides", "contiguous_walk", "walk"]


def broadcast_shape(shapes) -> tuple[int, ...]:
    """The shape `shapes` broadcast to (torch's rule; torch.broadcast_shapes costs tens of
    microseconds a call, a launch's budget)."""
    first = shapes[0]
    if all(s == first for s in shapes):
        return tuple(first)
    rank = max(len(s) for s in shapes)
    result = [1] * rank
    for s in shapes:
        for i, n in enumerate(s, rank - len(s)):
            if n != 1:
                if result[i] not in (1, n):
                    raise RuntimeError(
                        f"The size of tensor a ({result[i]}) must match the size of tensor b "
                        f"({n}) at non-singleton dimension {i}"
                    )
                result[i] = n
    return tuple(result)


def broadcast_strides(tensor: torch.Tensor, shape: tuple[int, ...]) -> list[int]:
    """`tensor`'s element strides when broadcast to `shape` (0 along broadcast dims)."""
    lead = len(shape) - tensor.dim()
    strides = [0] * lead
    for size, stride, target in zip(tensor.shape, tensor.stride(), shape[lead:], strict=True):
        strides.append(stride if size == target else 0)
    return strides


class Walk:
    """The collapsed index space: `sizes` (outermost first) and one stride list per operand
    (the output's last); `largest` is the farthest element offset any operand reaches."""

    __slots__ = ("largest", "sizes", "strides")

    def __init__(self, sizes, strides, largest=None):
        self.sizes = sizes
        self.strides = strides
        if largest is None:
            largest = max(
                (sum((n - 1) * abs(s) for n, s in zip(sizes, st, strict=True)) for st in strides),
                default=0,
            )
        self.largest = largest


def contiguous_walk(n: int, operands: int) -> Walk:
    """The walk of `operands` contiguous tensors of one shape with `n` elements."""
    return Walk([n], [[1] for _ in range(operands)], largest=n - 1)


def _order(sizes, out_strides):
    """Dims outermost first as the output lies in memory (a stable sort, so a contiguous output
    keeps its order)."""
    dims = [d for d, n in enumerate(sizes) if n != 1]
    return sorted(dims, key=lambda d: -abs(out_strides[d]))


def walk(shape: tuple[int, ...], strides: list[list[int]]) -> Walk:
    """Collapse `shape` walked with each operand's `strides` (the output's last)."""
    dims = _order(shape, strides[-1])
    sizes: list[int] = []
    merged: list[list[int]] = [[] for _ in strides]
    for d in dims:
        n = shape[d]
        if sizes and all(m[-1] == st[d] * n for m, st in zip(merged, strides, strict=True)):
            sizes[-1] *= n
            for m, st in zip(merged, strides, strict=True):
                m[-1] = st[d]
            continue
        sizes.append(n)
        for m, st in zip(merged, strides, strict=True):
            m.append(st[d])
    if not sizes:  # one element
        return Walk([1], [[0] for _ in strides])
    return Walk(sizes, merged)
