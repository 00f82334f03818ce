"""`tt` compute ops with structure: dot, dot_scaled, and reduce and scan with their combine
regions (map_elementwise and calls out of the IR are in tt/elementwise.py).

`tt.reduce` and `tt.scan` have no custom syntax upstream: Triton prints
them in the generic form (`"tt.reduce"(%x) <{axis = 1 : i32}> ({...})`). Their constructors make
the combine region's block with its arguments; the caller fills it and ends it with the
matching return op:

    red = ReduceOp([x], axis=1)
    a, b = red.combineOp.block.arguments
    ... append arith.AddFOp(a, b) and ReduceReturnOp([sum]) to red.combineOp.block
"""

from __future__ import annotations

from typing import ClassVar

from ...ir import (
    Block,
    FloatType,
    HasParent,
    IntegerAttr,
    IntegerType,
    Operation,
    Pure,
    RankedTensorType,
    Region,
    ReturnLike,
    SameOperandsAndResultEncoding,
    SameOperandsAndResultShape,
    SameOperandsEncoding,
    SameOperandsShape,
    SingleBlock,
    Terminator,
    attribute,
    i8,
    i32,
    irdl_op,
    operand,
    opt_attribute,
    opt_operand,
    region,
    result,
    var_operand,
    var_result,
)
from ..base import (
    BoolAttrC,
    I32Attr,
    bool_attr,
    check_inferred,
    check_type,
    fail,
    i32_attr,
    tensor_of,
)
from .attributes import InputPrecision, ScaleDotElemType
from .types import TT, TT_FloatTensor, TT_FpIntTensor, TT_Tensor, TT_Type, is_tt_float


@irdl_op
class DotOp(Operation):
    """`d = a @ b + c` on 2-D (or batched 3-D) tensors; `inputPrecision` says how f32 inputs
    use tensor cores (tf32, tf32x3, ieee, ...)."""

    name = "tt.dot"
    traits = TT | {Pure}
    a = operand(TT_FpIntTensor)
    b = operand(TT_FpIntTensor)
    c = operand(TT_FpIntTensor)
    inputPrecision = opt_attribute(InputPrecision)  # the ODS name
    maxNumImpreciseAcc = opt_attribute(I32Attr)  # the ODS name
    d = result(TT_FpIntTensor, like="c")
    assembly_format = (
        "$a`,` $b`,` $c (`,` `inputPrecision` `=` $inputPrecision^)? attr-dict `:` "
        "type($a) `*` type($b) `->` type($d)"
    )
    type_inference = (("c", "d", None),)
    attribute_defaults: ClassVar[dict] = {
        "inputPrecision": InputPrecision.get("ieee"),
        "maxNumImpreciseAcc": IntegerAttr(0, i32),
    }

    def __init__(self, a, b, c, *, inputPrecision=None, maxNumImpreciseAcc=None, **fields):
        if isinstance(inputPrecision, str):
            inputPrecision = InputPrecision.get(inputPrecision)
        if isinstance(maxNumImpreciseAcc, int):
            maxNumImpreciseAcc = i32_attr(maxNumImpreciseAcc)
        for name, value in (
            ("inputPrecision", inputPrecision),
            ("maxNumImpreciseAcc", maxNumImpreciseAcc),
        ):
            if value is not None and value is not self.attribute_defaults[name]:
                fields[name] = value
        super().__init__(a, b, c, **fields)

    def verify_(self) -> None:
        verify_dot_shapes(self, self.a.type, self.b.type, self.c.type)
        a, b = self.a.type.element_type, self.b.type.element_type
        if _width(a) != _width(b):
            fail(self, "element types of operands A and B must have same bit width")
        check_type(self, self.d.type, self.c.type, "result's type matches accumulator's type")


def _width(t) -> int:
    return t.width if isinstance(t, IntegerType | FloatType) else 0


def verify_dot_shapes(op, a: RankedTensorType, b: RankedTensorType, c: RankedTensorType) -> None:
    """Triton's DotOpInterface rules: 2-D or batched 3-D, K agrees, the result is M x N."""
    if a.rank != b.rank:
        fail(op, "expected operands to have the same rank")
    if a.rank not in (2, 3):
        fail(op, "expected operands to be 2d or 3d")
    if c.rank != a.rank:
        fail(op, "expected the accumulator to have the same rank as the operands")
    if a.shape[-1] != b.shape[-2]:
        fail(
            op,
            "expected the last dimension of the first operand to be equal to the "
            "second-to-last dimension of the second operand",
        )
    if a.rank == 3 and not a.shape[0] == b.shape[0] == c.shape[0]:
        fail(
            op,
            "expected the first dimension of the first operand to be equal to the first "
            "dimension of the result",
        )
    if c.shape[-2:] != (a.shape[-2], b.shape[-1]):
        fail(
            op,
            "expected the output shape to be the concatenation of the last dimension of the "
            "first operand and the last dimension of the second",
        )


_ScaledInput = tensor_of(lambda t: is_tt_float(t) or t is i8, "ranked tensor of float or i8")


@irdl_op
class DotScaledOp(Operation):
    """A dot of microscaled inputs (fp8/fp6/fp4 with per-block scales)."""

    name = "tt.dot_scaled"
    traits = TT | {Pure}
    a = operand(_ScaledInput)
    b = operand(_ScaledInput)
    c = operand(TT_FloatTensor)
    a_scale = opt_operand(_ScaledInput)
    b_scale = opt_operand(_ScaledInput)
    a_elem_type = attribute(ScaleDotElemType)
    b_elem_type = attribute(ScaleDotElemType)
    fastMath = attribute(BoolAttrC)  # the ODS name
    lhs_k_pack = opt_attribute(BoolAttrC)
    rhs_k_pack = opt_attribute(BoolAttrC)
    d = result(TT_FloatTensor, like="c")
    assembly_format = (
        "$a (`scale` $a_scale^)? `,` $b (`scale` $b_scale^)? `,` $c `lhs` `=` $a_elem_type "
        "`rhs` `=` $b_elem_type attr-dict `:` type($a) (`,` type($a_scale)^)? `*` type($b) "
        "(`,` type($b_scale)^)? `->` type($d)"
    )
    type_inference = (("c", "d", None),)

    def verify_(self) -> None:
        check_type(self, self.d.type, self.c.type, "result's type matches accumulator's type")


class _CombineOp(Operation):
    """What reduce and scan share: operands `srcs`, one single-block region `combineOp`
    whose block takes two scalars per operand and returns one per operand."""

    return_name = ""

    def _element_types(self) -> list:
        return [v.type.element_type for v in self.srcs]

    def single_op(self) -> Operation | None:
        """The one op of the combine region, applied to its two arguments and returned (a
        plain sum, maximum, ...), or None."""
        block = self.combineOp.blocks[0]
        ops = list(block.ops)
        if len(ops) != 2 or len(ops[0].results) != 1:
            return None
        if list(ops[1].operands) != list(ops[0].results):
            return None
        if sorted(map(id, ops[0].operands)) != sorted(map(id, block.arguments)):
            return None
        return ops[0]

    def verify_(self) -> None:
        if not self.srcs:
            fail(self, "must have at least 1 operand")
        if len(self.srcs) != len(self.result):
            fail(self, "must have the same number of inputs as outputs")
        axis = self.axis.value
        if not 0 <= axis < self.srcs[0].type.rank:
            fail(self, f"axis {axis} is out of range for a tensor of rank {self.srcs[0].type.rank}")
        self._verify_region()
        check_inferred(self, self._infer(self.srcs, axis, self.result))

    def _verify_region(self) -> None:
        elements = self._element_types()
        count = 2 * len(elements)
        block = self.combineOp.blocks[0] if self.combineOp.blocks else None
        if block is None:
            fail(self, "expects a non-empty combine region")
        if len(block.arguments) != count:
            fail(
                self,
                f"nested block must take {count} arguments, but given block with "
                f"{len(block.arguments)} arguments",
            )
        for i, arg in enumerate(block.arguments):
            expected = elements[i % len(elements)]
            if arg.type is not expected:
                fail(
                    self,
                    f"type mismatch on combine operation. Expected argument {i} to have type "
                    f"{expected} but got {arg.type}",
                )
        last = block.last_op
        if last is None or last.name != self.return_name:
            found = "nothing" if last is None else f"'{last.name}'"
            fail(
                self, f"combine operation must be terminated with a {self.return_name}, not {found}"
            )
        if len(last.operands) != len(elements):
            fail(
                self,
                f"expected combine operation to return {len(elements)} values but got "
                f"{len(last.operands)}",
            )
        for i, (value, expected) in enumerate(zip(last.operands, elements)):
            if value.type is not expected:
                fail(
                    self,
                    f"type mismatch on combine operation. Expected argument {i} to have type "
                    f"{expected} but got {value.type}",
                )


def _combine_region(srcs) -> Region:
    types = [v.type.element_type for v in srcs]
    return Region([Block(types + types)])


@irdl_op
class ReduceOp(_CombineOp):
    """Reduce each of `srcs` along `axis` with the combine region; a rank-1 input reduces to
    a scalar."""

    name = "tt.reduce"
    traits = TT | {Pure, SameOperandsShape, SameOperandsEncoding, SingleBlock}
    srcs = var_operand(TT_Tensor)
    axis = attribute(I32Attr)
    result = var_result(TT_Type)
    combineOp = region(single_block=True)  # the ODS name
    return_name = "tt.reduce.return"

    def __init__(self, srcs, axis, **fields):
        srcs = list(srcs)
        axis = i32_attr(axis)
        fields.setdefault("result", self._infer(srcs, axis.value))
        fields.setdefault("combineOp", _combine_region(srcs))
        super().__init__(srcs, axis=axis, **fields)

    @staticmethod
    def _infer(srcs, axis: int, results=None) -> list:
        inferred = []
        for k, v in enumerate(srcs):
            t = v.type
            if t.rank == 1:
                inferred.append(t.element_type)
                continue
            shape = t.shape[:axis] + t.shape[axis + 1 :]
            # The encoding of a reduced tensor (TTGIR's slice layout) is the result's own.
            encoding = None if results is None else getattr(results[k].type, "encoding", None)
            inferred.append(t.clone(shape=shape, encoding=encoding))
        return inferred


@irdl_op
class ReduceReturnOp(Operation):
    name = "tt.reduce.return"
    traits = TT | {HasParent("tt.reduce"), Pure, Terminator, ReturnLike}
    result = var_operand()
    assembly_format = "$result attr-dict `:` type($result)"


@irdl_op
class ScanOp(_CombineOp):
    """Inclusive scan of each of `srcs` along `axis` (backwards with `reverse`)."""

    name = "tt.scan"
    traits = TT | {
        Pure,
        SameOperandsAndResultEncoding,
        SameOperandsAndResultShape,
        SingleBlock,
    }
    srcs = var_operand(TT_Tensor)
    axis = attribute(I32Attr)
    reverse = attribute(BoolAttrC)
    result = var_result(TT_Tensor)
    combineOp = region(single_block=True)  # the ODS name
    return_name = "tt.scan.return"

    def __init__(self, srcs, axis, reverse=False, **fields):
        srcs = list(srcs)
        fields.setdefault("result", [v.type for v in srcs])
        fields.setdefault("combineOp", _combine_region(srcs))
        super().__init__(srcs, axis=i32_attr(axis), reverse=bool_attr(reverse), **fields)

    @staticmethod
    def _infer(srcs, axis: int, results=None) -> list:
        return [v.type for v in srcs]


@irdl_op
class ScanReturnOp(Operation):
    name = "tt.scan.return"
    traits = TT | {HasParent("tt.scan"), Pure, Terminator, ReturnLike}
    result = var_operand()
    assembly_format = "$result attr-dict `:` type($result)"
