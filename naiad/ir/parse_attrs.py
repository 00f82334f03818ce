"""Parsing of types, attributes and locations: the half of the MLIR text parser that knows
nothing of operations. `Parser` (parser.py) builds on it; dialect types and attributes call
back into it from their `parse_body(parser)`.
"""

from __future__ import annotations

import re

from . import lexer as lx
from .asm_syntax import body_parser_for
from .attributes import (
    ArrayAttr,
    Attribute,
    BoolAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    DialectAttribute,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
    dialect_attribute_class,
)
from .float_format import FLOAT_SEMANTICS, float_from_bits
from .locations import CallSiteLoc, FileLineColLoc, FusedLoc, Location, NameLoc, UnknownLoc
from .types import (
    DialectType,
    FloatType,
    FunctionType,
    IndexType,
    IntegerType,
    NoneType,
    RankedTensorType,
    Type,
    dialect_type_class,
    f64,
    i1,
    i64,
)

_T = lx._TAIL
# One token for the types that make up nearly all of a module's text; looked up in a cache
# before the full parser runs.
_FAST_TYPE = re.compile(
    r"(tensor<(?:[0-9]+x)*(?:![A-Za-z_]\w*\.\w+<[^<>]*>|\w+)>|![A-Za-z_]\w*\.\w+<[^<>]*>"
    r"|[a-z][A-Za-z0-9_]*(?![\w<(.]))" + _T,
    re.ASCII,
)
_DIMS = re.compile(r"((?:[0-9]+x)*)")
_INT_TYPE = re.compile(r"i([0-9]+)$")
_LOC_REF = re.compile(r"loc\(#([A-Za-z0-9_$.\-]+)\)" + _T)
_FILE_POS = re.compile(r":([0-9]+):([0-9]+)" + _T)


class DeferredLoc(Location):
    """A reference to a location alias not defined yet (`loc(#loc12)` before `#loc12 = ...`);
    the parser replaces it once the whole file is read."""

    __slots__ = ("alias",)
    alias: str

    def __new__(cls, alias: str):
        return cls._intern(alias)

    def _body(self) -> str:
        return f"#{self.alias}"


class AttrParser:
    """Types, attributes and locations, over a Lexer. Aliases (`#name = ...`, `!name = ...`)
    live here; location aliases may be used before they are defined."""

    def __init__(self, text: str, filename: str = "-"):
        self.lex = lx.Lexer(text, filename)
        self.attr_aliases: dict[str, Attribute] = {}
        self.type_aliases: dict[str, Type] = {}
        self.deferred_uses: dict[str, int] = {}  # alias -> position of its first use
        self.deferred_count = 0  # DeferredLocs made so far
        self._deferred_aliases = False  # whether an alias definition holds a DeferredLoc
        self._type_cache: dict[str, Type] = {}

    def error(self, message: str, pos: int | None = None) -> lx.ParseError:
        return self.lex.error(message, pos)

    # -- small tokens, for dialect `parse_body` methods too

    def accept(self, text: str) -> bool:
        return self.lex.accept(text)

    def expect(self, text: str, context: str = "") -> None:
        self.lex.expect(text, context)

    def parse_keyword(self, what: str = "keyword") -> str:
        m = self.lex.take(lx.KEYWORD)
        if m is None:
            raise self.error(f"expected {what}, found {self.lex.describe_next()}")
        return m.group(1)

    def parse_optional_keyword(self, *allowed: str) -> str | None:
        """The next bare identifier if it is one of `allowed` (any, when none given)."""
        m = lx.KEYWORD.match(self.lex.text, self.lex.pos)
        if m is None or (allowed and m.group(1) not in allowed):
            return None
        self.lex.pos = m.end()
        return m.group(1)

    def parse_string(self, what: str = "string") -> str:
        m = self.lex.take(lx.STRING)
        if m is None:
            raise self.error(f"expected {what}, found {self.lex.describe_next()}")
        return lx.unescape(m.group(1))

    def parse_integer(self, what: str = "integer") -> int:
        m = self.lex.take(lx.INTEGER)
        if m is None:
            raise self.error(f"expected {what}, found {self.lex.describe_next()}")
        return int(m.group(1), 0)

    def parse_dimension_list(self) -> tuple[int, ...]:
        """`128x64x` (the dimensions before a tensor's element type)."""
        m = self.lex.take(_DIMS)
        return tuple(int(d) for d in m.group(1).split("x")[:-1]) if m.group(1) else ()

    # -- types

    def parse_type(self) -> Type:
        lex = self.lex
        m = _FAST_TYPE.match(lex.text, lex.pos)
        if m is not None:
            cached = self._type_cache.get(m.group(1))
            if cached is not None:
                lex.pos = m.end()
                return cached
        result = self._parse_type_slow()
        if m is not None and lex.pos == m.end():
            self._type_cache[m.group(1)] = result
        return result

    def _parse_type_slow(self) -> Type:
        lex = self.lex
        start = lex.pos
        char = lex.next_char()
        if char == "(":
            return self._parse_function_type()
        if char == "!":
            return self._parse_dialect_type()
        m = lex.take(lx.BARE_ID)
        if m is None:
            raise self.error(f"expected type, found {lex.describe_next()}")
        name = m.group(1)
        if name == "tensor":
            return self._parse_tensor_type()
        builtin = _builtin_scalar(name)
        if builtin is None:
            raise self.error(f"unknown type '{name}'", start)
        return builtin

    def _parse_tensor_type(self) -> RankedTensorType:
        lex = self.lex
        if not lex.text.startswith("<", lex.pos):
            raise self.error("expected '<' after 'tensor'")
        lex.pos += 1
        shape = self.parse_dimension_list()
        element = self.parse_type()
        encoding = self.parse_attribute() if lex.accept(",") else None
        lex.expect(">", "to close the tensor type")
        try:
            return RankedTensorType(shape, element, encoding)
        except (TypeError, ValueError) as exc:
            raise self.error(str(exc)) from None

    def _parse_function_type(self) -> FunctionType:
        inputs = self.parse_type_list_parens()
        self.lex.expect("->", "in function type")
        results = self.parse_function_results()
        return FunctionType(inputs, results)

    def parse_type_list_parens(self) -> list[Type]:
        """`(t1, t2)`, or `()`."""
        self.lex.expect("(")
        if self.lex.accept(")"):
            return []
        types = self.parse_type_list()
        self.lex.expect(")")
        return types

    def parse_type_list(self) -> list[Type]:
        """`t1, t2, ...` (at least one)."""
        types = [self.parse_type()]
        while self.lex.accept(","):
            types.append(self.parse_type())
        return types

    def parse_function_results(self) -> list[Type]:
        """The right of `->`: one type, or a parenthesized list."""
        if self.lex.peek("("):
            return self.parse_type_list_parens()
        return [self.parse_type()]

    def _parse_dialect_type(self) -> Type:
        start = self.lex.pos
        m = self.lex.take(lx.BANG_ID)
        if m is None:
            raise self.error("expected dialect type after '!'")
        name = m.group(1)
        if name in self.type_aliases:
            return self.type_aliases[name]
        dialect, _, mnemonic = name.partition(".")
        if not mnemonic:  # the opaque form: !dialect<mnemonic body>
            self.lex.expect("<")
            mnemonic = self.parse_keyword("type mnemonic")
            result = self._dialect_body(dialect_type_class(dialect, mnemonic), dialect, mnemonic)
            self.lex.expect(">")
            return result
        return self._dialect_body(dialect_type_class(dialect, mnemonic), dialect, mnemonic, start)

    def _dialect_body(self, cls, dialect: str, mnemonic: str, start: int | None = None):
        if cls is None:
            kind = "type" if start is None or self.lex.text[start] == "!" else "attribute"
            raise self.error(f"unknown dialect {kind} '{dialect}.{mnemonic}'", start)
        return self.parse_dialect_body(cls)

    def parse_dialect_body(self, cls):
        """An instance of dialect type or attribute class `cls` from the text after its
        mnemonic (`<f32, 3>`): a body parser registered for it (asm_syntax.py), else its own
        `parse_body(parser)`, else `from_body(text)` on the bracketed text; a class without
        parameters needs no body."""
        start = self.lex.pos
        try:
            parse = body_parser_for(cls.dialect, cls.mnemonic)
            if parse is not None:
                return parse(self)
            if _overrides(cls, "parse_body"):
                return cls.parse_body(self)
            if self.lex.peek("<") and hasattr(cls, "from_body"):
                return cls.from_body(self.take_balanced_body())
            if not self.lex.peek("<") and not cls._params:
                return cls()
        except lx.ParseError:
            raise
        except (TypeError, ValueError, KeyError) as exc:
            raise self.error(f"invalid '{cls.dialect}.{cls.mnemonic}': {exc}", start) from None
        raise self.error(f"no parser for '{cls.dialect}.{cls.mnemonic}'", start)

    def take_balanced_body(self) -> str:
        """The text from the `<` at the cursor to its matching `>` (brackets and strings
        nested, `->` skipped), consumed."""
        text = self.lex.text
        start = pos = self.lex.pos
        depth = 0
        closing = {">": "<", ")": "(", "]": "[", "}": "{"}
        while pos < len(text):
            char = text[pos]
            if char == '"':
                m = lx.STRING.match(text, pos)
                if m is None:
                    break
                pos = m.end()
                continue
            if char == "-" and text.startswith("->", pos):
                pos += 2
                continue
            if char in "<([{":
                depth += 1
            elif char in closing:
                depth -= 1
                if depth == 0:
                    self.lex.pos = pos + 1
                    self.lex.skip_space()
                    return text[start : pos + 1]
            pos += 1
        raise self.error("unbalanced '<' in dialect body", start)

    # -- attributes

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
            return FloatAttr(float_from_bits(type.kind, int(text, 16)), type)
        if type is None:
            type = i64
        if not isinstance(type, IntegerType | IndexType):
            raise self.error(f"integer value not valid for type {type}", start)
        return IntegerAttr(int(text, 0), type)

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
        return self._dialect_body(dialect_attribute_class(dialect, mnemonic), dialect, mnemonic, start)

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

    def parse_trailing_location(self) -> Location | None:
        """An optional `loc(...)` after an op or argument."""
        lex = self.lex
        if not lex.text.startswith("loc(", lex.pos):
            return None
        m = lex.take(_LOC_REF)
        if m is not None:
            return self._location_alias(m.group(1), m.start() + 4)
        lex.pos += 3
        return self.parse_location_body()

    def parse_location_body(self) -> Location:
        """`(inner)`, after the keyword `loc`."""
        self.lex.expect("(", "after 'loc'")
        loc = self._parse_location_inner()
        self.lex.expect(")", "to close the location")
        return loc

    def _location_alias(self, name: str, pos: int) -> Location:
        loc = self.attr_aliases.get(name)
        if loc is None:
            self.deferred_uses.setdefault(name, pos)
            self.deferred_count += 1
            return DeferredLoc(name)
        if not isinstance(loc, Location):
            raise self.error(f"expected location, but '#{name}' is {loc}", pos)
        return loc

    def _parse_location_inner(self) -> Location:
        lex = self.lex
        start = lex.pos
        char = lex.next_char()
        if char == "#":
            m = lex.take(lx.HASH_ID)
            return self._location_alias(m.group(1), start)
        if char == '"':
            name = self.parse_string()
            m = lex.take(_FILE_POS)
            if m is not None:
                return FileLineColLoc(name, int(m.group(1)), int(m.group(2)))
            if lex.accept("("):
                child = self._parse_location_inner()
                lex.expect(")", "to close the name location")
                return NameLoc(name, child)
            return NameLoc(name)
        word = self.parse_keyword("location")
        if word == "unknown":
            return UnknownLoc()
        if word == "callsite":
            lex.expect("(")
            callee = self._parse_location_inner()
            lex.expect("at", "in callsite location")
            caller = self._parse_location_inner()
            lex.expect(")")
            return CallSiteLoc(callee, caller)
        if word == "fused":
            metadata = None
            if lex.accept("<"):
                metadata = self.parse_attribute()
                lex.expect(">")
            lex.expect("[")
            locations = [self._parse_location_inner()]
            while lex.accept(","):
                locations.append(self._parse_location_inner())
            lex.expect("]")
            return FusedLoc(locations, metadata)
        raise self.error(f"expected location instance, found '{word}'", start)

    def resolve_location(self, loc: Location) -> Location:
        """`loc` with every DeferredLoc replaced by its alias's definition."""
        if isinstance(loc, DeferredLoc):
            target = self.attr_aliases.get(loc.alias)
            if target is None:
                raise self.error(
                    f"undefined location alias '#{loc.alias}'", self.deferred_uses[loc.alias]
                )
            if not isinstance(target, Location):
                raise self.error(
                    f"expected location, but '#{loc.alias}' is {target}",
                    self.deferred_uses[loc.alias],
                )
            return self.resolve_location(target) if self._deferred_aliases else target
        if isinstance(loc, NameLoc):
            return NameLoc(loc.name, self.resolve_location(loc.child))
        if isinstance(loc, CallSiteLoc):
            return CallSiteLoc(self.resolve_location(loc.callee), self.resolve_location(loc.caller))
        if isinstance(loc, FusedLoc):
            return FusedLoc([self.resolve_location(x) for x in loc.locations], loc.metadata)
        return loc


def _overrides(cls, method: str) -> bool:
    """Whether `cls` defines classmethod `method` rather than inheriting the base's stub."""
    base = DialectType if issubclass(cls, DialectType) else DialectAttribute
    return getattr(cls, method).__func__ is not getattr(base, method).__func__


def _builtin_scalar(name: str) -> Type | None:
    m = _INT_TYPE.match(name)
    if m is not None:
        return IntegerType(int(m.group(1))) if m.group(1)[0] != "0" else None
    if name in FLOAT_SEMANTICS:
        return FloatType(name)
    if name == "index":
        return IndexType()
    if name == "none":
        return NoneType()
    return None


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
            return float_from_bits(element.kind, int(text, 16))
        return float(text)
    try:
        return int(text, 0)
    except ValueError:
        raise parser.error(f"expected integer element, found '{text}'", pos) from None


def _dense_from_hex(parser: AttrParser, raw: str, type, pos: int) -> DenseElementsAttr:
    """`dense<"0x...">`: the raw little-endian data of every element (or of one, a splat)."""
    if not isinstance(type, RankedTensorType) or not raw.startswith("0x"):
        raise parser.error("expected a hex string and a tensor type", pos)
    data = bytes.fromhex(raw[2:])
    element = type.element_type
    if isinstance(element, FloatType):
        size = FLOAT_SEMANTICS[element.kind].width // 8
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
