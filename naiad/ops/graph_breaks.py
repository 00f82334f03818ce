"""naiad.ops' entry points under `torch.compile`: graph nodes where the op has a custom-op twin,
eager calls between compiled graphs where it has none.

A direct call (`naiad.ops.softmax(x, -1)`) launches kernels from Python: it reads its tensors'
data pointers and strides and calls the back end's launcher, which dynamo cannot trace (given
fake tensors the launch failed: "rshift_cpu not implemented for 'UInt64'"). So each exported
op is one of two kinds:

- **in the graph**: while compiling (`torch.compiler.is_compiling()`, a constant to dynamo) the
  entry point calls its `torch.ops.naiad` custom op instead (mirrors.py, attention_ops.py), which
  the graph records as a node with torch's meta kernel for shapes and runs later on real
  tensors with Naiad's kernels; autograd follows the op's formula (derivatives.py). Eager calls
  that record a gradient take that path too where the op has a formula and the plain function
  no autograd of its own (the pointwise ops, reductions, products, embedding, nll_loss: the
  `differentiable` entries). Other eager calls call the plain function: the custom op's trip
  through the dispatcher costs a few microseconds, a small op's whole host time is about six,
  and the check `is_compiling()` costs about what the `torch.compiler.disable` mark it
  replaced did (relu 6.6 -> 6.7 us, softmax 8.1 -> 7.9 us). A call with `out=` stays eager.
- **eager**: the function marked with `torch.compiler.disable`: dynamo ends its graph at the
  call, runs it on real tensors, autograd included, and compiles on after it: the ops in
  `EAGER`, the in-place variants (every name ending in "_"), the ops mirrors.py leaves out
  (unique's variants), and user-made `@pointwise` ops (facility.py marks their calls).
"""

from __future__ import annotations

import functools
import inspect

import torch

__all__ = ["EAGER", "compiled_as", "run_eagerly_under_compile", "table_call"]

# Exported ops without a custom-op twin: results whose shape depends on the data (nonzero,
# unique), random draws (a seed per call on the host), batch_norm (updates its running
# statistics in place), the in-place variants (every name ending in "_"), and compositions
# not given one yet.
EAGER = ("batch_norm", "bernoulli", "dropout", "multinomial", "nonzero", "one_hot", "rand",
         "randn", "take_along_dim", "unique")  # fmt: skip

_OUT_NAMES = ("out", "values", "indices")


def run_eagerly_under_compile(entry):
    """`entry` marked to run eagerly under torch.compile (the original reachable as
    `__wrapped__`)."""
    return torch.compiler.disable(entry)


def compiled_as(fn, traced, differentiable: bool = False):
    """`fn` for eager calls, `traced` (the same call through custom ops) while compiling, and,
    where `differentiable`, for eager calls that record a gradient (a tensor argument requires
    one and grad mode is on)."""
    eager = torch.compiler.disable(fn)
    compiling = torch.compiler.is_compiling

    def entry(*args, **kwargs):
        if compiling():
            return traced(*args, **kwargs) if _no_out(kwargs) else eager(*args, **kwargs)
        if differentiable and torch.is_grad_enabled() and _records(args) and _no_out(kwargs):
            return traced(*args, **kwargs)
        return fn(*args, **kwargs)

    functools.update_wrapper(entry, fn)
    return entry


def _no_out(kwargs) -> bool:
    return all(kwargs.get(name) is None for name in _OUT_NAMES)


def _records(args) -> bool:
    """Whether a tensor argument, or one in a list (cat's), requires a gradient (a loop:
    any() over a generator costs a small op's call a microsecond)."""
    for a in args:
        if isinstance(a, torch.Tensor):
            if a.requires_grad:
                return True
        elif isinstance(a, (list, tuple)):
            for t in a:
                if isinstance(t, torch.Tensor) and t.requires_grad:
                    return True
    return False


def table_call(fn, packet):
    """The call of `fn` (a table function: its positional parameters as the ATen schema lists
    them, its keyword-only ones by the schema's names) as a call of the `torch.ops.naiad`
    packet, which resolves the overload as ATen's does. Positional parameters passed by keyword
    (`input=`, whose schema name is `self`) are passed by position."""
    positional = [
        (p.name, p.default)
        for p in inspect.signature(fn).parameters.values()
        if p.kind is p.POSITIONAL_OR_KEYWORD
    ]

    def traced(*args, **kwargs):
        rest = positional[len(args) :]
        if any(name in kwargs for name, _ in rest):
            args = (*args, *[kwargs.pop(name, default) for name, default in rest])
        for name in _OUT_NAMES:
            kwargs.pop(name, None)
        return packet(*args, **kwargs)

    return traced
