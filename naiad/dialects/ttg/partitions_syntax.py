"""The text of `ttg.warp_specialize` (partitions.py), as Triton prints and parses it:

    ttg.warp_specialize(%a) attributes {requestedRegisters = array<i32: 40>}
    default {
      ...
      ttg.warp_yield
    }
    partition0(%x: !tt.ptr<i32>) num_warps(4) {
      ...
      ttg.warp_return
    } : (!tt.ptr<i32>) -> ()

`partitionNumWarps` is spelled by each partition's `num_warps(n)`; the holder op of the
partition regions (`ttg.warp_specialize.partitions`) is implied; the partitions are isolated
from above (their names are their own).
"""

from __future__ import annotations

from ...ir.asm_syntax import custom_syntax
from ...ir.attributes import DenseArrayAttr
from ...ir.types import i32
from .partitions import holder_region


@custom_syntax("ttg.warp_specialize")
class WarpSpecializeSyntax:
    def print(self, op, printer) -> None:
        printer.write(f"({', '.join(printer.value(v) for v in op.operands)})")
        printer.print_optional_attr_dict(op.attributes, elided=("partitionNumWarps",), keyword=True)
        pad = "\n" + " " * printer.indent
        printer.write(f"{pad}default ")
        printer.print_region(op.defaultRegion, print_entry_args=False)
        warps = op.partitionNumWarps.values
        for i, block in enumerate(op.partition_blocks):
            printer.write(f"{pad}partition{i}(")
            for k, arg in enumerate(block.arguments):
                printer.write(", " if k else "")
                printer.print_region_argument(arg)
            printer.write(f") num_warps({warps[i]}) ")
            printer.print_region(block.parent, print_entry_args=False)
        operands = ", ".join(str(v.type) for v in op.operands)
        results = ", ".join(str(r.type) for r in op.results)
        printer.write(f" : ({operands}) -> ({results})")

    def parse(self, parser, state) -> None:
        lex = parser.lex
        lex.expect("(")
        refs = []
        if not lex.accept(")"):
            refs = [parser.parse_operand_ref()]
            while lex.accept(","):
                refs.append(parser.parse_operand_ref())
            lex.expect(")", "to end the captures")
        parser.parse_optional_attr_dict_with_keyword(state.attributes)
        lex.expect("default", "before the default region")
        state.regions.append(parser.parse_region())
        regions, warps = [], []
        while parser.parse_optional_keyword(f"partition{len(regions)}"):
            arguments = _parse_arguments(parser)
            lex.expect("num_warps", "after a partition's arguments")
            lex.expect("(")
            warps.append(parser.parse_integer("number of warps"))
            lex.expect(")")
            regions.append(parser.parse_region(arguments, isolated=True))
        lex.expect(":", "after the partitions")
        pos = lex.pos
        inputs = parser.parse_type_list_parens()
        lex.expect("->")
        state.result_types = parser.parse_function_results()
        if len(inputs) != len(refs):
            raise parser.error(f"expected {len(refs)} capture types, got {len(inputs)}", pos)
        state.operands = [parser.resolve_operand(r, t) for r, t in zip(refs, inputs)]
        state.attributes["partitionNumWarps"] = DenseArrayAttr(i32, warps)
        state.regions.append(holder_region(regions, state.location))


def _parse_arguments(parser) -> list:
    """`(%x: type, ...)`, a partition's block arguments."""
    lex = parser.lex
    lex.expect("(")
    if lex.accept(")"):
        return []
    arguments = [parser.parse_argument()]
    while lex.accept(","):
        arguments.append(parser.parse_argument())
    lex.expect(")", "to end a partition's arguments")
    return arguments
