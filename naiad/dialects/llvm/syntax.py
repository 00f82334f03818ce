"""`llvm.intr.assume %c : i1`: LLVM's format `$cond (`[` custom<OpBundles>(...)^ `]`)? `:`
type($cond) attr-dict`, without operand bundles (Triton emits none)."""

from __future__ import annotations

from ...ir import DenseArrayAttr, i1, i32
from ...ir.asm_syntax import custom_syntax

_ELIDED = ("op_bundle_sizes", "op_bundle_tags", "operandSegmentSizes")


@custom_syntax("llvm.intr.assume")
class AssumeSyntax:
    def print(self, op, printer) -> None:
        if len(op.operands) != 1:
            raise ValueError("llvm.intr.assume with operand bundles has no custom syntax here")
        printer.write(f" {printer.value(op.operands[0])} : {op.operands[0].type}")
        printer.print_optional_attr_dict(op.attributes, elided=_ELIDED)

    def parse(self, parser, state) -> None:
        ref = parser.parse_operand_ref()
        if parser.lex.peek("["):
            raise parser.error("operand bundles of llvm.intr.assume are not supported")
        parser.expect(":")
        cond_type = parser.parse_type()
        if cond_type is not i1:
            raise parser.error(f"llvm.intr.assume takes an i1, not {cond_type}")
        state.operands = [parser.resolve_operand(ref, cond_type)]
        state.attributes["op_bundle_sizes"] = DenseArrayAttr(i32, ())
        parser.parse_optional_attr_dict(state.attributes)
