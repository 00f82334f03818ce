"""`arith` syntax: `arith.select` (a C++ printer upstream) and the result names of
`arith.constant` (`%c1024_i32`, `%c-1_i64`, `%c0` for index, `%true`, `%false`, `%cst`)."""

from __future__ import annotations

from ...ir import IntegerAttr, IntegerType, RankedTensorType, i1
from ...ir.asm_syntax import custom_syntax


@custom_syntax("arith.constant")
class ConstantNames:
    """arith::ConstantOp::getAsmResultNames."""

    def result_names(self, op):
        value = op.attributes.get("value")
        result_type = op.results[0].type
        if isinstance(value, IntegerAttr):
            if result_type is i1:
                return [(0, "true" if value.value else "false")]
            suffix = f"_{result_type}" if isinstance(result_type, IntegerType) else ""
            return [(0, f"c{int(value.value)}{suffix}")]
        return [(0, "cst")]


@custom_syntax("arith.select")
class SelectSyntax:
    """`%r = arith.select %c, %a, %b : T`, or `: tensor<..xi1>, T` for a tensor condition."""

    def print(self, op, printer) -> None:
        printer.write(" ")
        printer.print_operands(op.operands)
        printer.print_optional_attr_dict(op.attributes)
        printer.write(" : ")
        condition_type = op.operands[0].type
        if isinstance(condition_type, RankedTensorType):
            printer.write(f"{condition_type}, ")
        printer.print_type(op.results[0].type)

    def parse(self, parser, state) -> None:
        refs = [parser.parse_operand_ref()]
        for _ in range(2):
            parser.expect(",")
            refs.append(parser.parse_operand_ref())
        parser.parse_optional_attr_dict(state.attributes)
        parser.expect(":")
        result_type = parser.parse_type()
        condition_type = i1
        if parser.accept(","):
            condition_type, result_type = result_type, parser.parse_type()
        types = (condition_type, result_type, result_type)
        state.operands = [parser.resolve_operand(r, t) for r, t in zip(refs, types)]
        state.result_types = [result_type]
