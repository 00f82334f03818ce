"""`tt` functions, calls and returns, and the device-side debug ops `tt.print` and
`tt.assert` (TritonOps.td).

`tt.func` is printed by hand-written C++ upstream (function_interface_impl: `tt.func public
@k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes {noinline = false}`), hence
`custom_syntax`. Argument attributes live in `arg_attrs`, an array of dictionaries, one per
argument, as MLIR stores them. What functions share with `func.func` is in
function_interface.py.
"""

from __future__ import annotations

from ...ir import (
    HasParent,
    IntegerType,
    IsolatedFromAbove,
    MemoryWrite,
    Operation,
    Pure,
    ReturnLike,
    Symbol,
    Terminator,
    attribute,
    element_type,
    i1,
    irdl_op,
    operand,
    var_operand,
)
from ..base import (
    BoolAttrC,
    DenseI32ArrayAttr,
    StrAttr,
    bool_attr,
    i32_array,
    str_attr,
    tensor_or_scalar,
)
from ..function_interface import CallOpBase, FunctionOpBase, verify_return
from .types import TT, TT_Type


@irdl_op
class FuncOp(FunctionOpBase):
    """A kernel or `@jit` function: `sym_name`, `function_type`, a body region whose entry
    block takes the arguments (none: a declaration)."""

    name = "tt.func"
    traits = TT | {IsolatedFromAbove, Symbol}


@irdl_op
class ReturnOp(Operation):
    """Return `srcs` from the enclosing `tt.func`."""

    name = "tt.return"
    traits = TT | {Pure, HasParent("tt.func"), ReturnLike, Terminator}
    srcs = var_operand()
    assembly_format = "attr-dict ($srcs^ `:` type($srcs))?"

    def __init__(self, srcs=(), **fields):
        super().__init__(list(srcs), **fields)

    def verify_(self) -> None:
        verify_return(self, self.srcs)


@irdl_op
class CallOp(CallOpBase):
    """A direct call of the `tt.func` named `callee` (`@jit` functions before inlining,
    `noinline` ones after)."""

    name = "tt.call"
    function_class = FuncOp
    assembly_format = "$callee `(` operands `)` attr-dict `:` functional-type(operands, results)"


@irdl_op
class PrintOp(Operation):
    """Device-side print of `prefix` and `args` (`tl.device_print`); `isSigned` says per
    argument whether integers print signed."""

    name = "tt.print"
    traits = TT | {MemoryWrite}
    prefix = attribute(StrAttr)
    hex = attribute(BoolAttrC)
    args = var_operand(TT_Type)
    isSigned = attribute(DenseI32ArrayAttr)  # the ODS name
    assembly_format = "$prefix attr-dict (`:` $args^ `:` type($args))?"

    def __init__(self, prefix, args=(), *, hex=False, isSigned=None, **fields):
        """`isSigned` defaults to 1 for integer arguments, 0 for others; the frontend, which
        knows `tl.dtype` signedness, passes it for unsigned integers."""
        args = list(args)
        if isSigned is None:
            isSigned = [int(isinstance(element_type(v.type), IntegerType)) for v in args]
        signed = isSigned
        super().__init__(
            args,
            prefix=str_attr(prefix),
            hex=bool_attr(hex),
            isSigned=i32_array(signed),
            **fields,
        )


_I1OrTensor = tensor_or_scalar(lambda t: t is i1, "1-bit signless integer or tensor of i1")


@irdl_op
class AssertOp(Operation):
    """Device-side assert (`tl.device_assert`): abort with `message` where `condition` is
    false."""

    name = "tt.assert"
    traits = TT | {MemoryWrite}
    condition = operand(_I1OrTensor)
    message = attribute(StrAttr)
    assembly_format = "$condition `,` $message attr-dict `:` type($condition)"

    def __init__(self, condition, message, **fields):
        super().__init__(condition, message=str_attr(message), **fields)
