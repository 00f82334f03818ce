"""Triton's type rules: which dtype a binary operation computes in, and how literals are typed.

Pure functions of dtypes, shared by every builder; the frontend and the interpreter type Python
literals and loop variables with the same `literal_type`, so both compute the same wrap-arounds.
"""

from __future__ import annotations

import math

from .. import dtypes as t


def literal_type(value) -> t.dtype:
    """The dtype a Python literal takes inside a kernel (`1` -> int32, `2**40` -> int64, ...)."""
    if isinstance(value, bool):
        return t.int1
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return t.int32
        if 2**31 <= value < 2**32:
            return t.uint32
        if -(2**63) <= value < 2**63:
            return t.int64
        if 2**63 <= value < 2**64:
            return t.uint64
        raise ValueError(f"integer literal {value} is out of the range of a 64-bit integer")
    if isinstance(value, float):
        magnitude = abs(value)
        if value == 0 or math.isinf(value) or math.isnan(value):
            return t.float32
        if 2.0**-126 <= magnitude <= (2 - 2.0**-23) * 2.0**127:
            return t.float32
        return t.float64
    raise TypeError(f"cannot use a value of type {type(value).__name__} inside a kernel: {value!r}")


def integer_promote(a: t.dtype, b: t.dtype) -> t.dtype:
    """C's usual arithmetic conversions: the wider type wins; unsigned wins at equal width."""
    a_bits, b_bits = a.int_bitwidth, b.int_bitwidth
    a_signed, b_signed = a.is_int_signed(), b.is_int_signed()
    if a_signed == b_signed:
        return a if a_bits > b_bits else b
    if not a_signed:
        return a if a_bits >= b_bits else b
    return b if b_bits >= a_bits else a


def computation_type(
    a: t.dtype, a_is_scalar: bool, b: t.dtype, b_is_scalar: bool, div_or_mod: bool
) -> t.dtype:
    """The dtype `a op b` computes in (Triton's `computation_type_impl`).

    A Python scalar whose kind (bool < int < float) is not above the tensor's does not take part,
    so `x_fp16 * 2.0` stays fp16. Division and modulo have no native fp16/bf16 form and compute in
    fp32; mixing signedness in `/`, `//` or `%` is refused.
    """
    if a_is_scalar != b_is_scalar:
        scalar, other = (a, b) if a_is_scalar else (b, a)
        if scalar.kind().value <= other.kind().value:
            if div_or_mod and (other.is_fp16() or other.is_bf16()):
                return t.float32
            return other
    if a.is_fp64() or b.is_fp64():
        return t.float64
    if a.is_fp32() or b.is_fp32():
        return t.float32
    if a.is_fp16() or b.is_fp16():
        return t.float32 if div_or_mod else t.float16
    if a.is_bf16() and b.is_bf16():
        return t.float32 if div_or_mod else t.bfloat16
    if a.is_bf16() or b.is_bf16():
        return t.float32
    if a.is_fp8() and b.is_fp8():
        return a if a == b else t.float16
    if not a.is_int() or not b.is_int():
        raise TypeError(f"unexpected type {a} and {b}")
    if div_or_mod and a.is_int_signed() != b.is_int_signed():
        raise TypeError(
            f"Cannot use /, //, or % with {a!r} and {b!r} because they have different "
            "signedness; this is unlikely to result in a useful answer. Cast them to the "
            "same signedness."
        )
    return integer_promote(a, b)


def loop_index_type(*bounds: t.dtype) -> t.dtype:
    """The type of the induction variable of `range(lb, ub, step)`: the bounds' promoted type."""
    for bound in bounds:
        if not bound.is_int():
            raise TypeError(f"range bounds must be integers, got {bound}")
    result = bounds[0]
    for bound in bounds[1:]:
        result = integer_promote(result, bound)
    return result
