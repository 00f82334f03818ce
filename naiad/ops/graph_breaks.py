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
import importlib.abc
import importlib.util
import inspect
import sys

import torch

__all__ = ["EAGER", "EagerTwin", "compiled_as", "out_refusal", "records",
           "run_eagerly_under_compile", "table_call"]  # fmt: skip

# Exported ops without a custom-op twin: results whose shape depends on the data (nonzero,
# unique, one_hot's classes counted from the largest index by default), random draws (a seed
# per call on the host), batch_norm (updates its running statistics in place), and the
# in-place variants (every name ending in "_").
EAGER = ("batch_norm", "bernoulli", "dropout", "multinomial", "nonzero", "one_hot", "rand",
         "randn", "unique")  # fmt: skip

_OUT_NAMES = ("out", "values", "indices")


# Twins made before torch._dynamo was imported, to be marked when it is (_DynamoImport).
_waiting: list = []


class EagerTwin:
    """`fn` marked with `torch.compiler.disable` (`marked`), for the calls made while dynamo
    traces. Marking imports torch._dynamo, about a second (naiad.ops' import went 2.0 -> 3.2
    s), which a program that never compiles should not pay: a twin made before dynamo is loaded
    is marked right after dynamo's import (`_DynamoImport`), which torch.compile makes before
    it traces anything, so `marked` is there whenever `torch.compiler.is_compiling()` is True."""

    __slots__ = ("fn", "marked")

    def __init__(self, fn):
        self.fn = fn
        self.marked = None
        if "torch._dynamo" in sys.modules:
            self.marked = torch.compiler.disable(fn)
        else:
            _waiting.append(self)


class _DynamoImport(importlib.abc.MetaPathFinder):
    """Ahead of Python's finders until torch._dynamo is imported: it lets the regular finders
    find it, then marks the waiting twins once its module has run."""

    def find_spec(self, name, path, target=None):
        if name != "torch._dynamo":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            for twin in _waiting:
                twin.marked = torch.compiler.disable(twin.fn)
            _waiting.clear()

        spec.loader.exec_module = exec_module
        return spec


if "torch._dynamo" not in sys.modules:
    sys.meta_path.insert(0, _DynamoImport())


def run_eagerly_under_compile(fn):
    """`fn`, run eagerly under torch.compile: dynamo ends its graph at the call (the function
    it wraps reachable as `__wrapped__`; `runs_eagerly_under_compile` says so)."""
    twin = EagerTwin(fn)
    compiling = torch.compiler.is_compiling

    def entry(*args, **kwargs):
        if compiling():
            return twin.marked(*args, **kwargs)
        return fn(*args, **kwargs)

    functools.update_wrapper(entry, fn)
    entry.runs_eagerly_under_compile = True
    return entry


def compiled_as(fn, traced, differentiable: bool = False, out_refused: bool = False):
    """`fn` for eager calls, `traced` (the same call through custom ops) while compiling, and,
    where `differentiable`, for eager calls that record a gradient (a tensor argument requires
    one and grad mode is on). Where `out_refused`, such a call with `out=` raises, as torch's
    differentiable functions do: `out` would hold the values without their history."""
    eager = EagerTwin(fn)
    compiling = torch.compiler.is_compiling

    def entry(*args, **kwargs):
        if compiling():
            if _no_out(kwargs):
                return traced(*args, **kwargs)
            return eager.marked(*args, **kwargs)
        if differentiable and torch.is_grad_enabled() and records(args):
            if _no_out(kwargs):
                return traced(*args, **kwargs)
            if out_refused:
                raise out_refusal(fn.__name__)
        return fn(*args, **kwargs)

    functools.update_wrapper(entry, fn)
    return entry


def out_refusal(name: str) -> RuntimeError:
    """torch's error for a call with `out=` that records a gradient: `out` would hold the
    values without their history."""
    return RuntimeError(
        f"{name}(): functions with out=... arguments don't support automatic differentiation, "
        "but one of the arguments requires grad."
    )


def _no_out(kwargs) -> bool:
    return all(kwargs.get(name) is None for name in _OUT_NAMES)


def records(values) -> bool:
    """Whether a tensor among `values` (arguments), or one in a list (cat's), requires a
    gradient (a loop: any() over a generator costs a small op's call a microsecond)."""
    for a in values:
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
