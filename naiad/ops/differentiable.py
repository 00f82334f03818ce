"""Running a torch.autograd.Function only where a gradient is wanted.

`Function.apply` costs tens of microseconds a call on the host (it wraps inputs, records the
graph node, checks outputs), as much as a small kernel's whole launch. Where grad mode is off
or no tensor argument requires a gradient there is no graph to record, so `apply` here runs the
function's forward directly, with a context that keeps nothing.
"""

from __future__ import annotations

import torch

__all__ = ["apply"]


class _NoGraph:
    """The context a forward sees when no graph is recorded: what it saves is dropped, and
    attributes it sets stay on the object, which is thrown away."""

    def save_for_backward(self, *tensors):
        pass


def apply(function, *args):
    """`function.apply(*args)` where autograd records a graph, else `function.forward` (a
    loop: any() over a generator costs a small op's call a microsecond)."""
    if torch.is_grad_enabled():
        for a in args:
            if isinstance(a, torch.Tensor) and a.requires_grad:
                return function.apply(*args)
    return function.forward(_NoGraph(), *args)
