"""Type and attribute constraints for op declarations: a predicate with a description.

The description is what the verifier prints: `operand #0 must be signless-integer-like, but got
'f32'`. Constraints combine with `|`.
"""

from __future__ import annotations

from collections.abc import Callable

from .types import RankedTensorType, Type, element_type, is_float_like, is_integer_like
from .types import is_pointer_like as _is_pointer_like


class Constraint:
    """A named predicate over types (or attributes)."""

    __slots__ = ("description", "predicate")

    def __init__(self, description: str, predicate: Callable[[object], bool]):
        self.description = description
        self.predicate = predicate

    def __call__(self, candidate) -> bool:
        return self.predicate(candidate)

    def __or__(self, other) -> Constraint:
        left, right = self, as_constraint(other)
        return Constraint(
            f"{left.description} or {right.description}", lambda x: left(x) or right(x)
        )

    def __repr__(self) -> str:
        return f"Constraint({self.description})"


def as_constraint(spec) -> Constraint:
    """A Constraint from a Constraint, a class (isinstance) or a type instance (identity)."""
    if isinstance(spec, Constraint):
        return spec
    if isinstance(spec, type):
        return Constraint(spec.__name__, lambda x: isinstance(x, spec))
    if isinstance(spec, Type):
        return Constraint(f"'{spec}'", lambda x: x is spec)
    raise TypeError(f"not a constraint: {spec!r}")


def TensorOf(element) -> Constraint:
    """A ranked tensor whose element type satisfies `element`."""
    inner = as_constraint(element)
    return Constraint(
        f"tensor of {inner.description}",
        lambda t: isinstance(t, RankedTensorType) and inner(t.element_type),
    )


def ScalarOrTensorOf(element) -> Constraint:
    """A type satisfying `element`, or a tensor of one (`i1` or `tensor<..xi1>`)."""
    inner = as_constraint(element)
    return Constraint(f"{inner.description} or tensor thereof", lambda t: inner(element_type(t)))


AnyType = Constraint("any type", lambda t: isinstance(t, Type))
AnyAttr = Constraint("any attribute", lambda a: True)
IntegerLike = Constraint("signless-integer-like", is_integer_like)
FloatLike = Constraint("floating-point-like", is_float_like)
PointerLike = Constraint("pointer-like", _is_pointer_like)
