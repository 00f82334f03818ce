"""Builtin types of the IR: interned, immutable, spelled as MLIR spells them.

Integer types are signless (`i32`): signedness lives in the op (`divsi`/`divui`), as in MLIR and
Triton. Dialect types (`!tt.ptr<f32>`) subclass `DialectType` and register by dialect and mnemonic
so that the parser can find them again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from .float_format import FLOAT_FORMATS
from .interning import Interned
from .syntax import dialect_symbol


class Type(Interned):
    """Base of every type. `is_pointer` lets the core's `PointerLike` constraint recognize a
    dialect's pointer type without knowing the dialect."""

    __slots__ = ()
    is_pointer: ClassVar[bool] = False


class IntegerType(Type):
    """A signless integer of `width` bits: `i1`, `i8`, `i16`, `i32`, `i64`."""

    __slots__ = ("width",)
    width: int

    def __new__(cls, width: int):
        if not isinstance(width, int) or width <= 0:
            raise ValueError(f"integer width must be a positive int, got {width!r}")
        return cls._intern(width)

    def _spelling(self) -> str:
        return f"i{self.width}"


class FloatType(Type):
    """A float format named by its MLIR spelling: `f16 bf16 f32 f64 f8E4M3FN f8E5M2 ...`."""

    __slots__ = ("kind",)
    kind: str

    def __new__(cls, kind: str):
        if kind not in FLOAT_FORMATS:
            raise ValueError(f"unknown float type {kind!r}; known: {', '.join(FLOAT_FORMATS)}")
        return cls._intern(kind)

    @property
    def width(self) -> int:
        return FLOAT_FORMATS[self.kind].width

    def _spelling(self) -> str:
        return self.kind


class IndexType(Type):
    """The target-sized integer used for loop bounds and sizes: `index`."""

    __slots__ = ()

    def __new__(cls):
        return cls._intern()

    def _spelling(self) -> str:
        return "index"


class NoneType(Type):
    """The unit type: `none`."""

    __slots__ = ()

    def __new__(cls):
        return cls._intern()

    def _spelling(self) -> str:
        return "none"


DYNAMIC = -(1 << 63)
"""A dimension, stride or offset not known until run time, spelled `?`: MLIR's
`ShapedType::kDynamic` (INT64_MIN), the same sentinel in static-index arrays
(`static_sizes = array<i64: -9223372036854775808, 4>`)."""


def check_shape(shape: Iterable[int], what: str) -> tuple[int, ...]:
    """`shape` as a tuple of dimensions, each >= 0 or DYNAMIC."""
    shape = tuple(int(d) for d in shape)
    if any(d < 0 and d != DYNAMIC for d in shape):
        raise ValueError(f"{what} dimensions must be >= 0 or dynamic, got {shape}")
    return shape


def dims_text(shape: tuple[int, ...]) -> str:
    """`4x?x` (each dimension and an `x`; `?` for a dynamic one), as shaped types print."""
    return "".join("?x" if d == DYNAMIC else f"{d}x" for d in shape)


class RankedTensorType(Type):
    """`tensor<128x64xf32>`, `tensor<f32>` (rank 0), `tensor<4xi32, #enc>` (with an encoding
    attribute: the layout of TTGIR), `tensor<?x4xf32>` (a dynamic dimension, DYNAMIC: the
    Linalg form of a masked slice; Triton's own tensors are static)."""

    __slots__ = ("shape", "element_type", "encoding")  # noqa: RUF023 (order = parameters)
    shape: tuple[int, ...]
    element_type: Type
    encoding: object  # an Attribute or None; typed loosely so types need not import attributes

    def __new__(cls, shape: Iterable[int], element_type: Type, encoding=None):
        shape = check_shape(shape, "tensor")
        if not isinstance(element_type, Type) or isinstance(element_type, RankedTensorType):
            raise TypeError(f"tensor element type must be a scalar type, got {element_type!r}")
        return cls._intern(shape, element_type, encoding)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def has_static_shape(self) -> bool:
        return DYNAMIC not in self.shape

    @property
    def numel(self) -> int:
        """The number of elements (ValueError for a dynamic shape)."""
        if DYNAMIC in self.shape:
            raise ValueError(f"{self} has a dynamic shape")
        count = 1
        for d in self.shape:
            count *= d
        return count

    def clone(self, shape=None, element_type=None, encoding=...) -> RankedTensorType:
        """This type with some parameters replaced (`encoding=None` drops the encoding)."""
        return RankedTensorType(
            self.shape if shape is None else shape,
            self.element_type if element_type is None else element_type,
            self.encoding if encoding is ... else encoding,
        )

    def _spelling(self) -> str:
        encoding = "" if self.encoding is None else f", {self.encoding}"
        return f"tensor<{dims_text(self.shape)}{self.element_type}{encoding}>"


class FunctionType(Type):
    """`(i32, f32) -> f32`; several results are parenthesized, as is one function result."""

    __slots__ = ("inputs", "results")
    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __new__(cls, inputs: Iterable[Type], results: Iterable[Type]):
        return cls._intern(tuple(inputs), tuple(results))

    def _spelling(self) -> str:
        inputs = ", ".join(map(str, self.inputs))
        results = self.results
        if len(results) == 1 and not isinstance(results[0], FunctionType):
            return f"({inputs}) -> {results[0]}"
        return f"({inputs}) -> ({', '.join(map(str, results))})"


_DIALECT_TYPES: dict[tuple[str, str], type[DialectType]] = {}


class DialectType(Type):
    """Base of a dialect's types: `!dialect.mnemonic<body>`.

    A subclass sets `dialect` and `mnemonic`, lists its parameters in `__slots__`, constructs with
    `cls._intern(*params)` in `__new__`, and implements `print_body()` (the text after the
    mnemonic, `<f32, 1>`) and the classmethod `parse_body(parser)` for the parser.
    """

    __slots__ = ()
    dialect: ClassVar[str]
    mnemonic: ClassVar[str]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "mnemonic" in cls.__dict__:
            _register(_DIALECT_TYPES, cls)

    def print_body(self) -> str:
        return ""

    @classmethod
    def parse_body(cls, parser) -> DialectType:
        raise NotImplementedError(f"{cls.__name__} does not parse")

    def _spelling(self) -> str:
        return dialect_symbol("!", self.dialect, self.mnemonic + self.print_body())


def dialect_type_class(dialect: str, mnemonic: str) -> type[DialectType] | None:
    """The registered class of `!dialect.mnemonic`, or None."""
    return _DIALECT_TYPES.get((dialect, mnemonic))


def _register(table: dict, cls: type) -> None:
    """Register a dialect type or attribute class; a second class under the same name is an
    error, unless it is the same class defined again (a module reloaded)."""
    key = (cls.dialect, cls.mnemonic)
    old = table.get(key)
    if old is not None and (old.__module__, old.__qualname__) != (cls.__module__, cls.__qualname__):
        raise ValueError(
            f"{cls.dialect}.{cls.mnemonic} is already registered by {old.__qualname__}"
        )
    table[key] = cls


i1 = IntegerType(1)
i8 = IntegerType(8)
i16 = IntegerType(16)
i32 = IntegerType(32)
i64 = IntegerType(64)
f16 = FloatType("f16")
bf16 = FloatType("bf16")
f32 = FloatType("f32")
f64 = FloatType("f64")
index = IndexType()


def element_type(t: Type) -> Type:
    """The element type of a tensor, or `t` itself for a scalar."""
    return t.element_type if isinstance(t, RankedTensorType) else t


def shape_of(t: Type) -> tuple[int, ...]:
    """The shape of a tensor; `()` for a scalar."""
    return t.shape if isinstance(t, RankedTensorType) else ()


def encoding_of(t: Type):
    """The encoding attribute of a tensor, or None."""
    return t.encoding if isinstance(t, RankedTensorType) else None


def with_element_type(t: Type, element: Type) -> Type:
    """`t` with its element type replaced: same shape and encoding for a tensor."""
    return t.clone(element_type=element) if isinstance(t, RankedTensorType) else element


def is_integer_like(t: Type) -> bool:
    """A signless integer or index, or a tensor of them."""
    return isinstance(element_type(t), IntegerType | IndexType)


def is_float_like(t: Type) -> bool:
    """A float, or a tensor of floats."""
    return isinstance(element_type(t), FloatType)


def is_pointer_like(t: Type) -> bool:
    """A dialect pointer type (`is_pointer`), or a tensor of them."""
    return element_type(t).is_pointer
