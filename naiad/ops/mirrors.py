"""Naiad's ATen overloads as torch custom ops, `torch.ops.naiad.<op>.<overload>`, for compiled
graphs.

A direct call (`naiad.ops.relu(x)`) launches kernels from Python, which dynamo cannot trace. A
custom op is opaque to it instead: the graph records `torch.ops.naiad.relu` and runs it later
on real tensors. Each functional overload of the table (registry.py: no out=, no in-place, no
aliased result), and each composite one Naiad has a function for, gets one, generically, with
the ATen overload's very schema:

- its CPU and CUDA kernels are Naiad's function for the overload (arguments it does not handle,
  `Unsupported`, go to the ATen overload itself);
- its fake implementation is the ATen overload run on fake tensors: torch's meta kernels say
  the results' shapes, dtypes and strides, so nothing is written per op;
- its autograd formula, where it has one, is in derivatives.py.

Same schema, same overload names: `torch.ops.naiad.add(x, 2.0)` resolves `add.Scalar` as
`torch.ops.aten.add` would. Left out: overloads whose result's shape depends on the data
(nonzero, unique: a fake tensor cannot say it), random ones (their seed is drawn on the host at
each call) and `native_batch_norm`, which updates its running statistics without saying so in
its schema.
"""

from __future__ import annotations

import inspect

import torch

from .dtypes import Unsupported
from .registry import every_function

__all__ = ["DATA_DEPENDENT", "LIBRARY", "define_all", "mirrored"]

DATA_DEPENDENT = ("nonzero", "_unique2", "unique_consecutive", "unique_dim",
                   "unique_dim_consecutive", "multinomial", "bernoulli", "native_dropout",
                   "native_batch_norm")  # fmt: skip

LIBRARY = torch.library.Library("naiad", "DEF")


def _aten(overload: str):
    op, _, name = overload.partition(".")
    return getattr(getattr(torch.ops.aten, op), name)


def _functional(schema) -> bool:
    return not schema.is_mutable and all(r.alias_info is None for r in schema.returns)


def _kernel(fn, aten_op):
    """Naiad's function, or the ATen overload where it raises Unsupported (which, with the
    switch on, is Naiad's kernel with torch's as its own fallback). The dispatcher passes a
    schema's positional arguments by position; those the function takes by keyword only
    (`sub.Scalar`'s alpha) go by name."""
    parameters = inspect.signature(fn).parameters.values()
    kinds = [p.kind for p in parameters]
    taken = kinds.count(inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [a.name for a in aten_op._schema.arguments if not a.kwarg_only]
    by_name = () if inspect.Parameter.VAR_POSITIONAL in kinds else tuple(names[taken:])

    def kernel(*args, **kwargs):
        if by_name and len(args) > taken:
            kwargs.update(zip(by_name, args[taken:]))
            args = args[:taken]
        try:
            return fn(*args, **kwargs)
        except Unsupported:
            return aten_op(*args, **kwargs)

    kernel.__name__ = kernel.__qualname__ = f"naiad_{fn.__name__}"
    return kernel


def _fake(aten_op):
    def fake(*args, **kwargs):
        return aten_op(*args, **kwargs)

    return fake


def _mirror(overload: str, fn) -> bool:
    """Define `naiad::<overload>` after the ATen one, where it is functional; say whether."""
    aten_op = _aten(overload)
    if overload.split(".")[0] in DATA_DEPENDENT or not _functional(aten_op._schema):
        return False
    LIBRARY.define(str(aten_op._schema).removeprefix("aten::"))
    name = overload.removesuffix(".default")
    kernel = _kernel(fn, aten_op)
    for key in ("CPU", "CUDA"):
        LIBRARY.impl(name, kernel, key)
    torch.library.register_fake(f"naiad::{name}", _fake(aten_op), lib=LIBRARY)
    return True


class _Mirrored:
    """The overloads given a custom op, once the table is whole (define_all)."""

    overloads: frozenset = frozenset()


def define_all() -> frozenset:
    """Give every functional overload of the table, and every composite, its custom op (once:
    the package's import calls it after every op module has filled the table); return those
    overloads."""
    if not _Mirrored.overloads:
        functions = every_function()
        _Mirrored.overloads = frozenset(name for name, fn in functions.items() if _mirror(name, fn))
    return _Mirrored.overloads


def mirrored() -> frozenset:
    """The ATen overloads that have a `torch.ops.naiad` twin ("relu.default", "add.Scalar")."""
    return _Mirrored.overloads
