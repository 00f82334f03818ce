"""`ttg.barrier all`: the one TritonGPU op TTIR holds; its address spaces print as keywords
joined by `|` (`local|global_read`)."""

from __future__ import annotations

from naiad.ir.asm_syntax import custom_syntax

from ..ttg_min import AddrSpace


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
