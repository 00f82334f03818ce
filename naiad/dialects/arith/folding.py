"""Constant folding for `arith`: the scalar rules, and their application to scalar and dense
tensor constants.

Integers are signless: an attribute holds the value wrapped to the signed range of its width,
and each op reads it as signed or unsigned as its name says (`divsi` / `divui`). Results wrap
around (the attribute constructor wraps them). What would be undefined at run time is not folded,
so the target decides: division or remainder by zero, `INT_MIN / -1`, shifts by the bit width or
more, float-to-int conversions of NaN or out-of-range values. Floats fold in the precision of
the op's type: an f32 `+ - * /` is computed in f64 and rounded once, which is exact (53 >= 2*24+2
bits), and so for every narrower format.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ...ir import (
    DenseElementsAttr,
    FloatAttr,
    FloatType,
    IndexType,
    IntegerAttr,
    IntegerType,
    RankedTensorType,
    Type,
    element_type,
)
from ...ir.float_format import FLOAT_FORMATS, float_from_bits, float_to_bits, round_float
from ...ir.rewriter import constant_value

_NO = object()  # a scalar rule's "do not fold"


def width_of(t: Type) -> int:
    """The bit width of an integer (or index: 64) element type."""
    t = element_type(t)
    return t.width if isinstance(t, IntegerType) else 64


def to_signed(value, width: int) -> int:
    value = int(value) & ((1 << width) - 1)
    return value - (1 << width) if value >> (width - 1) else value


def to_unsigned(value, width: int) -> int:
    return int(value) & ((1 << width) - 1)


def make_attr(type: Type, values: list):
    """A constant of `type` (scalar or tensor) from one value per element (one for scalars)."""
    if isinstance(type, RankedTensorType):
        return DenseElementsAttr(type, values)
    (value,) = values
    if isinstance(type, FloatType):
        return FloatAttr(value, type)
    return IntegerAttr(value, type)


def scalars(attr) -> tuple[list, bool] | None:
    """(element values, is-splat) of a constant attribute; None if it is not one."""
    if isinstance(attr, DenseElementsAttr):
        return list(attr.values), attr.is_splat
    if isinstance(attr, IntegerAttr | FloatAttr):
        return [attr.value], True
    return None


def fold_elementwise(operands, result_type: Type, rule: Callable):
    """Apply `rule` (scalar values -> value, or `_NO`) to constant operands, elementwise over
    tensors; the folded attribute of `result_type`, or None."""
    columns = []
    all_splat = True
    for value in operands:
        found = scalars(constant_value(value))
        if found is None:
            return None
        columns.append(found[0])
        all_splat = all_splat and found[1]
    if not all_splat:
        count = max(len(c) for c in columns)
        columns = [c * count if len(c) == 1 else c for c in columns]
    results = []
    for row in zip(*columns):
        folded = rule(*row)
        if folded is _NO:
            return None
        results.append(folded)
    return make_attr(result_type, results)


# -- integer rules: (a, b, width) -> int or _NO, a and b the signed values


def _div_trunc(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _overflows(a: int, b: int, w: int) -> bool:
    return b == -1 and a == -(1 << (w - 1))


def divsi(a, b, w):
    return _NO if b == 0 or _overflows(a, b, w) else _div_trunc(a, b)


def divui(a, b, w):
    ub = to_unsigned(b, w)
    return _NO if ub == 0 else to_unsigned(a, w) // ub


def remsi(a, b, w):
    return _NO if b == 0 else a - b * _div_trunc(a, b)


def remui(a, b, w):
    ub = to_unsigned(b, w)
    return _NO if ub == 0 else to_unsigned(a, w) % ub


def ceildivsi(a, b, w):
    if b == 0 or _overflows(a, b, w):
        return _NO
    q = _div_trunc(a, b)
    return q + 1 if q * b != a and (a < 0) == (b < 0) else q


def ceildivui(a, b, w):
    ub = to_unsigned(b, w)
    return _NO if ub == 0 else -(-to_unsigned(a, w) // ub)


def floordivsi(a, b, w):
    return _NO if b == 0 or _overflows(a, b, w) else a // b


def shli(a, b, w):
    ub = to_unsigned(b, w)
    return _NO if ub >= w else a << ub


def shrui(a, b, w):
    ub = to_unsigned(b, w)
    return _NO if ub >= w else to_unsigned(a, w) >> ub


def shrsi(a, b, w):
    ub = to_unsigned(b, w)
    return _NO if ub >= w else a >> ub


INT_RULES: dict[str, Callable] = {
    "addi": lambda a, b, w: a + b,
    "subi": lambda a, b, w: a - b,
    "muli": lambda a, b, w: a * b,
    "divsi": divsi,
    "divui": divui,
    "remsi": remsi,
    "remui": remui,
    "ceildivsi": ceildivsi,
    "ceildivui": ceildivui,
    "floordivsi": floordivsi,
    "andi": lambda a, b, w: a & b,
    "ori": lambda a, b, w: a | b,
    "xori": lambda a, b, w: a ^ b,
    "shli": shli,
    "shrui": shrui,
    "shrsi": shrsi,
    "maxsi": lambda a, b, w: max(a, b),
    "minsi": lambda a, b, w: min(a, b),
    "maxui": lambda a, b, w: max(to_unsigned(a, w), to_unsigned(b, w)),
    "minui": lambda a, b, w: min(to_unsigned(a, w), to_unsigned(b, w)),
    "mulhiui": lambda a, b, w: (to_unsigned(a, w) * to_unsigned(b, w)) >> w,
}


def fold_int_binary(op, rule_name: str):
    w = width_of(op.result.type)
    rule = INT_RULES[rule_name]
    return fold_elementwise(
        (op.lhs, op.rhs), op.result.type, lambda a, b: rule(to_signed(a, w), to_signed(b, w), w)
    )


# -- float rules, in f64 (the caller's FloatAttr rounds to the op's type)


def _divf(a: float, b: float) -> float:
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _remf(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0.0:
        return math.nan
    if math.isinf(b):
        return a
    return math.fmod(a, b)


def _maximum(a: float, b: float) -> float:
    """IEEE-754 2019 maximum: NaN wins, -0 < +0."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0.0:
        return a if math.copysign(1.0, a) > 0 else b
    return max(a, b)


def _minimum(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0.0:
        return a if math.copysign(1.0, a) < 0 else b
    return min(a, b)


def _maxnum(a: float, b: float) -> float:
    """IEEE-754 maxNum (LLVM's maxnum): a NaN operand loses to a number."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return _maximum(a, b)


def _minnum(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return _minimum(a, b)


FLOAT_RULES: dict[str, Callable] = {
    "addf": lambda a, b: a + b,
    "subf": lambda a, b: a - b,
    "mulf": lambda a, b: a * b,
    "divf": _divf,
    "remf": _remf,
    "maximumf": _maximum,
    "minimumf": _minimum,
    "maxnumf": _maxnum,
    "minnumf": _minnum,
}


def fold_float_binary(op, rule_name: str):
    return fold_elementwise((op.lhs, op.rhs), op.result.type, FLOAT_RULES[rule_name])


# -- comparisons


def cmpi_rule(predicate: str, w: int) -> Callable:
    def rule(a, b):
        sa, sb = to_signed(a, w), to_signed(b, w)
        ua, ub = to_unsigned(a, w), to_unsigned(b, w)
        return {
            "eq": sa == sb,
            "ne": sa != sb,
            "slt": sa < sb,
            "sle": sa <= sb,
            "sgt": sa > sb,
            "sge": sa >= sb,
            "ult": ua < ub,
            "ule": ua <= ub,
            "ugt": ua > ub,
            "uge": ua >= ub,
        }[predicate]

    return rule


def cmpf_rule(predicate: str) -> Callable:
    def rule(a, b):
        unordered = math.isnan(a) or math.isnan(b)
        if predicate in ("false", "true"):
            return predicate == "true"
        if predicate == "ord":
            return not unordered
        if predicate == "uno":
            return unordered
        relation = {
            "eq": a == b,
            "gt": a > b,
            "ge": a >= b,
            "lt": a < b,
            "le": a <= b,
            "ne": a != b,
        }[predicate[1:]]
        return unordered or relation if predicate[0] == "u" else not unordered and relation

    return rule


# Predicates that hold (True) or fail (False) when both sides are the same value.
CMPI_SELF = {
    p: p in ("eq", "sle", "sge", "ule", "uge")
    for p in ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
}


# -- casts: (value) -> value, given source and result element types


def int_to_float(kind: str, value: int) -> float:
    """`value` rounded once to format `kind` (ties to even), even beyond 2**53."""
    precision = FLOAT_FORMATS[kind].precision
    magnitude = abs(value)
    extra = magnitude.bit_length() - precision
    if extra > 0:
        q, r = divmod(magnitude, 1 << extra)
        half = 1 << (extra - 1)
        if r > half or (r == half and q & 1):
            q += 1
        magnitude = q << extra
    try:
        result = float(magnitude)
    except OverflowError:
        result = math.inf
    return round_float(kind, -result if value < 0 else result)


def float_to_int(value: float, width: int, signed: bool):
    """Truncation toward zero; `_NO` where the result is undefined (NaN, out of range)."""
    if math.isnan(value) or math.isinf(value):
        return _NO
    truncated = int(value)
    low, high = (-(1 << (width - 1)), 1 << (width - 1)) if signed else (0, 1 << width)
    return truncated if low <= truncated < high else _NO


def cast_rule(name: str, source: Type, target: Type) -> Callable | None:
    """The scalar rule of cast `name` from element type `source` to `target`."""
    sw = width_of(source) if isinstance(source, IntegerType | IndexType) else 0
    if name in ("extsi", "trunci", "index_cast"):
        return lambda v: to_signed(v, sw)
    if name in ("extui", "index_castui"):
        return lambda v: to_unsigned(v, sw)
    if name in ("extf", "truncf"):
        return lambda v: v
    if name == "sitofp":
        return lambda v: int_to_float(target.kind, to_signed(v, sw))
    if name == "uitofp":
        return lambda v: int_to_float(target.kind, to_unsigned(v, sw))
    if name in ("fptosi", "fptoui"):
        return lambda v: float_to_int(v, target.width, name == "fptosi")
    if name == "bitcast":
        return _bitcast_rule(source, target)
    return None


def _bitcast_rule(source: Type, target: Type) -> Callable:
    def bits(v):
        if isinstance(source, FloatType):
            return float_to_bits(source.kind, v)
        return to_unsigned(v, source.width)

    if isinstance(target, FloatType):
        return lambda v: float_from_bits(target.kind, bits(v))
    return bits


def fold_cast(op, name: str):
    source, target = element_type(op.operands[0].type), element_type(op.results[0].type)
    rule = cast_rule(name, source, target)
    if rule is None:
        return None
    return fold_elementwise(op.operands, op.results[0].type, rule)
