"""`tt` ops that apply code elementwise: `tt.map_elementwise` (a scalar region, printed in
the generic form as upstream does), `tt.extern_elementwise` (a libdevice call) and
`tt.elementwise_inline_asm`. The last two are Pure exactly when their `pure` attribute says so.
"""

from __future__ import annotations

from ...ir import (
    Elementwise,
    HasParent,
    MemoryRead,
    MemoryWrite,
    Operation,
    Pure,
    RankedTensorType,
    RecursiveMemoryEffects,
    ReturnLike,
    SameOperandsAndResultEncoding,
    SameOperandsAndResultShape,
    Terminator,
    attribute,
    irdl_op,
    region,
    result,
    var_operand,
    var_result,
)
from ..base import BoolAttrC, I32Attr, StrAttr, bool_attr, conditional_traits, fail, numel, str_attr
from .types import TT, TT_Tensor, TT_Type


@irdl_op
class MapElementwiseOp(Operation):
    """Apply the scalar region to `pack` elements of each of `srcs` at a time."""

    name = "tt.map_elementwise"
    traits = TT | {
        SameOperandsAndResultEncoding,
        SameOperandsAndResultShape,
        RecursiveMemoryEffects,
    }
    srcs = var_operand(TT_Tensor)
    pack = attribute(I32Attr)
    result = var_result(TT_Tensor)
    scalarOp = region()  # the ODS name

    def verify_(self) -> None:
        pack = self.pack.value
        if pack < 1:
            fail(self, "pack must be at least 1")
        block = self.scalarOp.entry_block
        if block is not None and len(block.arguments) != pack * len(self.srcs):
            fail(
                self,
                f"region must take {pack * len(self.srcs)} arguments ({pack} per operand), "
                f"but takes {len(block.arguments)}",
            )


@irdl_op
class MapElementwiseReturnOp(Operation):
    name = "tt.map_elementwise.return"
    traits = TT | {HasParent("tt.map_elementwise"), Pure, Terminator, ReturnLike}
    result = var_operand()
    assembly_format = "attr-dict ($result^ `:` type($result))?"


def _pure_flag(op) -> frozenset:
    """Pure when the op's `pure` attribute says so, else it reads and writes memory."""
    flag = op.attributes.get("pure")
    return (
        frozenset({Pure})
        if flag is not None and flag.value
        else frozenset({MemoryRead, MemoryWrite})
    )


@conditional_traits(_pure_flag)
@irdl_op
class ExternElementwiseOp(Operation):
    """A call of `symbol` from the library `libname` at `libpath` (libdevice's functions),
    elementwise."""

    name = "tt.extern_elementwise"
    traits = TT | {Elementwise, SameOperandsAndResultEncoding}
    srcs = var_operand(TT_Type)
    libname = attribute(StrAttr)
    libpath = attribute(StrAttr)
    symbol = attribute(StrAttr)
    pure = attribute(BoolAttrC)
    result = result(TT_Type)
    assembly_format = "operands attr-dict `:` functional-type(operands, $result)"

    def __init__(self, srcs, symbol, *, libname="", libpath="", pure=True, **fields):
        super().__init__(
            list(srcs),
            symbol=str_attr(symbol),
            libname=str_attr(libname),
            libpath=str_attr(libpath),
            pure=bool_attr(pure),
            **fields,
        )


@conditional_traits(_pure_flag)
@irdl_op
class ElementwiseInlineAsmOp(Operation):
    """Inline assembly applied to `packed_element` elements of the arguments at a time."""

    name = "tt.elementwise_inline_asm"
    traits = TT | {Elementwise, SameOperandsAndResultEncoding}
    asm_string = attribute(StrAttr)
    constraints = attribute(StrAttr)
    pure = attribute(BoolAttrC)
    packed_element = attribute(I32Attr)
    args = var_operand(TT_Type)
    result = var_result(TT_Type)
    assembly_format = "$asm_string attr-dict ($args^ `:` type($args))? `->` type($result)"

    def verify_(self) -> None:
        if self.args:
            count = (
                numel(self.args[0].type) if isinstance(self.args[0].type, RankedTensorType) else 0
            )
            packed = self.packed_element.value
            if count % packed:
                fail(
                    self,
                    f"number of input elements {count} must be a multiple of the op's "
                    f"packed_element attribute, {packed}",
                )
