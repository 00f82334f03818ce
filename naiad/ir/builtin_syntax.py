"""The custom syntax of `builtin.module`: `module @name attributes {...} { ... }`, its
ODS format `($sym_name^)? attr-dict-with-keyword $bodyRegion` spelled out. It lives in the IR
core because every module prints through it, with or without dialects loaded."""

from __future__ import annotations

from .asm_syntax import custom_syntax
from .attributes import StringAttr


@custom_syntax("builtin.module")
class ModuleSyntax:
    def print(self, op, printer) -> None:
        name = op.attributes.get("sym_name")
        if name is not None:
            printer.write(" ")
            printer.print_symbol_name(name.value)
        printer.print_optional_attr_dict(op.attributes, elided=("sym_name",), keyword=True)
        printer.write(" ")
        printer.print_region(op.regions[0])

    def parse(self, parser, state) -> None:
        if parser.lex.peek("@"):
            state.attributes["sym_name"] = StringAttr(parser.parse_symbol_name())
        parser.parse_optional_attr_dict_with_keyword(state.attributes)
        region = parser.parse_region(isolated=True)
        if not region.blocks:
            region.add_block()
        state.regions.append(region)
