"""`tensor` syntax: the ops whose format upstream spells with `custom<DynamicIndexList>`
(extract_slice, insert_slice, expand_shape: the memref view syntax, memref/syntax.py, at
tensor types) and the result names of TensorOps.cpp's getAsmResultNames.

    %extracted_slice = tensor.extract_slice %t[0, %o] [4, %n] [1, 1] : tensor<8x16xf32> to
        tensor<4x?xf32>
    %inserted_slice = tensor.insert_slice %s into %t[0, %o] [4, %n] [1, 1] : tensor<4x?xf32>
        into tensor<8x16xf32>
    %expanded = tensor.expand_shape %c [[0, 1]] output_shape [4, 8] : tensor<32xf32> into
        tensor<4x8xf32>
"""

from __future__ import annotations

from ...ir import DenseArrayAttr, IndexType, i32
from ...ir.asm_syntax import custom_syntax
from ..memref.syntax import ExpandShapeSyntax, SubViewSyntax
from ..syntax.view_like import parse_dynamic_index_list, print_dynamic_index_list

_INDEX = IndexType()
_LISTS = ("static_offsets", "static_sizes", "static_strides")
_SEGMENTS = "operandSegmentSizes"


def _named(name: str):
    def result_names(self, op):
        return [(0, name)]

    return result_names


@custom_syntax("tensor.extract_slice")
class ExtractSliceSyntax(SubViewSyntax):
    """`%src[offsets] [sizes] [strides] {attrs} : type to type`, as memref.subview."""

    result_names = _named("extracted_slice")


@custom_syntax("tensor.expand_shape")
class TensorExpandShapeSyntax(ExpandShapeSyntax):
    """`%src [[0, 1], [2]] output_shape [sizes] {attrs} : type into type`."""

    result_names = _named("expanded")


@custom_syntax("tensor.insert_slice")
class InsertSliceSyntax:
    """`%src into %dest[offsets] [sizes] [strides] {attrs} : type into type`."""

    result_names = _named("inserted_slice")

    def print(self, op, printer) -> None:
        source, dest = op.operands[:2]
        printer.write(f" {printer.value(source)} into {printer.value(dest)}")
        sizes = op.attributes[_SEGMENTS].values
        start = 2
        for separator, name, count in zip(("", " ", " "), _LISTS, sizes[2:]):
            printer.write(separator)
            print_dynamic_index_list(
                printer, op.operands[start : start + count], op.attributes[name]
            )
            start += count
        printer.print_optional_attr_dict(op.attributes, elided=(*_LISTS, _SEGMENTS))
        printer.write(f" : {source.type} into {dest.type}")

    def parse(self, parser, state) -> None:
        source = parser.parse_operand_ref()
        parser.expect("into")
        dest = parser.parse_operand_ref()
        groups = []
        for name in _LISTS:
            refs, state.attributes[name] = parse_dynamic_index_list(parser)
            groups.append(refs)
        parser.parse_optional_attr_dict(state.attributes)
        parser.expect(":")
        source_type = parser.parse_type()
        parser.expect("into")
        dest_type = parser.parse_type()
        state.result_types = [dest_type]
        state.operands = [
            parser.resolve_operand(source, source_type),
            parser.resolve_operand(dest, dest_type),
        ]
        state.operands += [parser.resolve_operand(r, _INDEX) for group in groups for r in group]
        sizes = [1, 1, *(len(group) for group in groups)]
        state.attributes[_SEGMENTS] = DenseArrayAttr(i32, sizes)


def _names_only(op_name: str, name: str) -> None:
    """Register the result name of an op whose syntax is its assembly format."""

    class Names:
        result_names = _named(name)

    custom_syntax(op_name)(Names)


for _op_name, _name in (
    ("tensor.cast", "cast"),
    ("tensor.collapse_shape", "collapsed"),
    ("tensor.concat", "concat"),
    ("tensor.dim", "dim"),
    ("tensor.extract", "extracted"),
    ("tensor.from_elements", "from_elements"),
    ("tensor.generate", "generated"),
    ("tensor.insert", "inserted"),
    ("tensor.reshape", "reshape"),
    ("tensor.splat", "splat"),
):
    _names_only(_op_name, _name)
