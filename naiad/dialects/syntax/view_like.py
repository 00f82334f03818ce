"""`custom<DynamicIndexList>`: a bracketed list of constants and SSA values, `[0, %n, 4]`, the
syntax MLIR's view-like ops use for their mixed offsets, sizes and strides (view_like.py holds
the lists themselves)."""

from __future__ import annotations

from ...ir import DYNAMIC, DenseArrayAttr, i64


def print_dynamic_index_list(printer, values, static: DenseArrayAttr) -> None:
    """`[0, %n, 4]`: each static entry, or the next of `values` where it is DYNAMIC."""
    remaining = iter(values)
    items = [printer.value(next(remaining)) if s == DYNAMIC else str(s) for s in static]
    printer.write("[" + ", ".join(items) + "]")


def parse_dynamic_index_list(parser) -> tuple[list, DenseArrayAttr]:
    """The references of the SSA values (unresolved: they are index values) and the static
    array, DYNAMIC where a value stands."""
    parser.expect("[")
    refs, static = [], []
    if not parser.accept("]"):
        while True:
            if parser.lex.peek("%"):
                refs.append(parser.parse_operand_ref())
                static.append(DYNAMIC)
            else:
                static.append(parser.parse_integer("integer or SSA value"))
            if not parser.accept(","):
                break
        parser.expect("]", "to end the index list")
    return refs, DenseArrayAttr(i64, static)
