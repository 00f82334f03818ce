"""In-place direct calls that autograd records, as torch records its own in-place ops.

`naiad.ops.mul_(y, w)` writes its result into `y` with Naiad's kernel, which autograd does not
see: where `y` (or `w`) is part of a graph, a backward through `y` would have used the
gradient of the value `y` had before (`mul_` by `w` gave `1` where torch gives `w`), without
an error. So where grad mode is on and a tensor argument requires a gradient, an in-place
call is made of recorded steps instead: its out-of-place twin (`mul`, whose custom op has a
derivative) computes the result from a clone of the target, and `target.copy_(result)` writes
it back, which bumps the target's version and rebases its history, so that a backward reaches
the old value through the clone. A leaf that requires a gradient is refused by `copy_` with
torch's own error. The random fills (`normal_`, `uniform_`) have no twin: their values do not
depend on the target, which is overwritten by a tensor drawn outside the graph (gradient zero,
as torch's). Other calls run the in-place kernel as before: no clone, no copy.
"""

from __future__ import annotations

import functools

import torch

from .graph_breaks import records

__all__ = ["recorded_in_place"]


def recorded_in_place(fn, entry, twin):
    """The entry point of in-place op `fn`: `entry` (its plain entry point) unless autograd
    records the call (see the module doc), then `twin()` (the out-of-place entry point, looked
    up at the call; None for a random fill) on a clone of the target, copied back."""

    def in_place(*args, **kwargs):
        if torch.is_grad_enabled() and records((*args, *kwargs.values())):
            return _recorded(fn, twin(), args, kwargs)
        return entry(*args, **kwargs)

    functools.update_wrapper(in_place, fn)
    in_place.runs_eagerly_under_compile = getattr(entry, "runs_eagerly_under_compile", False)
    return in_place


def _recorded(fn, twin, args, kwargs):
    target, rest = args[0], args[1:]
    if twin is None:  # a random fill: values that do not depend on the target
        drawn = torch.empty_like(target)
        with torch.no_grad():
            fn(drawn, *rest, **kwargs)
        return target.copy_(drawn)
    return target.copy_(twin(target.clone(), *rest, **kwargs))
