"""The ATen overloads of a unary op, made once for every unary op of the library.

A unary op `name` has `name.default` (returns a new tensor), `name.out` and the in-place
`name_.default`; all three are one PointwiseOp called three ways.
"""

from __future__ import annotations

from .registry import aten

__all__ = ["unary"]


def unary(name: str, op, doc: str, inplace: bool = True):
    """The public function `name(input, *, out=None)` over the PointwiseOp `op`, registered for
    `name.default` and `name.out` (and `name_.default` where `inplace`); returns it and its
    in-place twin (None where there is none)."""

    def function(input, *, out=None):
        return op(input, out=out)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    aten(f"{name}.default", f"{name}.out")(function)
    if not inplace:
        return function, None

    def in_place(input):
        return op.inplace(input)

    in_place.__name__ = in_place.__qualname__ = f"{name}_"
    in_place.__doc__ = f"In place: {doc}"
    aten(f"{name}_.default")(in_place)
    return function, in_place
