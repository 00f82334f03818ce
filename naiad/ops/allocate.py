"""Allocating an op's result at the host's least cost.

`torch.empty(shape, dtype=..., device=...)` parses its size argument slowly when it is one
sequence, slowest of all a `torch.Size` (a tensor's own `.shape`): 3.5 us a call on the
development CPU, against 1.6 us for the same sizes passed as separate ints. A small op pays
it on every call (a Llama training step allocates ~180 results), so results are made here,
and handed to an `out=` tensor the one way every op does (`written_to`).
"""

from __future__ import annotations

import torch

__all__ = ["check_castable", "empty", "written_to"]


def empty(shape, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """`torch.empty(shape, dtype=dtype, device=device)`, contiguous, for any sequence of sizes
    (torch.empty takes no sizes at all for a 0-dim result, so that one passes `()`)."""
    if shape:
        return torch.empty(*shape, dtype=dtype, device=device)
    return torch.empty((), dtype=dtype, device=device)


def written_to(result: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    """`result`, or where the call gave `out=`, `out` resized to its shape and holding its
    values (the op computed into a fresh tensor first, so `out` may overlap the inputs). An
    `out` of a dtype the result cannot be cast to without changing kind (float into integer,
    integer into bool) is refused, as torch refuses it, not truncated."""
    if out is None:
        return result
    check_castable(result.dtype, out)
    return out.resize_(result.shape).copy_(result)


def check_castable(result: torch.dtype, out: torch.Tensor) -> None:
    """torch's refusal of an `out=` whose dtype a `result` dtype cannot be cast to without
    changing kind (float into integer, integer into bool)."""
    if not torch.can_cast(result, out.dtype):
        raise RuntimeError(
            f"result type {result} can't be cast to the desired output type {out.dtype}"
        )
