"""`bufferization.alloc_tensor(%n) copy(%t) size_hint=%h {attrs} : tensor<?xf32>`: the C++
printer and parser of upstream's AllocTensorOp (the other bufferization ops have plain
formats)."""

from __future__ import annotations

from ...ir import DenseArrayAttr, IndexType, i32
from ...ir.asm_syntax import custom_syntax

_SEGMENTS = "operandSegmentSizes"


@custom_syntax("bufferization.alloc_tensor")
class AllocTensorSyntax:
    def print(self, op, printer) -> None:
        dynamic, copy, hint = _groups(op)
        printer.write("(")
        printer.print_operands(dynamic)
        printer.write(")")
        if copy:
            printer.write(f" copy({printer.value(copy[0])})")
        if hint:
            printer.write(f" size_hint={printer.value(hint[0])}")
        printer.print_optional_attr_dict(op.attributes, elided=(_SEGMENTS,))
        printer.write(f" : {op.results[0].type}")

    def parse(self, parser, state) -> None:
        parser.expect("(")
        dynamic = []
        if not parser.accept(")"):
            dynamic.append(parser.parse_operand_ref())
            while parser.accept(","):
                dynamic.append(parser.parse_operand_ref())
            parser.expect(")")
        copy = hint = None
        if parser.parse_optional_keyword("copy"):
            parser.expect("(")
            copy = parser.parse_operand_ref()
            parser.expect(")")
        if parser.parse_optional_keyword("size_hint"):
            parser.expect("=")
            hint = parser.parse_operand_ref()
        parser.parse_optional_attr_dict(state.attributes)
        parser.expect(":")
        result_type = parser.parse_type()
        index = IndexType()
        state.operands = [parser.resolve_operand(r, index) for r in dynamic]
        if copy is not None:
            state.operands.append(parser.resolve_operand(copy, result_type))
        if hint is not None:
            state.operands.append(parser.resolve_operand(hint, index))
        sizes = [len(dynamic), int(copy is not None), int(hint is not None)]
        state.attributes[_SEGMENTS] = DenseArrayAttr(i32, sizes)
        state.result_types = [result_type]


def _groups(op) -> tuple:
    """The dynamic sizes, the copy and the size hint (each a tuple)."""
    sizes = op.attributes[_SEGMENTS].values
    operands = op.operands
    first, second = sizes[0], sizes[0] + sizes[1]
    return operands[:first], operands[first:second], operands[second:]
