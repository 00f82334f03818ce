"""`tt` casts, elementwise arithmetic, pointer arithmetic and program ids (TritonOps.td).

AddPtrOp(ptrs, offsets)                  # the result type is the pointer's
GetProgramIdOp("x")                      # i32
MakeRangeOp(0, 128)                      # tensor<128xi32>
FpToFpOp(x, result=..., rounding="rtne")
"""

from __future__ import annotations

import math

from ...ir import (
    Elementwise,
    Operation,
    Pure,
    RankedTensorType,
    SameOperandsAndResultEncoding,
    SameOperandsAndResultShape,
    SameOperandsAndResultType,
    attribute,
    element_type,
    i32,
    irdl_op,
    operand,
    opt_attribute,
    result,
)
from ...ir.rewriter import constant_value
from ..arith import folding as arith_fold
from ..base import I32Attr, bit_width, check_type, fail, i32_attr, is_splat_value, splat_of
from .attributes import ProgramIDDim, PropagateNan, RoundingMode
from .types import (
    TT,
    PointerType,
    TT_FloatLike,
    TT_I64Like,
    TT_IntLike,
    TT_IntTensor,
    TT_PtrLike,
    TT_Type,
)

_CAST = TT | {Elementwise, SameOperandsAndResultShape, SameOperandsAndResultEncoding, Pure}
_CAST_FORMAT = "$src attr-dict `:` type($src) `->` type($result)"


@irdl_op
class IntToPtrOp(Operation):
    """An i64 (or i64 tensor) as a pointer."""

    name = "tt.int_to_ptr"
    traits = _CAST
    src = operand(TT_I64Like)
    result = result(TT_PtrLike)
    assembly_format = _CAST_FORMAT


@irdl_op
class PtrToIntOp(Operation):
    name = "tt.ptr_to_int"
    traits = _CAST
    src = operand(TT_PtrLike)
    result = result(TT_I64Like)
    assembly_format = _CAST_FORMAT


@irdl_op
class BitcastOp(Operation):
    """Reinterpret bits between types of one width; pointers may change pointee (arith.bitcast
    cannot take pointers)."""

    name = "tt.bitcast"
    traits = _CAST
    src = operand(TT_Type)
    result = result(TT_Type)
    assembly_format = _CAST_FORMAT

    def verify_(self) -> None:
        src, dst = element_type(self.src.type), element_type(self.result.type)
        if isinstance(dst, PointerType) != isinstance(src, PointerType):
            fail(self, "Cannot bitcast pointer to non-pointer type or back")
        if bit_width(src) != bit_width(dst):
            fail(
                self,
                f"Cannot bitcast data-type of size {bit_width(src)} to data-type of size "
                f"{bit_width(dst)}",
            )

    def fold(self):
        return (self.src,) if self.src.type is self.result.type else None


@irdl_op
class FpToFpOp(Operation):
    """Float conversion with an explicit rounding mode (fp8 formats, round-toward-zero):
    required when narrowing."""

    name = "tt.fp_to_fp"
    traits = _CAST
    src = operand(TT_FloatLike)
    rounding = opt_attribute(RoundingMode)
    result = result(TT_FloatLike)
    assembly_format = (
        "$src attr-dict (`,` `rounding` `=` $rounding^)? `:` type($src) `->` type($result)"
    )

    def __init__(self, src, *, rounding=None, location=None, attributes=None, **fields):
        if isinstance(rounding, str):
            rounding = RoundingMode.get(rounding)
        super().__init__(src, rounding=rounding, location=location, attributes=attributes, **fields)

    def verify_(self) -> None:
        src, dst = element_type(self.src.type), element_type(self.result.type)
        if dst.width < src.width and self.rounding is None:
            fail(self, "Rounding mode is required for FP downcast")

    def fold(self):
        # Only zeros fold (as Triton's folder): the rounding of other values is the target's.
        attr = constant_value(self.src)
        if is_splat_value(attr, lambda v: v == 0.0):
            value = attr.splat_value if hasattr(attr, "splat_value") else attr.value
            return (arith_fold.make_attr(self.result.type, [math.copysign(0.0, value)]),)
        return None


@irdl_op
class ClampFOp(Operation):
    """Clamp `x` to [min, max]; `propagateNan = all` makes a NaN `x` the result."""

    name = "tt.clampf"
    traits = TT | {Elementwise, SameOperandsAndResultType, Pure}
    x = operand(TT_FloatLike)
    min = operand(TT_FloatLike)
    max = operand(TT_FloatLike)
    propagateNan = attribute(PropagateNan)  # the ODS name
    result = result(TT_FloatLike, like="x")
    assembly_format = (
        "$x `,` $min `,` $max `,` `propagateNan` `=` $propagateNan attr-dict `:` type($result)"
    )

    def __init__(self, x, min, max, propagateNan="none", **kwargs):
        super().__init__(x, min, max, propagateNan=PropagateNan.get(propagateNan), **kwargs)


class _FloatUnary(Operation):
    traits = TT | {Elementwise, SameOperandsAndResultType, Pure}
    x = operand(TT_FloatLike)
    result = result(TT_FloatLike, like="x")
    assembly_format = "$x attr-dict `:` type($x)"


@irdl_op
class PreciseSqrtOp(_FloatUnary):
    """Correctly rounded square root (`tl.sqrt_rn`)."""

    name = "tt.precise_sqrt"


@irdl_op
class PreciseDivFOp(Operation):
    """Correctly rounded division (`tl.div_rn`)."""

    name = "tt.precise_divf"
    traits = TT | {Elementwise, SameOperandsAndResultType, Pure}
    x = operand(TT_FloatLike)
    y = operand(TT_FloatLike)
    result = result(TT_FloatLike, like="x")
    assembly_format = "$x `,` $y attr-dict `:` type($x)"


@irdl_op
class MulhiUIOp(Operation):
    """The high half of the 2N-bit unsigned product (`tl.umulhi`)."""

    name = "tt.mulhiui"
    traits = TT | {Elementwise, SameOperandsAndResultType, Pure}
    x = operand(TT_IntLike)
    y = operand(TT_IntLike)
    result = result(TT_IntLike, like="x")
    assembly_format = "$x `,` $y attr-dict `:` type($x)"

    def fold(self):
        w = arith_fold.width_of(self.result.type)
        rule = arith_fold.INT_RULES["mulhiui"]
        folded = arith_fold.fold_elementwise(
            (self.x, self.y), self.result.type, lambda a, b: rule(a, b, w)
        )
        return None if folded is None else (folded,)


@irdl_op
class AddPtrOp(Operation):
    """Offset `ptr` by `offset` elements, elementwise over tensors."""

    name = "tt.addptr"
    traits = TT | {Pure, Elementwise, SameOperandsAndResultShape, SameOperandsAndResultEncoding}
    ptr = operand(TT_PtrLike)
    offset = operand(TT_IntLike)
    result = result(TT_PtrLike, like="ptr")
    assembly_format = "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)"
    type_inference = (("ptr", "result", None),)

    def verify_(self) -> None:
        check_type(self, self.result.type, self.ptr.type, "result type matches ptr type")

    def fold(self):
        if is_splat_value(constant_value(self.offset), lambda v: v == 0):
            return (self.ptr,)
        return None


class _ProgramQuery(Operation):
    traits = TT | {Pure}
    axis = attribute(ProgramIDDim)
    result = result(i32)
    assembly_format = "$axis attr-dict `:` type($result)"

    def __init__(self, axis=0, *, location=None, attributes=None, **fields):
        fields.setdefault("result", i32)
        super().__init__(
            axis=ProgramIDDim.get(axis), location=location, attributes=attributes, **fields
        )

    @property
    def axis_index(self) -> int:
        return self.axis.value


@irdl_op
class GetProgramIdOp(_ProgramQuery):
    """This program's index along `axis` (x, y, z) of the launch grid."""

    name = "tt.get_program_id"


@irdl_op
class GetNumProgramsOp(_ProgramQuery):
    """The grid's size along `axis`."""

    name = "tt.get_num_programs"


@irdl_op
class MakeRangeOp(Operation):
    """`[start, end)` as a 1-D i32 tensor (`tl.arange`)."""

    name = "tt.make_range"
    traits = TT | {Pure}
    start = attribute(I32Attr)
    end = attribute(I32Attr)
    result = result(TT_IntTensor)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, start, end, *, location=None, attributes=None, **fields):
        start, end = i32_attr(start), i32_attr(end)
        fields.setdefault("result", RankedTensorType([end.value - start.value], i32))
        super().__init__(start=start, end=end, location=location, attributes=attributes, **fields)

    def verify_(self) -> None:
        start, end = self.start.value, self.end.value
        if start >= end:
            fail(self, "start must be less than end")
        t = self.result.type
        if t.rank != 1:
            fail(self, "return type must be a 1D tensor")
        if end - start != t.shape[0]:
            fail(
                self,
                f"number of elements in returned tensor, {t.shape[0]}, must match size of "
                f"range [{start}, {end}), which has {end - start} elements",
            )
        if t.element_type is not i32:
            fail(self, f"returned tensor must have i32 elements, but has {t.element_type}")

    def fold(self):
        if self.end.value - self.start.value == 1:
            return (splat_of(self.start, self.result.type),)
        return None
