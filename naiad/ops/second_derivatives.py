"""Gradients that cannot be differentiated again raise when they are: never a silent zero.

naiad.ops computes many gradients with fused backward kernels (`tanh_backward`, the norms' and
softmax's backward ops, flash attention's backward) that have no derivative of their own. A
program asking for a second derivative (`torch.autograd.grad(..., create_graph=True)`, then a
gradient of that gradient: a gradient penalty, a Hessian-vector product) would otherwise get
one that is wrong without an error: torch treats a custom op without a derivative as constant
(with a warning), and a Function's backward run in grad mode records nothing, so the parts of a
gradient that pass through such a kernel drop out of the second backward. Here such a backward
runs without recording, as under torch's `once_differentiable`, and where one of its inputs
requires a gradient its results are given a graph node that raises, naming the op, if a second
backward reaches it. Under `naiad.ops.use()` torch's own formulas differentiate Naiad's kernels,
and second derivatives work; so do they through the direct calls whose gradients are made of
ops that have derivatives themselves (`exp`, `mul`, ...).
"""

from __future__ import annotations

import functools
import types

import torch
from torch._C import _functions

__all__ = ["computed_once", "differentiable_once", "mark_once", "reaches"]


def _message(op: str) -> bytes:
    return (
        f"naiad.ops: the second derivative of {op} is not implemented (its gradient comes from "
        "a fused backward kernel that has no derivative); for a gradient of a gradient, call "
        "torch's op, or run under naiad.ops.use(), where torch's formulas differentiate Naiad's "
        "kernels"
    ).encode()


def mark_once(op: str, results, inputs):
    """`results` (a backward's gradients, computed without recording: a tensor, None or a
    tuple of them) as they are where no tensor of `inputs` requires a gradient, else each
    tensor made the output of one node that raises when differentiated. The node also takes
    the inputs that require a gradient, so that a second backward towards any of them passes
    through it (a node reaching only new leaves would be skipped, its part dropped)."""
    connected = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    if not connected:
        return results
    single = not isinstance(results, tuple)
    items = (results,) if single else results
    where = [i for i, r in enumerate(items) if isinstance(r, torch.Tensor)]
    if not where:
        return results
    error = _functions.DelayedError(_message(op), len(connected) + len(where))
    marked = error(*connected, *[items[i].detach().requires_grad_() for i in where])
    items = list(items)
    for i, tensor in zip(where, marked[len(connected) :], strict=True):
        items[i] = tensor
    return items[0] if single else tuple(items)


def computed_once(op: str, compute, inputs):
    """`compute()` (a backward whose kernels have no derivative) as it is outside grad mode;
    in grad mode (a `create_graph` backward) run without recording, its results marked by
    `mark_once` against `inputs` (the gradients and tensors it reads)."""
    if not torch.is_grad_enabled():
        return compute()
    with torch.no_grad():
        results = compute()
    return mark_once(op, results, inputs)


def differentiable_once(op: str):
    """Decorate a torch.autograd.Function's `backward` whose kernels have no derivative (see
    the module doc): it runs as `computed_once`."""

    def decorate(backward):
        @functools.wraps(backward)
        def wrapper(ctx, *grads):
            compute = functools.partial(backward, ctx, *grads)
            return computed_once(op, compute, (*grads, *ctx.saved_tensors))

        return wrapper

    return decorate


def reaches(fn, underived, seen=None) -> bool:
    """Whether `fn` (a formula) names an op for which `underived(name)` holds (a custom op
    without a derivative, as a `torch.ops.naiad.<name>` attribute), in its code, in the
    functions its closure holds or in the module functions it calls, transitively."""
    seen = set() if seen is None else seen
    if id(fn) in seen or not isinstance(fn, types.FunctionType):
        return False
    seen.add(id(fn))
    pending, called = [fn.__code__], []
    while pending:
        code = pending.pop()
        if any(underived(name) for name in code.co_names):
            return True
        pending += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        called += [fn.__globals__.get(name) for name in code.co_names]
    called += [cell.cell_contents for cell in fn.__closure__ or () if _assigned(cell)]
    return any(reaches(f, underived, seen) for f in called)


def _assigned(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (a cell not yet assigned raises)
    except ValueError:
        return False
    return True
