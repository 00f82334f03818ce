"""Parsing of types, and the small tokens dialect `parse_body` methods read: the first layer of
the MLIR text parser (then attributes, parse_attrs.py; locations, parse_locations.py; ops,
parser.py).
"""

from __future__ import annotations

import re

from . import lexer as lx
from .asm_syntax import body_parser_for
from .attributes import Attribute, DialectAttribute
from .float_format import FLOAT_FORMATS
from .parse_memref import parse_memref_body
from .types import (
    DYNAMIC,
    DialectType,
    FloatType,
    FunctionType,
    IndexType,
    IntegerType,
    NoneType,
    RankedTensorType,
    Type,
    dialect_type_class,
)

_T = lx._TAIL
# One token for the types that make up nearly all of a module's text; looked up in a cache
# before the full parser runs.
_FAST_TYPE = re.compile(
    r"((?:tensor|memref)<(?:(?:[0-9]+|\?)x)*(?:![A-Za-z_]\w*\.\w+<[^<>]*>|\w+)>"
    r"|![A-Za-z_]\w*\.\w+<[^<>]*>"
    r"|[a-z][A-Za-z0-9_]*(?![\w<(.]))" + _T,
    re.ASCII,
)
_DIMS = re.compile(r"((?:(?:[0-9]+|\?)x)*)")
_INT_TYPE = re.compile(r"i([0-9]+)$")


class TypeParser:
    """Types and small tokens over a Lexer; type and attribute aliases (`!t = ...`,
    `#a = ...`) live here."""

    def __init__(self, text: str, filename: str = "-"):
        self.lex = lx.Lexer(text, filename)
        self.attr_aliases: dict[str, Attribute] = {}
        self.type_aliases: dict[str, Type] = {}
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
        return lx.integer_value(m.group(1))

    def parse_dimension_list(self) -> tuple[int, ...]:
        """`128x?x64x` (the dimensions before a shaped type's element type; `?` is DYNAMIC)."""
        m = self.lex.take(_DIMS)
        if not m.group(1):
            return ()
        return tuple(DYNAMIC if d == "?" else int(d) for d in m.group(1).split("x")[:-1])

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
        if name == "memref":
            return parse_memref_body(self)
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


def _overrides(cls, method: str) -> bool:
    """Whether `cls` defines classmethod `method` rather than inheriting the base's stub."""
    base = DialectType if issubclass(cls, DialectType) else DialectAttribute
    return getattr(cls, method).__func__ is not getattr(base, method).__func__


def _builtin_scalar(name: str) -> Type | None:
    m = _INT_TYPE.match(name)
    if m is not None:
        return IntegerType(int(m.group(1))) if m.group(1)[0] != "0" else None
    if name in FLOAT_FORMATS:
        return FloatType(name)
    if name == "index":
        return IndexType()
    if name == "none":
        return NoneType()
    return None
