"""`arith` casts, comparisons and `select` (ArithOps.td), with their verifiers and folders.

Casts keep the shape and change the element type: `$in : type($in) to type($out)`. Widening
casts must widen and narrowing ones narrow, as upstream verifies; `bitcast` keeps the bit width.
Comparisons give `i1` of the operands' shape; their predicate is an integer attribute spelled
by keyword (`arith.cmpi slt, %a, %b : i32`).
"""

from __future__ import annotations

from ...ir import (
    BoolAttr,
    DenseElementsAttr,
    Elementwise,
    FloatType,
    IndexType,
    IntegerType,
    Operation,
    Pure,
    RankedTensorType,
    SameOperandsAndResultShape,
    attribute,
    element_type,
    irdl_op,
    operand,
    opt_attribute,
    result,
    shape_of,
)
from ...ir.rewriter import constant_value
from ..base import (
    BoolLike,
    FloatLike,
    SameTypeOperands,
    SignlessFixedWidthIntegerLike,
    SignlessIntegerLike,
    SignlessIntegerOrFloatLike,
    bit_width,
    fail,
    i1_like,
    is_splat_value,
)
from . import folding as arith_fold
from .attributes import CmpFPredicate, CmpIPredicate, FastMathFlagsAttr, RoundingMode

_CAST = frozenset({Pure, Elementwise, SameOperandsAndResultShape})
_CAST_FORMAT = "$in attr-dict `:` type($in) `to` type($out)"


class CastOp(Operation):
    """The family of casts: `in` to `out`, same shape. Subclasses name the element rule
    (arith_fold.cast_rule) by their mnemonic.

    The operand keeps its ODS name `in`, a Python keyword: it is declared through the class
    namespace (`locals()["in"] = operand(...)`) and read as `op.in_`."""

    traits = _CAST
    assembly_format = _CAST_FORMAT

    def fold(self):
        folded = arith_fold.fold_cast(self, self.name[len("arith.") :])
        return None if folded is None else (folded,)

    def _widths(self) -> tuple[int, int]:
        return bit_width(element_type(self.in_.type)), bit_width(element_type(self.out.type))

    @property
    def in_(self):
        """The operand (`in` is a Python keyword; `op.operands[0]` is the same value)."""
        return self.operands[0]


def _check_wider(op) -> None:
    src, dst = op._widths()
    if dst <= src:
        fail(op, f"result type '{op.out.type}' must be wider than operand type '{op.in_.type}'")


def _check_narrower(op) -> None:
    src, dst = op._widths()
    if dst >= src:
        fail(op, f"result type '{op.out.type}' must be shorter than operand type '{op.in_.type}'")


class IntToIntCastOp(CastOp):
    locals()["in"] = operand(SignlessFixedWidthIntegerLike)
    out = result(SignlessFixedWidthIntegerLike)


@irdl_op
class ExtSIOp(IntToIntCastOp):
    name = "arith.extsi"
    verify_ = _check_wider


@irdl_op
class ExtUIOp(IntToIntCastOp):
    name = "arith.extui"
    verify_ = _check_wider


@irdl_op
class TruncIOp(IntToIntCastOp):
    name = "arith.trunci"
    verify_ = _check_narrower


@irdl_op
class ExtFOp(CastOp):
    name = "arith.extf"
    locals()["in"] = operand(FloatLike)
    fastmath = opt_attribute(FastMathFlagsAttr)
    out = result(FloatLike)
    assembly_format = "$in (`fastmath` `` $fastmath^)? attr-dict `:` type($in) `to` type($out)"
    verify_ = _check_wider


@irdl_op
class TruncFOp(CastOp):
    """Round to a narrower float, to nearest even unless `roundingmode` says otherwise (only
    nearest-even folds)."""

    name = "arith.truncf"
    locals()["in"] = operand(FloatLike)
    roundingmode = opt_attribute(RoundingMode)
    fastmath = opt_attribute(FastMathFlagsAttr)
    out = result(FloatLike)
    assembly_format = (
        "$in ($roundingmode^)? (`fastmath` `` $fastmath^)? attr-dict `:` type($in) `to` type($out)"
    )
    verify_ = _check_narrower

    def fold(self):
        mode = self.roundingmode
        if mode is not None and RoundingMode.keyword(mode) != "to_nearest_even":
            return None
        return super().fold()


class IntToFloatCastOp(CastOp):
    locals()["in"] = operand(SignlessFixedWidthIntegerLike)
    out = result(FloatLike)


@irdl_op
class SIToFPOp(IntToFloatCastOp):
    name = "arith.sitofp"


@irdl_op
class UIToFPOp(IntToFloatCastOp):
    name = "arith.uitofp"


class FloatToIntCastOp(CastOp):
    """Truncation toward zero. NaN and out-of-range values are left to the target (Naiad's
    back ends saturate, NaN to 0), so they do not fold."""

    locals()["in"] = operand(FloatLike)
    out = result(SignlessFixedWidthIntegerLike)


@irdl_op
class FPToSIOp(FloatToIntCastOp):
    name = "arith.fptosi"


@irdl_op
class FPToUIOp(FloatToIntCastOp):
    name = "arith.fptoui"


class IndexCastBase(CastOp):
    locals()["in"] = operand(SignlessIntegerLike)
    out = result(SignlessIntegerLike)

    def verify_(self) -> None:
        src, dst = element_type(self.in_.type), element_type(self.out.type)
        if isinstance(src, IndexType) == isinstance(dst, IndexType):
            fail(
                self,
                f"operand type '{self.in_.type}' and result type '{self.out.type}' are "
                "cast incompatible",
            )


@irdl_op
class IndexCastOp(IndexCastBase):
    name = "arith.index_cast"


@irdl_op
class IndexCastUIOp(IndexCastBase):
    name = "arith.index_castui"


@irdl_op
class BitcastOp(CastOp):
    name = "arith.bitcast"
    locals()["in"] = operand(SignlessIntegerOrFloatLike)
    out = result(SignlessIntegerOrFloatLike)

    def verify_(self) -> None:
        src, dst = self._widths()
        if src != dst:
            fail(
                self,
                f"operand type '{self.in_.type}' and result type '{self.out.type}' are "
                "cast incompatible",
            )


class CompareOp(Operation):
    """`arith.cmpi` / `arith.cmpf`: `$predicate, $lhs, $rhs : type($lhs)`, giving i1 of the
    operands' shape. Construct with the predicate's keyword: `CmpIOp("slt", a, b)`."""

    traits = frozenset({Pure, Elementwise, SameTypeOperands})
    type_inference = (("result", "lhs", i1_like), ("rhs", "lhs", None))

    def __init__(self, predicate, lhs, rhs, *, location=None, attributes=None, **fields):
        fields.setdefault("result", i1_like(lhs.type))
        spec = type(self)._op_def.fields["predicate"].constraint
        super().__init__(
            lhs,
            rhs,
            predicate=spec.get(predicate),
            location=location,
            attributes=attributes,
            **fields,
        )

    @property
    def predicate_name(self) -> str:
        return type(self)._op_def.fields["predicate"].constraint.keyword(self.predicate)

    def verify_(self) -> None:
        if self.result.type is not i1_like(self.lhs.type):
            fail(
                self,
                "failed to verify that result type has i1 element type and same shape as operands",
            )

    def fold(self):
        if self.lhs is self.rhs and self._self_rule() is not None:
            return (arith_fold.make_attr(self.result.type, [self._self_rule()]),)
        folded = arith_fold.fold_elementwise((self.lhs, self.rhs), self.result.type, self._rule())
        return None if folded is None else (folded,)

    def _self_rule(self):
        return None


@irdl_op
class CmpIOp(CompareOp):
    name = "arith.cmpi"
    predicate = attribute(CmpIPredicate)
    lhs = operand(SignlessIntegerLike)
    rhs = operand(SignlessIntegerLike)
    result = result(BoolLike)
    assembly_format = "$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs)"

    def _rule(self):
        return arith_fold.cmpi_rule(self.predicate_name, arith_fold.width_of(self.lhs.type))

    def _self_rule(self):
        return arith_fold.CMPI_SELF[self.predicate_name]


@irdl_op
class CmpFOp(CompareOp):
    name = "arith.cmpf"
    predicate = attribute(CmpFPredicate)
    lhs = operand(FloatLike)
    rhs = operand(FloatLike)
    fastmath = opt_attribute(FastMathFlagsAttr)
    result = result(BoolLike)
    assembly_format = (
        "$predicate `,` $lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($lhs)"
    )

    def _rule(self):
        return arith_fold.cmpf_rule(self.predicate_name)


@irdl_op
class SelectOp(Operation):
    """`condition ? true_value : false_value`, elementwise for an i1 tensor condition, or
    choosing whole values for a scalar one. Upstream prints it with C++ code:
    `arith.select %c, %a, %b : f32` (scalar condition) or `: tensor<4xi1>, tensor<4xf32>`."""

    name = "arith.select"
    traits = frozenset({Pure, Elementwise})
    condition = operand(BoolLike)
    true_value = operand()
    false_value = operand()
    result = result(like="true_value")
    custom_syntax = True

    def verify_(self) -> None:
        t = self.result.type
        if not (self.true_value.type is t and self.false_value.type is t):
            fail(
                self,
                "failed to verify that all of {true_value, false_value, result} have same type",
            )
        cond = self.condition.type
        if isinstance(cond, RankedTensorType) and shape_of(cond) != shape_of(t):
            fail(self, "failed to verify that condition is signless i1 or has matching shape")

    def fold(self):
        if self.true_value is self.false_value:
            return (self.true_value,)
        cond = constant_value(self.condition)
        if isinstance(cond, BoolAttr) or (isinstance(cond, DenseElementsAttr) and cond.is_splat):
            taken = cond.value if isinstance(cond, BoolAttr) else cond.splat_value
            return (self.true_value if taken else self.false_value,)
        if (
            self.condition.type is self.result.type
            and _is_bool(self.true_value, True)
            and _is_bool(self.false_value, False)
        ):
            return (self.condition,)  # select(c, true, false) is c
        return arith_fold_select(self)


def _is_bool(value, flag: bool) -> bool:
    return is_splat_value(constant_value(value), lambda v: bool(v) == flag)


def arith_fold_select(op):
    """A constant condition of several values with constant operands: elementwise."""
    folded = arith_fold.fold_elementwise(
        (op.condition, op.true_value, op.false_value),
        op.result.type,
        lambda c, a, b: a if c else b,
    )
    return None if folded is None else (folded,)


def is_float_type(t) -> bool:
    return isinstance(element_type(t), FloatType)


def is_integer_type(t) -> bool:
    return isinstance(element_type(t), IntegerType)
