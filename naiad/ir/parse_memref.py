"""Parsing of memref types and strided layouts (memref_types.py), called by the type and
attribute parsers once they have read the keyword `memref` or `strided`:

    memref<4x?xf32>   memref<4x8xf32, strided<[?, 1], offset: ?>, 1>   memref<*xf32, 1>
    strided<[8, 1]>   strided<[?, 1], offset: ?>   strided<[], offset: 5>

As MLIR reads a memref: after the element type, an attribute that is a layout (`strided<...>`,
an affine map, or an alias of one) comes first, and any other attribute is the memory space.
"""

from __future__ import annotations

import re

from .affine import AffineMapAttr
from .memref_types import MemRefType, StridedLayoutAttr, UnrankedMemRefType
from .types import DYNAMIC

# `*x` runs on into the element type (`*xf32`): one token, as the dimensions of a shape.
_UNRANKED = re.compile(r"\*x")


def parse_memref_body(parser) -> MemRefType | UnrankedMemRefType:
    """The memref type from the `<` after `memref` to its `>`."""
    lex = parser.lex
    lex.expect("<", "after 'memref'")
    start = lex.pos
    if lex.take(_UNRANKED) is not None:
        element = parser.parse_type()
        space = parser.parse_attribute() if lex.accept(",") else None
        lex.expect(">", "to close the memref type")
        return _build(parser, start, UnrankedMemRefType, element, space)
    shape = parser.parse_dimension_list()
    element = parser.parse_type()
    layout = space = None
    if lex.accept(","):
        attr = parser.parse_attribute()
        if isinstance(attr, StridedLayoutAttr | AffineMapAttr):
            layout = attr
            if lex.accept(","):
                space = parser.parse_attribute()
        else:
            space = attr
    lex.expect(">", "to close the memref type")
    return _build(parser, start, MemRefType, shape, element, layout, space)


def _build(parser, start: int, cls, *params):
    try:
        return cls(*params)
    except (TypeError, ValueError) as exc:
        raise parser.error(str(exc), start) from None


def parse_strided_body(parser) -> StridedLayoutAttr:
    """The strided layout from the `<` after `strided` to its `>`."""
    lex = parser.lex
    lex.expect("<", "after 'strided'")
    lex.expect("[", "to start the strides")
    strides = []
    if not lex.accept("]"):
        strides.append(_static_or_dynamic(parser, "stride"))
        while lex.accept(","):
            strides.append(_static_or_dynamic(parser, "stride"))
        lex.expect("]", "to end the strides")
    offset = 0
    if lex.accept(","):
        lex.expect("offset", "after the strides")
        lex.expect(":", "after 'offset'")
        offset = _static_or_dynamic(parser, "offset")
    lex.expect(">", "to close the strided layout")
    return StridedLayoutAttr(strides, offset)


def _static_or_dynamic(parser, what: str) -> int:
    """An integer, or `?` (DYNAMIC)."""
    if parser.lex.accept("?"):
        return DYNAMIC
    return parser.parse_integer(what)
