"""The names dot passes and lowerings choose instructions by: a scalar type's kind (`f16`,
`f8E4M3FN`, `i8`, ...), the fp8 kinds, and a dot's `inputPrecision` by name."""

from __future__ import annotations

from ....dialects import tt
from ....dialects.tt.attributes import InputPrecision
from ....ir import FloatType, IntegerType

FP8_KINDS = ("f8E4M3FN", "f8E5M2")


def element_kind(t) -> str:
    """`f16`, `f8E4M3FN`, `i8`, ...: the name of a scalar type's kind."""
    if isinstance(t, FloatType):
        return t.kind
    if isinstance(t, IntegerType):
        return f"i{t.width}"
    return str(t)


def input_precision(dot: tt.DotOp) -> str:
    """The dot's `inputPrecision` by name (`tf32`, `tf32x3`, `ieee`, `bf16x3`, `bf16x6`)."""
    attr = dot.inputPrecision
    return "ieee" if attr is None else InputPrecision.by_value[attr.value]
