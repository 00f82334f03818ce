"""Triton's typing rules, written from its semantics: `promoted(a, b, ...)` is the dtype `a op b`
computes in (Python scalars take part only when their kind is above the tensor's), and
`result_dtype` what an operator returns."""

from __future__ import annotations

import math

from dtype_tables import FLOAT_DTYPES, INTEGRAL_DTYPES, bitwidth, is_float, is_signed, is_unsigned

_KIND = {"int1": 0, **{n: 1 for n in INTEGRAL_DTYPES}, **{n: 2 for n in FLOAT_DTYPES}}


def integer_promote(a: str, b: str) -> str:
    """C's usual arithmetic conversions (Triton's `integer_promote_impl`; int1 is unsigned)."""
    if is_signed(a) == is_signed(b):
        return a if bitwidth(a) > bitwidth(b) else b
    if is_unsigned(a):
        return a if bitwidth(a) >= bitwidth(b) else b
    return b if bitwidth(b) >= bitwidth(a) else a


def literal_dtype(value) -> str:
    """The dtype Triton gives a Python number in a kernel (`to_tensor_type`)."""
    if isinstance(value, bool):
        return "int1"
    if isinstance(value, int):
        for name, lo, hi in (
            ("int32", -(2**31), 2**31),
            ("uint32", 2**31, 2**32),
            ("int64", -(2**63), 2**63),
            ("uint64", 2**63, 2**64),
        ):
            if lo <= value < hi:
                return name
        raise ValueError(value)
    magnitude = abs(value)
    if (
        value == 0
        or math.isinf(value)
        or math.isnan(value)
        or 2.0**-126 <= magnitude <= (2 - 2.0**-23) * 2.0**127
    ):
        return "float32"
    return "float64"


class DifferentSignedness(TypeError):
    """What Triton raises for `/`, `//` or `%` between a signed and an unsigned integer."""


def promoted(
    a: str, b: str, div_or_mod: bool = False, a_scalar: bool = False, b_scalar: bool = False
) -> str:
    """The dtype `a op b` computes in: Triton's `computation_type_impl` (semantic.py)."""
    if a_scalar != b_scalar:
        scalar, tensor = (a, b) if a_scalar else (b, a)
        if _KIND[scalar] <= _KIND[tensor]:
            if div_or_mod and tensor in ("float16", "bfloat16"):
                return "float32"
            return tensor
    if "float64" in (a, b):
        return "float64"
    if "float32" in (a, b):
        return "float32"
    if "float16" in (a, b):
        return "float32" if div_or_mod else "float16"
    if a == b == "bfloat16":
        return "float32" if div_or_mod else "bfloat16"
    if "bfloat16" in (a, b):
        return "float32"
    if div_or_mod and is_signed(a) != is_signed(b):
        raise DifferentSignedness(f"{a} and {b}")
    return integer_promote(a, b)


def result_dtype(op: str, a: str, b: str) -> str:
    """The dtype of `a op b` for tensors, or raise what Triton raises (TypeError subclasses)."""
    div_or_mod = op in ("/", "//", "%")
    ty = promoted(a, b, div_or_mod)
    if op == "/" and not is_float(ty):
        return "float32"
    if op == "//" and is_float(ty):
        raise TypeError(f"`//` of {ty}")
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return "int1"
    return ty
