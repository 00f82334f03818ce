"""The hand-written syntax of `ttg` ops: `ttg.barrier all` (its address spaces print as keywords
joined by `|`: `local|global_read`), `ttg.memdesc_subslice`'s constant offsets, and the
`!ttg.async.token` result that the async ops' text leaves out."""

from __future__ import annotations

from ...ir.asm_syntax import custom_syntax
from ...ir.attributes import DenseArrayAttr
from ...ir.types import i32
from .barrier import AddrSpace
from .types import ASYNC_TOKEN

_TOKEN_RESULTS = ("ttg.async_copy_global_to_local", "ttg.async_commit_group", "ttg.async_wait")


@custom_syntax("ttg.barrier")
class BarrierSyntax:
    def print(self, op, printer) -> None:
        printer.write(" " + AddrSpace.keyword(op.attributes["addrSpace"]))
        printer.print_optional_attr_dict(op.attributes, elided=("addrSpace",))

    def parse(self, parser, state) -> None:
        pos = parser.lex.pos
        text = parser.parse_keyword("address space")
        while parser.accept("|"):
            text += "|" + parser.parse_keyword("address space")
        try:
            state.attributes["addrSpace"] = AddrSpace.parse_keyword(text)
        except ValueError as exc:
            raise parser.error(str(exc), pos) from None
        parser.parse_optional_attr_dict(state.attributes)


@custom_syntax("ttg.memdesc_subslice")
class MemDescSubsliceSyntax:
    """`%v = ttg.memdesc_subslice %a[0, 16] : !ttg.memdesc<...> -> !ttg.memdesc<...>`: the
    offsets are constants, printed inside the brackets."""

    def print(self, op, printer) -> None:
        offsets = ", ".join(map(str, op.attributes["offsets"].values))
        printer.write(f" {printer.value(op.operands[0])}[{offsets}]")
        printer.print_optional_attr_dict(op.attributes, elided=("offsets",))
        printer.write(f" : {op.operands[0].type} -> {op.results[0].type}")

    def parse(self, parser, state) -> None:
        source = parser.parse_operand_ref()
        parser.expect("[")
        offsets = [parser.parse_integer("offset")]
        while parser.accept(","):
            offsets.append(parser.parse_integer("offset"))
        parser.expect("]")
        state.attributes["offsets"] = DenseArrayAttr(i32, offsets)
        parser.parse_optional_attr_dict(state.attributes)
        parser.expect(":")
        source_type = parser.parse_type()
        parser.expect("->")
        state.result_types.append(parser.parse_type())
        state.operands.append(parser.resolve_operand(source, source_type))


@custom_syntax(*_TOKEN_RESULTS)
class AsyncTokenResult:
    """The async ops' one result is always an `!ttg.async.token`, which the text leaves
    out."""

    def infer_result_types(self, state, operands) -> list:
        return [ASYNC_TOKEN]
