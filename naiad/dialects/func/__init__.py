"""The `func` dialect (FuncOps.td): `func.func`, `func.return`, `func.call`: the functions of
the Linalg form, one `func.func` per kernel.

    func.func @add_kernel(%x: memref<*xf32>, %n: i32) {
      ...
      return
    }
    %r = call @helper(%a) : (i32) -> i32

`func.func` names `func` its default dialect, so the ops of its body print without the
prefix (`return`, `call`), as upstream prints them. The function rules and the function syntax
are those of `tt.func` (function_interface.py, syntax/function.py).
"""

from __future__ import annotations

from ...ir import (
    HasParent,
    IsolatedFromAbove,
    Operation,
    Pure,
    ReturnLike,
    Symbol,
    Terminator,
    UnitAttr,
    irdl_op,
    opt_attribute,
    var_operand,
)
from ..base import UnitAttrC
from ..function_interface import CallOpBase, FunctionOpBase, verify_return


@irdl_op
class FuncOp(FunctionOpBase):
    """A function: `sym_name`, `function_type`, a body region whose entry block takes the
    arguments (none: a declaration)."""

    name = "func.func"
    traits = frozenset({IsolatedFromAbove, Symbol})


@irdl_op
class ReturnOp(Operation):
    """Return `values` from the enclosing `func.func` (ODS calls them `operands`)."""

    name = "func.return"
    traits = frozenset({Pure, HasParent("func.func"), ReturnLike, Terminator})
    values = var_operand()
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, values=(), **fields):
        super().__init__(list(values), **fields)

    def verify_(self) -> None:
        verify_return(self, self.values)


@irdl_op
class CallOp(CallOpBase):
    """A direct call of the `func.func` named `callee`; `no_inline` asks inliners to keep it."""

    name = "func.call"
    function_class = FuncOp
    no_inline = opt_attribute(UnitAttrC)
    assembly_format = "$callee `(` operands `)` attr-dict `:` functional-type(operands, results)"

    def __init__(self, callee, args=(), result_types=None, *, no_inline=False, **fields):
        """`callee`: a FuncOp (its results give the result types), a name or a symbol."""
        if no_inline:
            fields["no_inline"] = UnitAttr()
        super().__init__(callee, args, result_types, **fields)
