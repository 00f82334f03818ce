"""`memref` syntax that upstream does not declare in a plain format: the ops with
`custom<DynamicIndexList>` (subview, reinterpret_cast, expand_shape), generic_atomic_rmw (a
C++ printer), extract_strided_metadata (its result groups), and the result names upstream's
getAsmResultNames gives (`%alloc`, `%subview`, `%reinterpret_cast`, `%base_buffer`, ...).

    %subview = memref.subview %m[0, %i] [4, 4] [1, 1] : memref<8x8xf32> to memref<4x4xf32,
        strided<[8, 1], offset: ?>>
    %reinterpret_cast = memref.reinterpret_cast %p to offset: [%o], sizes: [4], strides: [1]
        : memref<*xf32> to memref<4xf32, strided<[1], offset: ?>>
    %expand_shape = memref.expand_shape %m [[0, 1]] output_shape [%n, 4] : memref<?xf32> into
        memref<?x4xf32>
"""

from __future__ import annotations

from ...ir import DenseArrayAttr, IndexType, i32
from ...ir.asm_syntax import custom_syntax
from ..syntax.view_like import parse_dynamic_index_list, print_dynamic_index_list

_INDEX = IndexType()
_LISTS = ("static_offsets", "static_sizes", "static_strides")
_SEGMENTS = "operandSegmentSizes"


def _named(name: str):
    def result_names(self, op):
        return [(0, name)]

    return result_names


@custom_syntax("memref.alloc")
class AllocNames:
    result_names = _named("alloc")


@custom_syntax("memref.alloca")
class AllocaNames:
    result_names = _named("alloca")


@custom_syntax("memref.cast")
class CastNames:
    result_names = _named("cast")


@custom_syntax("memref.dim")
class DimNames:
    result_names = _named("dim")


@custom_syntax("memref.extract_aligned_pointer_as_index")
class ExtractAlignedPointerNames:
    result_names = _named("intptr")


@custom_syntax("memref.view")
class ViewNames:
    result_names = _named("view")


@custom_syntax("memref.collapse_shape")
class CollapseShapeNames:
    result_names = _named("collapse_shape")


class _OffsetSizeStrideSyntax:
    """What subview and reinterpret_cast share: the three index lists after the source."""

    def _print_lists(self, op, printer, separators) -> None:
        operands = op.operands
        sizes = op.attributes[_SEGMENTS].values
        start = sizes[0]
        for separator, name, count in zip(separators, _LISTS, sizes[1:]):
            printer.write(separator)
            print_dynamic_index_list(printer, operands[start : start + count], op.attributes[name])
            start += count

    def _parse_lists(self, parser, state, separators) -> list:
        refs = []
        for separator, name in zip(separators, _LISTS):
            for token in separator:
                parser.expect(token)
            found, state.attributes[name] = parse_dynamic_index_list(parser)
            refs.append(found)
        return refs

    def _finish(self, parser, state, source_ref, refs) -> None:
        parser.parse_optional_attr_dict(state.attributes)
        parser.expect(":")
        source_type = parser.parse_type()
        parser.expect("to")
        state.result_types = [parser.parse_type()]
        state.operands = [parser.resolve_operand(source_ref, source_type)]
        state.operands += [parser.resolve_operand(r, _INDEX) for group in refs for r in group]
        sizes = [1, *(len(group) for group in refs)]
        state.attributes[_SEGMENTS] = DenseArrayAttr(i32, sizes)

    def _print_types(self, op, printer) -> None:
        printer.print_optional_attr_dict(op.attributes, elided=(*_LISTS, _SEGMENTS))
        printer.write(f" : {op.operands[0].type} to {op.results[0].type}")


@custom_syntax("memref.subview")
class SubViewSyntax(_OffsetSizeStrideSyntax):
    """`%src[offsets] [sizes] [strides] {attrs} : type to type`."""

    result_names = _named("subview")

    def print(self, op, printer) -> None:
        printer.write(" " + printer.value(op.operands[0]))
        self._print_lists(op, printer, ("", " ", " "))
        self._print_types(op, printer)

    def parse(self, parser, state) -> None:
        source = parser.parse_operand_ref()
        refs = self._parse_lists(parser, state, ((), (), ()))
        self._finish(parser, state, source, refs)


@custom_syntax("memref.reinterpret_cast")
class ReinterpretCastSyntax(_OffsetSizeStrideSyntax):
    """`%src to offset: [o], sizes: [sizes], strides: [strides] {attrs} : type to type`."""

    result_names = _named("reinterpret_cast")

    def print(self, op, printer) -> None:
        printer.write(f" {printer.value(op.operands[0])} to")
        self._print_lists(op, printer, (" offset: ", ", sizes: ", ", strides: "))
        self._print_types(op, printer)

    def parse(self, parser, state) -> None:
        source = parser.parse_operand_ref()
        parser.expect("to")
        separators = (("offset", ":"), (",", "sizes", ":"), (",", "strides", ":"))
        refs = self._parse_lists(parser, state, separators)
        self._finish(parser, state, source, refs)


@custom_syntax("memref.expand_shape")
class ExpandShapeSyntax:
    """`%src [[0, 1], [2]] output_shape [sizes] {attrs} : type into type`."""

    result_names = _named("expand_shape")

    def print(self, op, printer) -> None:
        source, *shape = op.operands
        attributes = op.attributes
        printer.write(f" {printer.value(source)} {attributes['reassociation']} output_shape ")
        print_dynamic_index_list(printer, shape, attributes["static_output_shape"])
        printer.print_optional_attr_dict(
            attributes, elided=("reassociation", "static_output_shape")
        )
        printer.write(f" : {source.type} into {op.results[0].type}")

    def parse(self, parser, state) -> None:
        source = parser.parse_operand_ref()
        state.attributes["reassociation"] = parser.parse_attribute()
        parser.expect("output_shape")
        refs, state.attributes["static_output_shape"] = parse_dynamic_index_list(parser)
        parser.parse_optional_attr_dict(state.attributes)
        parser.expect(":")
        source_type = parser.parse_type()
        parser.expect("into")
        state.result_types = [parser.parse_type()]
        state.operands = [parser.resolve_operand(source, source_type)]
        state.operands += [parser.resolve_operand(r, _INDEX) for r in refs]


@custom_syntax("memref.generic_atomic_rmw")
class GenericAtomicRMWSyntax:
    """`%m[%i] : type { ^bb0(%current: T): ... }` and then the attributes, as the C++
    printer writes them."""

    def print(self, op, printer) -> None:
        memref, *indices = op.operands
        printer.write(f" {printer.value(memref)}[")
        printer.print_operands(indices)
        printer.write(f"] : {memref.type} ")
        printer.print_region(op.regions[0])
        printer.print_optional_attr_dict(op.attributes)

    def parse(self, parser, state) -> None:
        memref = parser.parse_operand_ref()
        parser.expect("[")
        indices = []
        if not parser.accept("]"):
            indices.append(parser.parse_operand_ref())
            while parser.accept(","):
                indices.append(parser.parse_operand_ref())
            parser.expect("]")
        parser.expect(":")
        memref_type = parser.parse_type()
        state.operands = [parser.resolve_operand(memref, memref_type)]
        state.operands += [parser.resolve_operand(r, _INDEX) for r in indices]
        state.result_types = [memref_type.element_type]
        state.regions.append(parser.parse_region())
        parser.parse_optional_attr_dict(state.attributes)


@custom_syntax("memref.extract_strided_metadata")
class ExtractStridedMetadataSyntax:
    """`%m : type -> base, offset, sizes..., strides... {attrs}`; the results are named
    `%base_buffer, %offset, %sizes:N, %strides:N`."""

    def result_names(self, op):
        rank = (len(op.results) - 2) // 2
        names = [(0, "base_buffer"), (1, "offset")]
        return names + ([(2, "sizes"), (2 + rank, "strides")] if rank else [])

    def print(self, op, printer) -> None:
        source = op.operands[0]
        printer.write(f" {printer.value(source)} : {source.type} -> ")
        printer.print_types(r.type for r in op.results)
        printer.print_optional_attr_dict(op.attributes)

    def parse(self, parser, state) -> None:
        source = parser.parse_operand_ref()
        parser.expect(":")
        source_type = parser.parse_type()
        parser.expect("->")
        state.result_types = parser.parse_type_list()
        state.operands = [parser.resolve_operand(source, source_type)]
        parser.parse_optional_attr_dict(state.attributes)
