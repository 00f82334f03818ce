"""Builtin attributes: interned, immutable compile-time values, spelled as MLIR spells them.

`str(attr)` is the full MLIR spelling (`42 : i32`, `dense<1.000000e+00> : tensor<4xf32>`);
`attr.elided_str()` is the spelling inside an array, where MLIR drops the default `i64`/`f64` type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from .float_format import float_key, float_to_bits, format_float, round_float, round_floats
from .interning import Interned
from .syntax import dialect_symbol, keyword_or_string, quote_string
from .types import (
    FloatType,
    IndexType,
    IntegerType,
    RankedTensorType,
    Type,
    _register,
    f64,
    i1,
    i64,
)

# MLIR prints a non-splat dense attribute of more elements as a hex string of its raw data.
_HEX_ELEMENT_LIMIT = 100


class Attribute(Interned):
    """Base of every attribute (locations included)."""

    __slots__ = ()

    def elided_str(self) -> str:
        """The spelling where the attribute's type may be elided (inside an ArrayAttr)."""
        return str(self)


class IntegerAttr(Attribute):
    """`42 : i32`. The value is stored two's-complement wrapped to the signed range, as MLIR's
    APInt prints it; `i1` values are `BoolAttr`s (`true`)."""

    __slots__ = ("value", "type")  # noqa: RUF023 (order = parameters)
    value: int
    type: Type

    def __new__(cls, value: int, type: Type):
        if type is i1:
            return BoolAttr(int(value) & 1)
        return cls._intern(_wrap_integer(int(value), type), type)

    def _spelling(self) -> str:
        return f"{self.value} : {self.type}"

    def elided_str(self) -> str:
        return str(self.value) if self.type is i64 else str(self)


class BoolAttr(IntegerAttr):
    """`true` / `false`: an `i1` IntegerAttr whose value is a Python bool."""

    __slots__ = ()

    def __new__(cls, value: bool):
        return cls._intern(bool(value), i1)

    def _spelling(self) -> str:
        return "true" if self.value else "false"


class FloatAttr(Attribute):
    """`1.000000e+00 : f32`. The value is rounded to the type at construction, and two
    attributes are the same exactly when their bits are (0.0 is not -0.0)."""

    __slots__ = ("value", "type")  # noqa: RUF023 (order = parameters)
    value: float
    type: FloatType

    def __new__(cls, value: float, type: FloatType):
        if not isinstance(type, FloatType):
            raise TypeError(f"FloatAttr needs a float type, got {type}")
        value = round_float(type.kind, float(value))
        return cls._intern(value, type, key=(float_to_bits(type.kind, value), type))

    def _spelling(self) -> str:
        return f"{format_float(self.type.kind, self.value)} : {self.type}"

    def elided_str(self) -> str:
        return format_float("f64", self.value) if self.type is f64 else str(self)


class StringAttr(Attribute):
    """`"text"`, escaped as MLIR escapes."""

    __slots__ = ("value",)
    value: str

    def __new__(cls, value: str):
        return cls._intern(str(value))

    def _spelling(self) -> str:
        return quote_string(self.value)


class UnitAttr(Attribute):
    """`unit`: presence is the information (`{noinline}` in an attribute dictionary)."""

    __slots__ = ()

    def __new__(cls):
        return cls._intern()

    def _spelling(self) -> str:
        return "unit"


class TypeAttr(Attribute):
    """A type used as an attribute (`function_type = (i32) -> i32`)."""

    __slots__ = ("value",)
    value: Type

    def __new__(cls, value: Type):
        return cls._intern(value)

    def _spelling(self) -> str:
        return str(self.value)


class ArrayAttr(Attribute):
    """`[1, "a", i32]`: a tuple of attributes."""

    __slots__ = ("elements",)
    elements: tuple[Attribute, ...]

    def __new__(cls, elements: Iterable[Attribute]):
        return cls._intern(tuple(elements))

    def __len__(self) -> int:
        return len(self.elements)

    def __iter__(self):
        return iter(self.elements)

    def __getitem__(self, i):
        return self.elements[i]

    def _spelling(self) -> str:
        return f"[{', '.join(e.elided_str() for e in self.elements)}]"


class DictionaryAttr(Attribute):
    """`{a = 1 : i32, flag}`: named attributes, sorted by name as MLIR keeps them."""

    __slots__ = ("items",)
    items: tuple[tuple[str, Attribute], ...]

    def __new__(cls, entries: Mapping[str, Attribute] | Iterable[tuple[str, Attribute]] = ()):
        pairs = entries.items() if isinstance(entries, Mapping) else entries
        return cls._intern(tuple(sorted(pairs, key=lambda kv: kv[0])))

    def get(self, name: str, default=None):
        for key, value in self.items:
            if key == name:
                return value
        return default

    def __getitem__(self, name: str) -> Attribute:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None

    def __len__(self) -> int:
        return len(self.items)

    def _spelling(self) -> str:
        return "{" + ", ".join(named_attribute_str(k, v) for k, v in self.items) + "}"


def named_attribute_str(name: str, value: Attribute) -> str:
    """One entry of an attribute dictionary: `name = value`, or the bare name for a UnitAttr."""
    key = keyword_or_string(name)
    return key if isinstance(value, UnitAttr) else f"{key} = {value}"


class SymbolRefAttr(Attribute):
    """`@root` or `@root::@nested::@leaf`: a reference to a symbol by name."""

    __slots__ = ("root", "nested")  # noqa: RUF023 (order = parameters)
    root: str
    nested: tuple[str, ...]

    def __new__(cls, root: str, nested: Iterable[str] = ()):
        return cls._intern(str(root), tuple(nested))

    @property
    def leaf(self) -> str:
        return self.nested[-1] if self.nested else self.root

    def _spelling(self) -> str:
        return "::".join("@" + keyword_or_string(n) for n in (self.root, *self.nested))


class DenseArrayAttr(Attribute):
    """`array<i32: 1, 2>` (`array<i32>` when empty): a flat array of integers or floats."""

    __slots__ = ("element_type", "values")
    element_type: Type
    values: tuple

    def __new__(cls, element_type: Type, values: Iterable):
        values = _normalize_scalars(element_type, tuple(values))
        return cls._intern(
            element_type, values, key=(element_type, _scalars_key(element_type, values))
        )

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self):
        return iter(self.values)

    def __getitem__(self, i):
        return self.values[i]

    def _spelling(self) -> str:
        if not self.values:
            return f"array<{self.element_type}>"
        body = ", ".join(_scalar_str(self.element_type, v) for v in self.values)
        return f"array<{self.element_type}: {body}>"


class DenseElementsAttr(Attribute):
    """`dense<1.000000e+00> : tensor<128xf32>` (splat) or `dense<[[1, 2], [3, 4]]> : ...`.

    `values` holds the elements flattened row-major, or one value for a splat. As in MLIR, a
    full list whose elements are all equal (bit for bit) is stored and printed as a splat.
    """

    __slots__ = ("type", "values")
    type: RankedTensorType
    values: tuple

    def __new__(cls, type: RankedTensorType, values):
        if not isinstance(type, RankedTensorType):
            raise TypeError(f"DenseElementsAttr needs a tensor type, got {type}")
        element = type.element_type
        values = _normalize_scalars(element, tuple(values) if _is_sequence(values) else (values,))
        if len(values) not in (1, type.numel):
            raise ValueError(f"{len(values)} values for {type} ({type.numel} elements)")
        key = _scalars_key(element, values)
        if len(values) > 1 and _all_equal(key, len(values)):
            values, key = values[:1], _scalars_key(element, values[:1])
        return cls._intern(type, values, key=(type, key))

    @property
    def is_splat(self) -> bool:
        return len(self.values) == 1

    @property
    def splat_value(self):
        """The value of every element of a splat (ValueError otherwise)."""
        if len(self.values) != 1:
            raise ValueError("not a splat")
        return self.values[0]

    def elements(self) -> tuple:
        """Every element, row-major (a splat expanded)."""
        return self.values * self.type.numel if self.is_splat else self.values

    def _spelling(self) -> str:
        return f"dense<{self._body()}> : {self.type}"

    def _body(self) -> str:
        element = self.type.element_type
        if self.is_splat:
            return _scalar_str(element, self.values[0])
        if not self.values:
            return ""
        if len(self.values) > _HEX_ELEMENT_LIMIT and element is not i1:
            return f'"0x{_raw_data(element, self.values).hex().upper()}"'
        texts = [_scalar_str(element, v) for v in self.values]
        for dim in reversed(self.type.shape):
            texts = ["[" + ", ".join(texts[i : i + dim]) + "]" for i in range(0, len(texts), dim)]
        return texts[0]


_DIALECT_ATTRIBUTES: dict[tuple[str, str], type[DialectAttribute]] = {}


class DialectAttribute(Attribute):
    """Base of a dialect's attributes: `#dialect.mnemonic<body>` (or `#dialect<mnemonic body>`
    where the body is not of the pretty form). Declared as DialectType is; `print_body()` is
    the text after the mnemonic, and custom assembly formats print the attribute bare."""

    __slots__ = ()
    dialect: ClassVar[str]
    mnemonic: ClassVar[str]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "mnemonic" in cls.__dict__:
            _register(_DIALECT_ATTRIBUTES, cls)

    def print_body(self) -> str:
        return ""

    @classmethod
    def parse_body(cls, parser) -> DialectAttribute:
        raise NotImplementedError(f"{cls.__name__} does not parse")

    def _spelling(self) -> str:
        return dialect_symbol("#", self.dialect, self.mnemonic + self.print_body())


def dialect_attribute_class(dialect: str, mnemonic: str) -> type[DialectAttribute] | None:
    """The registered class of `#dialect.mnemonic`, or None."""
    return _DIALECT_ATTRIBUTES.get((dialect, mnemonic))


def _wrap_integer(value: int, type: Type) -> int:
    """`value` wrapped into the signed range of `type` (index is 64-bit)."""
    if isinstance(type, IntegerType):
        width = type.width
    elif isinstance(type, IndexType):
        width = 64
    else:
        raise TypeError(f"integer attribute needs an integer or index type, got {type}")
    half = 1 << (width - 1)
    return ((value + half) & ((half << 1) - 1)) - half


def _normalize_scalars(element: Type, values: tuple) -> tuple:
    if element is i1:
        return tuple(bool(int(v) & 1) for v in values)
    if isinstance(element, IntegerType | IndexType):
        return tuple(_wrap_integer(int(v), element) for v in values)
    if isinstance(element, FloatType):
        return round_floats(element.kind, values)
    raise TypeError(f"dense attributes hold integers or floats, not {element}")


def _scalars_key(element: Type, values: tuple):
    return float_key(element.kind, values) if isinstance(element, FloatType) else values


def _all_equal(key, count: int) -> bool:
    if isinstance(key, bytes):
        size = len(key) // count
        return key == key[:size] * count
    return key.count(key[0]) == count


def _scalar_str(element: Type, value) -> str:
    if isinstance(element, FloatType):
        return format_float(element.kind, value)
    if element is i1:
        return "true" if value else "false"
    return str(value)


def _raw_data(element: Type, values: tuple) -> bytes:
    """The elements as MLIR stores them, little-endian, for the hex form of large constants."""
    if isinstance(element, FloatType):
        size = element.width // 8
        return b"".join(float_to_bits(element.kind, v).to_bytes(size, "little") for v in values)
    size = (element.width + 7) // 8 if isinstance(element, IntegerType) else 8
    return b"".join(v.to_bytes(size, "little", signed=True) for v in values)


def _is_sequence(values) -> bool:
    return not isinstance(values, int | float | bool) and hasattr(values, "__len__")
