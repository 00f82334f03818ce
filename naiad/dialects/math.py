"""The `math` dialect (MathOps.td): elementwise functions on floats and integers.

Every op is Pure, Elementwise and SameOperandsAndResultType (`math.isnan` / `math.isinf` give
i1). Float ops carry an optional `fastmath` attribute: `$operand (fastmath<...>)? : type`.
Only the ops whose result is exact, or correctly rounded when computed in f64 and rounded once
(sqrt), fold: absf, absi, ceil, floor, trunc, roundeven, sqrt, copysign. The transcendental ones
do not, since a host libm need not round as the target does.
"""

from __future__ import annotations

import math as pymath

from ..ir import (
    Elementwise,
    Operation,
    Pure,
    SameOperandsAndResultShape,
    SameOperandsAndResultType,
    irdl_op,
    operand,
    opt_attribute,
    register_constant_materializer,
    result,
)
from .arith import folding as arith_fold
from .arith import materialize_constant
from .arith.attributes import FastMathFlagsAttr
from .base import BoolLike, FloatLike, SignlessIntegerLike, i1_like

_MATH = frozenset({Pure, Elementwise, SameOperandsAndResultType})
_UNARY_FORMAT = "$operand (`fastmath` `` $fastmath^)? attr-dict `:` type($result)"


class FloatUnaryOp(Operation):
    """The family of float functions of one argument; `_rule` (f64 -> f64) folds."""

    traits = _MATH
    operand = operand(FloatLike)
    fastmath = opt_attribute(FastMathFlagsAttr)
    result = result(FloatLike, like="operand")
    assembly_format = _UNARY_FORMAT
    _rule = None

    def fold(self):
        rule = type(self)._rule
        if rule is None:
            return None
        folded = arith_fold.fold_elementwise((self.operand,), self.result.type, rule)
        return None if folded is None else (folded,)


def _unary(class_name: str, mnemonic: str, rule=None, doc: str = "") -> type:
    """Declare `math.<mnemonic>` as a FloatUnaryOp named `class_name`."""
    cls = type(
        class_name,
        (FloatUnaryOp,),
        {"name": f"math.{mnemonic}", "__doc__": doc or f"`math.{mnemonic}`, elementwise."},
    )
    if rule is not None:
        cls._rule = staticmethod(rule)
    cls.__module__ = __name__
    return irdl_op(cls)


def _sqrt(v: float) -> float:
    return pymath.nan if v < 0 else pymath.sqrt(v)


def _integral(function):
    """An exact rounding function, leaving infinities and NaN (and the sign of zero) alone."""
    return lambda v: v if pymath.isinf(v) or pymath.isnan(v) else pymath.copysign(function(v), v)


def _roundeven(v: float) -> float:
    return round(v)


AbsFOp = _unary("AbsFOp", "absf", abs, "`|x|`: clears the sign bit.")
CeilOp = _unary("CeilOp", "ceil", _integral(pymath.ceil))
FloorOp = _unary("FloorOp", "floor", _integral(pymath.floor))
TruncOp = _unary("TruncOp", "trunc", _integral(pymath.trunc))
RoundOp = _unary("RoundOp", "round", doc="Round half away from zero.")
RoundEvenOp = _unary("RoundEvenOp", "roundeven", _integral(_roundeven), "Round half to even.")
SqrtOp = _unary("SqrtOp", "sqrt", _sqrt, "Correctly rounded square root.")
RsqrtOp = _unary("RsqrtOp", "rsqrt")
ExpOp = _unary("ExpOp", "exp")
Exp2Op = _unary("Exp2Op", "exp2")
ExpM1Op = _unary("ExpM1Op", "expm1")
LogOp = _unary("LogOp", "log")
Log2Op = _unary("Log2Op", "log2")
Log10Op = _unary("Log10Op", "log10")
Log1pOp = _unary("Log1pOp", "log1p")
SinOp = _unary("SinOp", "sin")
CosOp = _unary("CosOp", "cos")
TanOp = _unary("TanOp", "tan")
TanhOp = _unary("TanhOp", "tanh")
SinhOp = _unary("SinhOp", "sinh")
CoshOp = _unary("CoshOp", "cosh")
AsinOp = _unary("AsinOp", "asin")
AcosOp = _unary("AcosOp", "acos")
AtanOp = _unary("AtanOp", "atan")
AsinhOp = _unary("AsinhOp", "asinh")
AcoshOp = _unary("AcoshOp", "acosh")
AtanhOp = _unary("AtanhOp", "atanh")
ErfOp = _unary("ErfOp", "erf")
ErfcOp = _unary("ErfcOp", "erfc")
CbrtOp = _unary("CbrtOp", "cbrt")


class FloatBinaryOp(Operation):
    traits = _MATH
    lhs = operand(FloatLike)
    rhs = operand(FloatLike)
    fastmath = opt_attribute(FastMathFlagsAttr)
    result = result(FloatLike, like="lhs")
    assembly_format = "$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($result)"


@irdl_op
class CopySignOp(FloatBinaryOp):
    """`|lhs|` with the sign of `rhs`."""

    name = "math.copysign"

    def fold(self):
        folded = arith_fold.fold_elementwise(
            (self.lhs, self.rhs), self.result.type, pymath.copysign
        )
        return None if folded is None else (folded,)


@irdl_op
class PowFOp(FloatBinaryOp):
    name = "math.powf"


@irdl_op
class Atan2Op(FloatBinaryOp):
    name = "math.atan2"


@irdl_op
class FmaOp(Operation):
    """`a * b + c` with one rounding (`tl.fma`)."""

    name = "math.fma"
    traits = _MATH
    a = operand(FloatLike)
    b = operand(FloatLike)
    c = operand(FloatLike)
    fastmath = opt_attribute(FastMathFlagsAttr)
    result = result(FloatLike, like="a")
    assembly_format = "$a `,` $b `,` $c (`fastmath` `` $fastmath^)? attr-dict `:` type($result)"


class IntUnaryOp(Operation):
    traits = _MATH
    operand = operand(SignlessIntegerLike)
    result = result(SignlessIntegerLike, like="operand")
    assembly_format = "$operand attr-dict `:` type($result)"
    _rule = None

    def fold(self):
        if type(self)._rule is None:
            return None
        w = arith_fold.width_of(self.result.type)
        rule = type(self)._rule
        folded = arith_fold.fold_elementwise(
            (self.operand,), self.result.type, lambda v: rule(arith_fold.to_signed(v, w), w)
        )
        return None if folded is None else (folded,)


@irdl_op
class AbsIOp(IntUnaryOp):
    """`|x|` on signed integers; `abs(INT_MIN)` wraps to INT_MIN."""

    name = "math.absi"
    _rule = staticmethod(lambda v, w: abs(v))


@irdl_op
class CountLeadingZerosOp(IntUnaryOp):
    name = "math.ctlz"
    _rule = staticmethod(lambda v, w: w - arith_fold.to_unsigned(v, w).bit_length())


@irdl_op
class CountTrailingZerosOp(IntUnaryOp):
    name = "math.cttz"
    _rule = staticmethod(
        lambda v, w: w if v == 0 else (arith_fold.to_unsigned(v, w) & -v).bit_length() - 1
    )


@irdl_op
class CtPopOp(IntUnaryOp):
    name = "math.ctpop"
    _rule = staticmethod(lambda v, w: arith_fold.to_unsigned(v, w).bit_count())


@irdl_op
class IPowIOp(Operation):
    name = "math.ipowi"
    traits = _MATH
    lhs = operand(SignlessIntegerLike)
    rhs = operand(SignlessIntegerLike)
    result = result(SignlessIntegerLike, like="lhs")
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"


class FloatClassOp(Operation):
    """A float test giving i1 of the operand's shape."""

    traits = frozenset({Pure, Elementwise, SameOperandsAndResultShape})
    operand = operand(FloatLike)
    fastmath = opt_attribute(FastMathFlagsAttr)
    result = result(BoolLike)
    assembly_format = "$operand (`fastmath` `` $fastmath^)? attr-dict `:` type($operand)"
    type_inference = (("result", "operand", i1_like),)

    def __init__(self, operand, **fields):
        fields.setdefault("result", i1_like(operand.type))
        super().__init__(operand, **fields)


@irdl_op
class IsNaNOp(FloatClassOp):
    name = "math.isnan"


@irdl_op
class IsInfOp(FloatClassOp):
    name = "math.isinf"


# The C math library function each transcendental op computes, by its stem: libdevice names it
# `__nv_<stem>` (`__nv_<stem>f` on f32), and the CPU math library and the reference evaluator use
# the same stems, so the three agree on which function an op means. The first table holds the
# functions the language's own builtins reach (`tl.exp`, ...; sqrt and rsqrt are apart, as most
# targets have them as instructions), the second those reached only through `tl.extra.libdevice`.
BUILTIN_LIBM_STEMS = {
    "math.exp": "exp",
    "math.exp2": "exp2",
    "math.log": "log",
    "math.log2": "log2",
    "math.sin": "sin",
    "math.cos": "cos",
    "math.erf": "erf",
}
LIBDEVICE_LIBM_STEMS = {
    "math.tan": "tan",
    "math.tanh": "tanh",
    "math.sinh": "sinh",
    "math.cosh": "cosh",
    "math.asin": "asin",
    "math.acos": "acos",
    "math.atan": "atan",
    "math.asinh": "asinh",
    "math.acosh": "acosh",
    "math.atanh": "atanh",
    "math.erfc": "erfc",
    "math.cbrt": "cbrt",
    "math.log10": "log10",
    "math.log1p": "log1p",
    "math.expm1": "expm1",
    "math.powf": "pow",
    "math.atan2": "atan2",
}


register_constant_materializer("math", materialize_constant)
