"""Parsing of attributes (dense constants included), over TypeParser and LocationParser:
together the half of the MLIR text parser that knows nothing of operations. `Parser`
(parser.py) builds on it; dialect types and attributes call back into it.
"""

from __future__ import annotations

from . import lexer as lx
from .affine import AffineMapAttr
from .attributes import (
    ArrayAttr,
    Attribute,
    BoolAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
    dialect_attribute_class,
)
from .float_format import FLOAT_FORMATS, float_from_bits
from .parse_affine import parse_affine_map
from .parse_locations import DeferredLoc, LocationParser
from .parse_memref import parse_strided_body
from .parse_types import TypeParser
from .types import FloatType, IndexType, IntegerType, RankedTensorType, Type, f64, i1, i64

__all__ = ["AttrParser", "DeferredLoc"]


class AttrParser(TypeParser, LocationParser):
    """Types, attributes and locations over a Lexer."""

    def __init__(self, text: str, filename: str = "-"):
        TypeParser.__init__(self, text, filename)
        self._init_locations()

    def parse_attribute(self, type: Type | None = None) -> Attribute:
        """Any attribute; `type` is the type an untyped literal takes (else i64 / f64)."""
        lex = self.lex
        char = lex.next_char()
        if char == '"':
            return StringAttr(self.parse_string())
        if char.isdigit() or char == "-":
            return self._parse_number_attr(type)
        if char == "[":
            return self._parse_array_attr()
        if char == "{":
            return DictionaryAttr(self.parse_attr_dict())
        if char == "@":
            return self._parse_symbol_ref()
        if char == "#":
            return self._parse_hash_attr()
        if char in "(!":
            return TypeAttr(self.parse_type())
        start = lex.pos
        m = lex.take(lx.BARE_ID)
        if m is None:
            raise self.error(f"expected attribute value, found {lex.describe_next()}")
        word = m.group(1)
        if word in ("true", "false"):
            return BoolAttr(word == "true")
        if word == "unit":
            return UnitAttr()
        if word == "dense":
            return self._parse_dense()
        if word == "array":
            return self._parse_dense_array()
        if word == "loc":
            return self.parse_location_body()
        if word == "strided":
            return parse_strided_body(self)
        if word == "affine_map":
            self.lex.expect("<")
            affine_map = parse_affine_map(self)
            self.lex.expect(">", "to close the affine map")
            return AffineMapAttr(affine_map)
        lex.pos = start
        return TypeAttr(self.parse_type())

    def _parse_number_attr(self, type: Type | None) -> Attribute:
        start = self.lex.pos
        m = self.lex.take(lx.NUMBER)
        if m is None:
            raise self.error(f"expected number, found {self.lex.describe_next()}")
        text = m.group(1)
        if self.lex.accept(":"):
            type = self.parse_type()
        if m.group(2) is not None:  # a decimal point: a float literal
            if type is None:
                type = f64
            if not isinstance(type, FloatType):
                raise self.error(f"floating point value not valid for type {type}", start)
            return FloatAttr(float(text), type)
        if isinstance(type, FloatType):
            if not text.startswith("0x"):
                return FloatAttr(float(int(text)), type)
            return FloatAttr(float_from_bits(type.kind, lx.integer_value(text)), type)
        if type is None:
            type = i64
        if not isinstance(type, IntegerType | IndexType):
            raise self.error(f"integer value not valid for type {type}", start)
        return IntegerAttr(lx.integer_value(text), type)

    def _parse_array_attr(self) -> ArrayAttr:
        self.lex.expect("[")
        elements = []
        if not self.lex.accept("]"):
            elements.append(self.parse_attribute())
            while self.lex.accept(","):
                elements.append(self.parse_attribute())
            self.lex.expect("]", "to close the array")
        return ArrayAttr(elements)

    def parse_attr_dict(self) -> dict[str, Attribute]:
        """`{name = value, flag, "quoted" = value}` as a dict (in the order written)."""
        lex = self.lex
        lex.expect("{")
        entries: dict[str, Attribute] = {}
        if lex.accept("}"):
            return entries
        while True:
            start = lex.pos
            if lex.next_char() == '"':
                name = self.parse_string()
            else:
                name = self.parse_keyword("attribute name")
            if name in entries:
                raise self.error(f"duplicate key '{name}' in dictionary attribute", start)
            entries[name] = self.parse_attribute() if lex.accept("=") else UnitAttr()
            if not lex.accept(","):
                break
        lex.expect("}", "to close the attribute dictionary")
        return entries

    def _parse_symbol_ref(self) -> SymbolRefAttr:
        names = [self.parse_symbol_name()]
        while self.lex.accept("::"):
            names.append(self.parse_symbol_name())
        return SymbolRefAttr(names[0], names[1:])

    def parse_symbol_name(self) -> str:
        """`@name` or `@"quoted name"`, without the `@`."""
        m = self.lex.take(lx.SYMBOL)
        if m is None:
            raise self.error(f"expected symbol name, found {self.lex.describe_next()}")
        return m.group(1) if m.group(1) is not None else lx.unescape(m.group(2))

    def _parse_hash_attr(self) -> Attribute:
        start = self.lex.pos
        m = self.lex.take(lx.HASH_ID)
        if m is None:
            raise self.error("expected attribute after '#'")
        name = m.group(1)
        if name in self.attr_aliases:
            return self.attr_aliases[name]
        dialect, _, mnemonic = name.partition(".")
        if not mnemonic:
            if not self.lex.peek("<"):
                raise self.error(f"undefined symbol alias id '{name}'", start)
            self.lex.expect("<")
            mnemonic = self.parse_keyword("attribute mnemonic")
            cls = dialect_attribute_class(dialect, mnemonic)
            result = self._dialect_body(cls, dialect, mnemonic, start)
            self.lex.expect(">")
            return result
        return self._dialect_body(
            dialect_attribute_class(dialect, mnemonic), dialect, mnemonic, start
        )

    def _parse_dense_array(self) -> DenseArrayAttr:
        self.lex.expect("<")
        element = self.parse_type()
        values = []
        if self.lex.accept(":"):
            values.append(self._parse_scalar(element))
            while self.lex.accept(","):
                values.append(self._parse_scalar(element))
        self.lex.expect(">", "to close the dense array")
        return DenseArrayAttr(element, values)

    def _parse_dense(self) -> DenseElementsAttr:
        lex = self.lex
        lex.expect("<")
        start = lex.pos
        if lex.next_char() == '"':
            raw = self.parse_string()
            lex.expect(">")
            lex.expect(":")
            type = self.parse_type()
            return _dense_from_hex(self, raw, type, start)
        literal = self._parse_dense_literal() if not lex.peek(">") else []
        lex.expect(">", "to close the dense literal")
        lex.expect(":", "after the dense literal")
        type = self.parse_type()
        if not isinstance(type, RankedTensorType):
            raise self.error(f"dense literal needs a tensor type, got {type}", start)
        element = type.element_type
        flat: list = []
        _flatten(literal, flat)
        try:
            return DenseElementsAttr(type, [_convert(self, v, element, start) for v in flat])
        except (TypeError, ValueError) as exc:
            raise self.error(str(exc), start) from None

    def _parse_dense_literal(self):
        """A scalar token (kept as text) or a nested list of them."""
        if self.lex.accept("["):
            items = []
            if not self.lex.accept("]"):
                items.append(self._parse_dense_literal())
                while self.lex.accept(","):
                    items.append(self._parse_dense_literal())
                self.lex.expect("]")
            return items
        m = self.lex.take(lx.NUMBER) or self.lex.take(lx.BARE_ID)
        if m is None:
            raise self.error(f"expected dense element, found {self.lex.describe_next()}")
        return (m.group(1),)

    def _parse_scalar(self, element: Type):
        start = self.lex.pos
        m = self.lex.take(lx.NUMBER) or self.lex.take(lx.BARE_ID)
        if m is None:
            raise self.error(f"expected value, found {self.lex.describe_next()}")
        return _convert(self, (m.group(1),), element, start)

    # -- locations


def _flatten(literal, out: list) -> None:
    if isinstance(literal, tuple):
        out.append(literal)
    else:
        for item in literal:
            _flatten(item, out)


def _convert(parser: AttrParser, token: tuple, element: Type, pos: int):
    """A dense element from its token text, for an element of type `element`."""
    text = token[0]
    if text in ("true", "false"):
        if element is not i1:
            raise parser.error(f"boolean value not valid for element type {element}", pos)
        return text == "true"
    if isinstance(element, FloatType):
        if text.lstrip("-").startswith("0x"):
            return float_from_bits(element.kind, lx.integer_value(text))
        return float(text)
    try:
        return lx.integer_value(text)
    except ValueError:
        raise parser.error(f"expected integer element, found '{text}'", pos) from None


def _dense_from_hex(parser: AttrParser, raw: str, type, pos: int) -> DenseElementsAttr:
    """`dense<"0x...">`: the raw little-endian data of every element (or of one, a splat)."""
    if not isinstance(type, RankedTensorType) or not raw.startswith("0x"):
        raise parser.error("expected a hex string and a tensor type", pos)
    data = bytes.fromhex(raw[2:])
    element = type.element_type
    if isinstance(element, FloatType):
        size = FLOAT_FORMATS[element.kind].width // 8
    elif isinstance(element, IntegerType):
        size = (element.width + 7) // 8
    else:
        size = 8
    if not data or len(data) % size:
        raise parser.error("hex data does not hold whole elements", pos)
    chunks = [data[i : i + size] for i in range(0, len(data), size)]
    if isinstance(element, FloatType):
        values = [float_from_bits(element.kind, int.from_bytes(c, "little")) for c in chunks]
    else:
        values = [int.from_bytes(c, "little", signed=True) for c in chunks]
    try:
        return DenseElementsAttr(type, values)
    except ValueError as exc:
        raise parser.error(str(exc), pos) from None
