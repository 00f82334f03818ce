"""Comparisons, logical and bitwise ops, and the float classes (isnan, isinf, isfinite): scalar
functions under `@pointwise`. Comparisons and logical ops return bool (torch's ALWAYS_BOOL
promotion compares in the operands' common dtype); bitwise ops take integers and bools.
"""

from __future__ import annotations

from .. import language as tl
from ..runtime.jit import jit
from .dtypes import Kind
from .pointwise import inplace_target, pointwise
from .registry import aten
from .unary_family import unary

__all__ = [
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "eq",
    "ge",
    "gt",
    "isfinite",
    "isinf",
    "isnan",
    "le",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "lt",
    "ne",
]

_BOOL = Kind.ALWAYS_BOOL


@pointwise(_BOOL)
@jit
def _eq(x, y):
    return x == y


@pointwise(_BOOL)
@jit
def _ne(x, y):
    return x != y


@pointwise(_BOOL)
@jit
def _lt(x, y):
    return x < y


@pointwise(_BOOL)
@jit
def _le(x, y):
    return x <= y


@pointwise(_BOOL)
@jit
def _gt(x, y):
    return x > y


@pointwise(_BOOL)
@jit
def _ge(x, y):
    return x >= y


@pointwise(_BOOL)
@jit
def _logical_and(x, y):
    return (x != 0) & (y != 0)


@pointwise(_BOOL)
@jit
def _logical_or(x, y):
    return (x != 0) | (y != 0)


@pointwise(_BOOL)
@jit
def _logical_xor(x, y):
    return (x != 0) ^ (y != 0)


@pointwise(_BOOL)
@jit
def _logical_not(x):
    return x == 0


@pointwise()
@jit
def _bitwise_and(x, y):
    return x & y


@pointwise()
@jit
def _bitwise_or(x, y):
    return x | y


@pointwise()
@jit
def _bitwise_xor(x, y):
    return x ^ y


@pointwise()
@jit
def _bitwise_not(x):
    if x.dtype == tl.int1:
        return x == 0
    return ~x


@pointwise(_BOOL)
@jit
def _isnan(x):
    return x != x


@pointwise(_BOOL)
@jit
def _isinf(x):
    if x.dtype.is_floating():
        return tl.abs(x) == float("inf")
    return x != x


@pointwise(_BOOL)
@jit
def _isfinite(x):
    if x.dtype.is_floating():
        return tl.abs(x) < float("inf")
    return x == x


def _binary(name, op, doc, overloads, inplace_overloads):
    def function(input, other, *, out=None):
        return op(input, other, out=out)

    def in_place(input, other):
        return op(input, other, out=inplace_target(input, other))

    function.__name__ = function.__qualname__ = name
    in_place.__name__ = in_place.__qualname__ = f"{name}_"
    function.__doc__ = doc
    in_place.__doc__ = f"In place: {doc}"
    aten(*(f"{name}.{o}" for o in overloads))(function)
    aten(*(f"{name}_.{o}" for o in inplace_overloads))(in_place)
    return function, in_place


_COMPARISON = (("Tensor", "Scalar", "Tensor_out", "Scalar_out"), ("Tensor", "Scalar"))
eq, eq_ = _binary("eq", _eq, "input == other.", *_COMPARISON)
ne, ne_ = _binary("ne", _ne, "input != other.", *_COMPARISON)
lt, lt_ = _binary("lt", _lt, "input < other.", *_COMPARISON)
le, le_ = _binary("le", _le, "input <= other.", *_COMPARISON)
gt, gt_ = _binary("gt", _gt, "input > other.", *_COMPARISON)
ge, ge_ = _binary("ge", _ge, "input >= other.", *_COMPARISON)

_LOGICAL = (("default", "out"), ("default",))
logical_and, logical_and_ = _binary("logical_and", _logical_and, "Both nonzero.", *_LOGICAL)
logical_or, logical_or_ = _binary("logical_or", _logical_or, "Either nonzero.", *_LOGICAL)
logical_xor, logical_xor_ = _binary("logical_xor", _logical_xor, "One nonzero.", *_LOGICAL)
logical_not, logical_not_ = unary("logical_not", _logical_not, "input == 0.")

_BITWISE = (
    ("Tensor", "Scalar", "Scalar_Tensor", "Tensor_out", "Scalar_out", "Scalar_Tensor_out"),
    ("Tensor", "Scalar"),
)
bitwise_and, bitwise_and_ = _binary("bitwise_and", _bitwise_and, "Bitwise and.", *_BITWISE)
bitwise_or, bitwise_or_ = _binary("bitwise_or", _bitwise_or, "Bitwise or.", *_BITWISE)
bitwise_xor, bitwise_xor_ = _binary("bitwise_xor", _bitwise_xor, "Bitwise xor.", *_BITWISE)
bitwise_not, bitwise_not_ = unary("bitwise_not", _bitwise_not, "Bitwise not.")


def _float_class(name, op, doc, registered=True):
    def function(input):
        return op(input)

    if registered:
        aten(f"{name}.default")(function)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


isnan = _float_class("isnan", _isnan, "Where input is NaN.")
isinf = _float_class("isinf", _isinf, "Where input is infinite.")
# torch composes isfinite of other ops (CompositeImplicitAutograd): a direct call only
isfinite = _float_class("isfinite", _isfinite, "Where neither NaN nor infinite.", registered=False)
