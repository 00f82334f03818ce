"""Python literals in a kernel, read as Triton's code generator reads them: a number, a string or
None is a constexpr, a tuple display a `tl.tuple` of them. Naiad's frontend keeps literals as
Python values (they fold as Python's), so an attribute Python's value lacks (`(10).type`,
`(5, 6, 7).type`) is looked up on the kernel language's view of it; the compiler and the
interpreter both read attributes through `attribute_of`."""

from __future__ import annotations

import builtins

from .core import constexpr, tuple


def attribute_of(value, name: str):
    """`value.name` in a kernel, a literal read as Triton sees it where Python's value lacks
    `name`."""
    # Only a literal is asked first: `hasattr` on a kernel value would run a property (`x.T`
    # emits a transpose) once more.
    if _is_literal(value) and not hasattr(value, name):
        value = _as_kernel_value(value)
    return getattr(value, name)


def _is_literal(value) -> bool:
    literal = isinstance(value, bool | int | float | str) or value is None
    return literal or (isinstance(value, builtins.tuple) and not isinstance(value, tuple))


def _as_kernel_value(value):
    if isinstance(value, builtins.tuple) and not isinstance(value, tuple):
        return tuple([_as_kernel_value(v) for v in value])
    if _is_literal(value):
        return constexpr(value)
    return value
