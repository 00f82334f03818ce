"""`func.func`: the function syntax, with `func` as the default dialect of its body (upstream's
FuncOp::getDefaultDialect), so `func.return` prints and parses as `return`."""

from __future__ import annotations

from ...ir.asm_syntax import custom_syntax
from ..syntax.function import FunctionSyntax


@custom_syntax("func.func")
class FuncSyntax(FunctionSyntax):
    default_dialect = "func"
