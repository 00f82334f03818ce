"""Running a torch.autograd.Function only where a gradient is wanted, and as directly as torch
allows where it is.

`Function.apply` costs tens of microseconds a call on the host (it wraps inputs, records the
graph node, checks outputs), as much as a small kernel's whole launch. Where grad mode is off
or no tensor argument requires a gradient there is no graph to record, so `apply` here runs the
function's forward directly, with a context that keeps nothing. Where it records, the Python
classmethod `Function.apply` (bound default arguments for a `setup_context` function, the
functorch check, dead functorch wrappers unwrapped by a generator) costs about 1-2 us more than
the C apply it ends in; for a function without `setup_context` and no functorch transform
active, `apply` does what that classmethod does and calls the C apply itself.
"""

from __future__ import annotations

import torch

__all__ = ["apply"]

# The C apply behind `Function.apply` (`super().apply` there), torch's functorch check and
# its unwrapping of dead wrappers; where this torch has none of them, `Function.apply` alone.
_C_APPLY = getattr(torch._C, "_FunctionBase", type).__dict__.get("apply")
_TRANSFORMS_ACTIVE = getattr(torch._C, "_are_functorch_transforms_active", None)
_UNWRAP_IF_DEAD = getattr(getattr(torch._C, "_functorch", None), "unwrap_if_dead", None)
_NO_SETUP_CONTEXT = torch.autograd.function._SingleLevelFunction.setup_context
_DIRECT = None not in (_C_APPLY, _TRANSFORMS_ACTIVE, _UNWRAP_IF_DEAD)


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
                return _recorded(function, args)
    return function.forward(_NoGraph(), *args)


def _recorded(function, args):
    """`function.apply(*args)`: through the C apply as `Function.apply` calls it (no
    `setup_context`, so no defaults bound; no functorch transform active; dead functorch
    wrappers unwrapped), else through `Function.apply` itself."""
    if not _DIRECT or function.setup_context is not _NO_SETUP_CONTEXT or _TRANSFORMS_ACTIVE():
        return function.apply(*args)
    tensor, unwrap = torch.Tensor, _UNWRAP_IF_DEAD
    unwrapped = [unwrap(a) if isinstance(a, tensor) else a for a in args]
    return _C_APPLY.__get__(None, function)(*unwrapped)
