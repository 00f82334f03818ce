"""`linalg` syntax, as LinalgOps.cpp prints and parses it.

    linalg.generic {indexing_maps = [...], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>)
        outs(%b : tensor<8xf32>) attrs =  {extra} {
    ^bb0(%in: f32, %out: f32): ...
    } -> tensor<8xf32>
    linalg.matmul {extra} ins(%a, %b : ...) outs(%c : ...) -> tensor<16x32xf32>
    linalg.map ins(...) outs(...)
      (%in: f32, %in_0: f32) { ... }
    linalg.reduce ins(...) outs(...) dimensions = [1] \n  (%in: f32, %init: f32) { ... }
    linalg.transpose ins(...) outs(...) permutation = [1, 0] \n
    linalg.broadcast ins(...) outs(...) dimensions = [0] \n

Upstream's quirks are kept: inside `linalg.generic`'s dictionary the iterator types are
strings; extra attributes follow `attrs = ` (and the dictionary's own leading space); a
`dimensions = [...]` or `permutation = [...]` list ends with a space. Upstream prints
`linalg.map` and `linalg.reduce` in a short form (`linalg.reduce { arith.addf } ins(...)`)
when the body is one op on the block arguments in order; that form is read here, but the long
form, which upstream reads as well, is always printed (xDSL reads only the long one).
"""

from __future__ import annotations

from ...ir import (
    ArrayAttr,
    Block,
    DenseArrayAttr,
    RankedTensorType,
    Region,
    StringAttr,
    create_operation,
    i32,
    i64,
)
from ...ir.asm_syntax import body_parser, custom_syntax
from ...ir.syntax import quote_string
from .base import IteratorTypeAttr
from .generic import YieldOp

_GENERIC_TRAITS = ("doc", "indexing_maps", "iterator_types", "library_call")
_SEGMENTS = "operandSegmentSizes"


@body_parser("linalg", "iterator_type")
def _parse_iterator_type(parser) -> IteratorTypeAttr:
    parser.expect("<")
    kind = parser.parse_keyword("iterator type")
    parser.expect(">", "to close the iterator type")
    return IteratorTypeAttr(kind)


# -- ins(...) outs(...), shared by every structured op


def print_ins_outs(printer, inputs, outputs) -> None:
    """printCommonStructuredOpParts: ` ins(%a, %b : t1, t2) outs(%c : t3)`, each if any."""
    for keyword, values in (("ins", inputs), ("outs", outputs)):
        if values:
            types = ", ".join(str(v.type) for v in values)
            printer.write(f" {keyword}({', '.join(map(printer.value, values))} : {types})")


def parse_ins_outs(parser, state) -> tuple[int, list]:
    """parseCommonStructuredOpParts: an optional attribute dictionary, then `ins(...)` and
    `outs(...)` into `state.operands`; returns the number of inputs and the output types."""
    parser.parse_optional_attr_dict(state.attributes)
    groups = []
    for keyword in ("ins", "outs"):
        refs, types = [], []
        if parser.parse_optional_keyword(keyword):
            pos = parser.lex.pos
            parser.expect("(")
            refs.append(parser.parse_operand_ref())
            while parser.accept(","):
                refs.append(parser.parse_operand_ref())
            parser.expect(":")
            types = parser.parse_type_list()
            parser.expect(")")
            if len(refs) != len(types):
                raise parser.error(f"{len(refs)} operands but {len(types)} types", pos)
        state.operands += [parser.resolve_operand(r, t) for r, t in zip(refs, types)]
        groups.append(types)
    return len(groups[0]), groups[1]


def _tensor_types(types) -> list:
    return [t for t in types if isinstance(t, RankedTensorType)]


def _print_arrow_types(printer, types) -> None:
    """printOptionalArrowTypeList: ` -> t` or ` -> (t1, t2)`, nothing when empty."""
    if types:
        text = str(types[0]) if len(types) == 1 else f"({', '.join(map(str, types))})"
        printer.write(f" -> {text}")


def _print_body(printer, region) -> None:
    """The long form's body: a new line one step in, `(%in: f32, ...) {...}`."""
    printer.indent += 2
    printer.write("\n" + " " * printer.indent + "(")
    arguments = region.blocks[0].arguments if region.blocks else ()
    for i, arg in enumerate(arguments):
        if i:
            printer.write(", ")
        printer.print_region_argument(arg)
    printer.write(") ")
    printer.print_region(region, print_entry_args=False)
    printer.indent -= 2


def _parse_payload_name(parser) -> tuple[str, dict] | None:
    """The short form's `{ arith.addf {attrs} }`, or None."""
    if not parser.accept("{"):
        return None
    name = parser.parse_keyword("operation name")
    attributes: dict = {}
    parser.parse_optional_attr_dict(attributes)
    parser.expect("}", "to end the payload operation")
    return name, attributes


def _parse_body(parser, state, payload, operands, init_first: bool) -> None:
    """The long form's `(%args) {region}`, or the body the short form's payload op implies:
    that op on the block arguments (the init's first, for a reduction), yielded."""
    if payload is None:
        parser.expect("(", "to begin the body's arguments")
        arguments = []
        if not parser.accept(")"):
            arguments.append(parser.parse_argument(allow_attributes=True))
            while parser.accept(","):
                arguments.append(parser.parse_argument(allow_attributes=True))
            parser.expect(")")
        region = parser.parse_region(arguments)
        if not region.blocks:
            region.add_block()
        state.regions.append(region)
        return
    block = Block([v.type.element_type for v in operands])
    args = list(block.arguments)
    if init_first:
        args = [args[-1], *args[:-1]]
    name, attributes = payload
    element = state.operands[-1].type.element_type
    op = create_operation(name, args, [element], attributes, location=state.location)
    block.append(op)
    block.append(YieldOp(op.results, location=state.location))
    state.regions.append(Region([block]))


def _parse_int_list(parser, keyword: str) -> DenseArrayAttr:
    """`keyword = [1, 2]` as an i64 dense array."""
    parser.expect(keyword)
    parser.expect("=")
    parser.expect("[")
    values = []
    if not parser.accept("]"):
        values.append(parser.parse_integer())
        while parser.accept(","):
            values.append(parser.parse_integer())
        parser.expect("]")
    return DenseArrayAttr(i64, values)


def _print_int_list(printer, keyword: str, attr) -> None:
    """printDenseI64ArrayAttr: ` keyword = [1, 2] `, trailing space included."""
    printer.write(f" {keyword} = [{', '.join(str(v) for v in attr.values)}] ")


def _named(name: str):
    def result_names(self, op):
        return [(0, name)] if op.results else None

    return result_names


def _argument_names(input_name: str, init_name: str | None):
    """getAsmBlockArgumentNames: the body's arguments named after their operands' roles."""

    def argument_names(self, op, region):
        block = region.entry_block
        if block is None:
            return None
        inputs = len(op.operands) - len(op.inits)
        names = [input_name] * inputs + ([init_name] * len(op.inits) if init_name else [])
        return list(zip(block.arguments, names))

    return argument_names


# -- the ops


@custom_syntax("linalg.generic")
class GenericSyntax:
    argument_names = _argument_names("in", "out")

    def print(self, op, printer) -> None:
        attributes = op.attributes
        entries = []
        for name in _GENERIC_TRAITS:
            value = attributes.get(name)
            if value is None:
                continue
            if name == "iterator_types":
                text = "[" + ", ".join(quote_string(k.value) for k in value) + "]"
            else:
                text = str(value)
            entries.append(f"{name} = {text}")
        printer.write(" {" + ", ".join(entries) + "}")
        count = len(op.operands) - len(op.outputs)
        print_ins_outs(printer, op.operands[:count], op.outputs)
        extra = [k for k in attributes if k not in _GENERIC_TRAITS and k != _SEGMENTS]
        if extra:
            printer.write(" attrs = ")
            printer.print_optional_attr_dict(attributes, elided=(*_GENERIC_TRAITS, _SEGMENTS))
        if op.regions[0].blocks:
            printer.write(" ")
            printer.print_region(op.regions[0])
        _print_arrow_types(printer, [r.type for r in op.results])

    def parse(self, parser, state) -> None:
        pos = parser.lex.pos
        attributes = parser.parse_attr_dict()
        kinds = attributes.get("iterator_types")
        if not isinstance(kinds, ArrayAttr):
            raise parser.error("expected iterator_types array attribute", pos)
        converted = []
        for kind in kinds:
            value = kind.value if isinstance(kind, StringAttr | IteratorTypeAttr) else None
            if value not in IteratorTypeAttr.kinds:
                raise parser.error(f"unexpected iterator_type ({kind})", pos)
            converted.append(IteratorTypeAttr(value))
        attributes["iterator_types"] = ArrayAttr(converted)
        state.attributes.update(attributes)
        num_inputs, output_types = parse_ins_outs(parser, state)
        if parser.parse_optional_keyword("attrs"):
            parser.expect("=")
            parser.parse_optional_attr_dict(state.attributes)
        state.regions.append(parser.parse_region())
        if parser.accept("->"):
            state.result_types = parser.parse_function_results()
        state.attributes[_SEGMENTS] = DenseArrayAttr(i32, [num_inputs, len(output_types)])


@custom_syntax("linalg.fill", "linalg.matmul", "linalg.batch_matmul", "linalg.copy")
class NamedSyntax:
    """printNamedStructuredOp: attributes first, then `ins`, `outs` and the result types."""

    def print(self, op, printer) -> None:
        printer.print_optional_attr_dict(op.attributes, elided=(_SEGMENTS,))
        count = len(op.operands) - len(op.outputs)
        print_ins_outs(printer, op.operands[:count], op.outputs)
        _print_arrow_types(printer, [r.type for r in op.results])

    def parse(self, parser, state) -> None:
        num_inputs, output_types = parse_ins_outs(parser, state)
        if parser.accept("->"):
            state.result_types = parser.parse_function_results()
        state.attributes[_SEGMENTS] = DenseArrayAttr(i32, [num_inputs, len(output_types)])


@custom_syntax("linalg.map")
class MapSyntax:
    result_names = _named("mapped")
    argument_names = _argument_names("in", None)

    def print(self, op, printer) -> None:
        print_ins_outs(printer, op.inputs, op.inits)
        printer.print_optional_attr_dict(op.attributes)
        _print_body(printer, op.regions[0])

    def parse(self, parser, state) -> None:
        payload = _parse_payload_name(parser)
        _, output_types = parse_ins_outs(parser, state)
        state.result_types = _tensor_types(output_types)
        parser.parse_optional_attr_dict(state.attributes)
        _parse_body(parser, state, payload, state.operands[:-1], init_first=False)


@custom_syntax("linalg.reduce")
class ReduceSyntax:
    result_names = _named("reduced")
    argument_names = _argument_names("in", "init")

    def print(self, op, printer) -> None:
        print_ins_outs(printer, op.inputs, op.inits)
        _print_int_list(printer, "dimensions", op.dimensions)
        printer.print_optional_attr_dict(op.attributes, elided=("dimensions",))
        _print_body(printer, op.regions[0])

    def parse(self, parser, state) -> None:
        payload = _parse_payload_name(parser)
        _, output_types = parse_ins_outs(parser, state)
        state.result_types = _tensor_types(output_types)
        state.attributes["dimensions"] = _parse_int_list(parser, "dimensions")
        parser.parse_optional_attr_dict(state.attributes)
        _parse_body(parser, state, payload, state.operands, init_first=True)


class _CopyLikeSyntax:
    """`linalg.transpose` / `linalg.broadcast`: ins, outs, one integer list; no body."""

    keyword = ""

    def print(self, op, printer) -> None:
        print_ins_outs(printer, [op.input], op.inits)
        _print_int_list(printer, self.keyword, op.attributes[self.keyword])
        printer.print_optional_attr_dict(op.attributes, elided=(self.keyword,))

    def parse(self, parser, state) -> None:
        _, output_types = parse_ins_outs(parser, state)
        state.result_types = _tensor_types(output_types)
        state.attributes[self.keyword] = _parse_int_list(parser, self.keyword)
        parser.parse_optional_attr_dict(state.attributes)


@custom_syntax("linalg.transpose")
class TransposeSyntax(_CopyLikeSyntax):
    keyword = "permutation"
    result_names = _named("transposed")


@custom_syntax("linalg.broadcast")
class BroadcastSyntax(_CopyLikeSyntax):
    keyword = "dimensions"
    result_names = _named("broadcasted")
