"""`scf.for`, `scf.if` and `scf.while`, as SCF.cpp prints and parses them.

    %r:2 = scf.for %i = %lb to %ub step %s iter_args(%a = %x, %b = %y) -> (f32, i32)  : i32 {
    scf.if %c -> (f32) { ... } else { ... }
    %r:2 = scf.while (%a = %x, %b = %y) : (f32, i32) -> (f32, i32) { ... } do { ^bb0(...): ... }

The induction variable and iteration arguments of `scf.for`, and the `before` arguments of
`scf.while`, are named but have no location in the text; the parser gives them their position
in it, as MLIR does. A terminator without operands (`scf.yield`) is left out and put back.
"""

from __future__ import annotations

from ...ir import IndexType, Region, UnitAttr, i1
from ...ir.asm_syntax import custom_syntax
from ..syntax.common import ensure_terminator, print_initialization_list


@custom_syntax("scf.for")
class ForSyntax:
    def print(self, op, printer) -> None:
        body = op.regions[0].blocks[0]
        iv, iter_args = body.arguments[0], body.arguments[1:]
        lower, upper, step, *inits = op.operands
        if "unsignedCmp" in op.attributes:
            printer.write(" unsigned")
        printer.write(
            f" {printer.value(iv)} = {printer.value(lower)} to {printer.value(upper)}"
            f" step {printer.value(step)}"
        )
        print_initialization_list(printer, iter_args, inits, " iter_args")
        if inits:
            printer.write(f" -> ({', '.join(str(v.type) for v in inits)})")
        printer.write(" ")
        if not isinstance(iv.type, IndexType):
            printer.write(f" : {iv.type} ")
        printer.print_region(op.regions[0], print_entry_args=False, print_terminators=bool(inits))
        printer.print_optional_attr_dict(op.attributes, elided=("unsignedCmp",))

    def parse(self, parser, state) -> None:
        if parser.parse_optional_keyword("unsigned"):
            state.attributes["unsignedCmp"] = UnitAttr()
        iv = parser.parse_argument(allow_type=False)
        parser.expect("=")
        bounds = [parser.parse_operand_ref()]
        parser.expect("to")
        bounds.append(parser.parse_operand_ref())
        parser.expect("step")
        bounds.append(parser.parse_operand_ref())
        iter_args, inits = [], []
        if parser.parse_optional_keyword("iter_args"):
            iter_args, inits = parser.parse_assignment_list()
            parser.expect("->")
            state.result_types = parser.parse_function_results()
        if len(iter_args) != len(state.result_types):
            raise parser.error("mismatch in number of loop-carried values and defined values")
        iv.type = parser.parse_type() if parser.accept(":") else IndexType()
        for arg, t in zip(iter_args, state.result_types):
            arg.type = t
        region = parser.parse_region([iv, *iter_args])
        ensure_terminator(region, "scf.yield", state.location)
        state.operands = [parser.resolve_operand(r, iv.type) for r in bounds]
        state.operands += [parser.resolve_operand(r, a.type) for r, a in zip(inits, iter_args)]
        state.regions.append(region)
        parser.parse_optional_attr_dict(state.attributes)


@custom_syntax("scf.if")
class IfSyntax:
    def print(self, op, printer) -> None:
        printer.write(f" {printer.value(op.operands[0])}")
        terminators = bool(op.results)
        if terminators:
            printer.write(f" -> ({', '.join(str(r.type) for r in op.results)})")
        printer.write(" ")
        printer.print_region(op.regions[0], print_entry_args=False, print_terminators=terminators)
        if op.regions[1].blocks:
            printer.write(" else ")
            printer.print_region(
                op.regions[1], print_entry_args=False, print_terminators=terminators
            )
        printer.print_optional_attr_dict(op.attributes)

    def parse(self, parser, state) -> None:
        state.operands = [parser.parse_operand(i1)]
        if parser.accept("->"):
            state.result_types = parser.parse_function_results()
        then_region = parser.parse_region()
        ensure_terminator(then_region, "scf.yield", state.location)
        state.regions.append(then_region)
        if parser.parse_optional_keyword("else"):
            else_region = parser.parse_region()
            ensure_terminator(else_region, "scf.yield", state.location)
        else:
            else_region = Region()
        state.regions.append(else_region)
        parser.parse_optional_attr_dict(state.attributes)


@custom_syntax("scf.while")
class WhileSyntax:
    def print(self, op, printer) -> None:
        before = op.regions[0].blocks[0]
        print_initialization_list(printer, before.arguments, op.operands, " ")
        printer.write(" : ")
        printer.print_functional_type([v.type for v in op.operands], [r.type for r in op.results])
        printer.write(" ")
        printer.print_region(op.regions[0], print_entry_args=False)
        printer.write(" do ")
        printer.print_region(op.regions[1])
        printer.print_optional_attr_dict(op.attributes, keyword=True)

    def parse(self, parser, state) -> None:
        arguments, refs = [], []
        if parser.lex.peek("("):
            arguments, refs = parser.parse_assignment_list()
        parser.expect(":")
        pos = parser.lex.pos
        inputs = parser.parse_type_list_parens()
        parser.expect("->")
        state.result_types = parser.parse_function_results()
        if len(inputs) != len(refs):
            raise parser.error(
                f"expected as many input types as operands (expected {len(refs)} got "
                f"{len(inputs)})",
                pos,
            )
        state.operands = [parser.resolve_operand(r, t) for r, t in zip(refs, inputs)]
        for arg, t in zip(arguments, inputs):
            arg.type = t
        state.regions.append(parser.parse_region(arguments))
        parser.expect("do")
        state.regions.append(parser.parse_region())
        parser.parse_optional_attr_dict_with_keyword(state.attributes)
