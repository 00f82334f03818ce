"""What the dialect modules share: enum-attribute and type constraints that the printer and
parser read, type helpers, and the checks several dialects' verifiers make.

Conventions every dialect module follows (the printer and parser rely on them):

- `assembly_format` is the op's declarative format, spelled exactly as upstream ODS spells it.
  Ops whose upstream syntax is hand-written C++ set `custom_syntax = True` (and no format); ops
  that upstream prints only in the generic form (`tt.reduce`, `tt.scan`) have neither.
- An attribute field whose constraint is an `EnumAttr` holds a plain `IntegerAttr` (i32 or i64,
  exactly what MLIR stores for an `I32EnumAttr`/`I64EnumAttr`, so the generic form prints
  `cache = 1 : i32`); a format prints and parses it by keyword (`EnumAttr.keyword`,
  `EnumAttr.parse_keyword`).
- `type_inference` lists `(target, source, fn)`: the type of field `target`, which the format
  does not spell, is `fn(x)` where `x` is the type of field `source` (the attribute itself when
  `source` is an attribute field), as MLIR's `TypesMatchWith`/`AllTypesMatch`. Types implied by
  `SameOperandsAndResultType` / `SameTypeOperands` traits, and by `TypeIs` constraints
  (`Variadic<I32>` spelled without types), are not repeated there.
- A `TypeClass` constraint marks an operand or result of one specific dialect type class, which
  MLIR's `type($x)` directive prints stripped (`<f16>`, not `!tt.ptr<f16>`), unless the format
  says `qualified(type($x))`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..ir import (
    ArrayAttr,
    BoolAttr,
    Constraint,
    DenseArrayAttr,
    DenseElementsAttr,
    DictionaryAttr,
    FloatAttr,
    FloatType,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    RankedTensorType,
    StringAttr,
    SymbolRefAttr,
    Trait,
    Type,
    TypeAttr,
    UnitAttr,
    VerificationError,
    element_type,
    i1,
    i32,
    i64,
    shape_of,
)


class EnumAttr(Constraint):
    """An MLIR `I32EnumAttr` / `I64EnumAttr` / `I32BitEnumAttr`: an integer attribute whose
    value is one of the named cases (any union of the bits, for a bit enum)."""

    __slots__ = ("bit", "by_value", "cases", "name", "separator", "type")

    def __init__(
        self,
        name: str,
        cases: dict[str, int],
        type: IntegerType = i32,
        bit: bool = False,
        separator: str = "|",
    ):
        self.name = name
        self.cases = dict(cases)
        self.by_value = {v: k for k, v in reversed(cases.items())}
        self.type = type
        self.bit = bit
        self.separator = separator
        super().__init__(f"{name} enum ({', '.join(cases)})", self._accepts)

    def _accepts(self, attr) -> bool:
        if not isinstance(attr, IntegerAttr) or isinstance(attr, BoolAttr):
            return False
        if attr.type is not self.type:
            return False
        if self.bit:
            return attr.value & ~self._all_bits() == 0
        return attr.value in self.by_value

    def _all_bits(self) -> int:
        bits = 0
        for value in self.cases.values():
            bits |= value
        return bits

    def get(self, case: str | int) -> IntegerAttr:
        """The attribute of a case, by keyword (`"none"`) or by value."""
        if isinstance(case, str):
            return self.parse_keyword(case)
        if isinstance(case, IntegerAttr):
            return case
        value = int(case)
        if not self._accepts(IntegerAttr(value, self.type)):
            raise ValueError(f"{value} is not a {self.name} value")
        return IntegerAttr(value, self.type)

    def keyword(self, attr: IntegerAttr | int) -> str:
        """The custom-syntax spelling of a value (`acq_rel`, `local|global_read`)."""
        value = attr.value if isinstance(attr, IntegerAttr) else int(attr)
        if not self.bit:
            return self.by_value[value]
        if value in self.by_value:  # none, or a group such as `all`
            return self.by_value[value]
        names = [k for k, v in self.cases.items() if v and v & (v - 1) == 0 and value & v]
        return self.separator.join(names)

    def parse_keyword(self, text: str) -> IntegerAttr:
        """The attribute a keyword spells; ValueError for an unknown one."""
        parts = [p.strip() for p in text.split(self.separator)] if self.bit else [text]
        value = 0
        for part in parts:
            if part not in self.cases:
                raise ValueError(f"unknown {self.name} keyword {part!r}")
            value |= self.cases[part]
        return IntegerAttr(value, self.type)


class TypeIs(Constraint):
    """Exactly one type (`I32`, `I64`, `I1`): ODS calls it buildable, so a format may omit it."""

    __slots__ = ("type",)

    def __init__(self, type: Type):
        self.type = type
        super().__init__(f"'{type}'", lambda t: t is type)


class TypeClass(Constraint):
    """A type of one dialect class (optionally narrowed by `predicate`); `type($x)` prints it
    stripped of its `!dialect.mnemonic` prefix."""

    __slots__ = ("type_class",)

    def __init__(self, type_class: type, description: str, predicate: Callable | None = None):
        self.type_class = type_class
        super().__init__(
            description,
            lambda t: isinstance(t, type_class) and (predicate is None or predicate(t)),
        )


def _int_attr(type: IntegerType):
    return lambda a: isinstance(a, IntegerAttr) and not isinstance(a, BoolAttr) and a.type is type


# Attribute constraints, named as ODS names them.
I32Attr = Constraint("32-bit signless integer attribute", _int_attr(i32))
I64Attr = Constraint("64-bit signless integer attribute", _int_attr(i64))
BoolAttrC = Constraint("bool attribute", lambda a: isinstance(a, BoolAttr))
StrAttr = Constraint("string attribute", lambda a: isinstance(a, StringAttr))
UnitAttrC = Constraint("unit attribute", lambda a: isinstance(a, UnitAttr))
DenseI32ArrayAttr = Constraint(
    "i32 dense array attribute", lambda a: isinstance(a, DenseArrayAttr) and a.element_type is i32
)
FlatSymbolRefAttr = Constraint(
    "flat symbol reference attribute", lambda a: isinstance(a, SymbolRefAttr) and not a.nested
)
FunctionTypeAttr = Constraint(
    "type attribute of function type",
    lambda a: isinstance(a, TypeAttr) and isinstance(a.value, FunctionType),
)
DictArrayAttr = Constraint(
    "Array of dictionary attributes",
    lambda a: isinstance(a, ArrayAttr) and all(isinstance(e, DictionaryAttr) for e in a),
)


def i32_attr(value) -> IntegerAttr:
    return value if isinstance(value, IntegerAttr) else IntegerAttr(int(value), i32)


def bool_attr(value) -> BoolAttr:
    return value if isinstance(value, BoolAttr) else BoolAttr(bool(value))


def str_attr(value) -> StringAttr:
    return value if isinstance(value, StringAttr) else StringAttr(str(value))


def i32_array(values) -> DenseArrayAttr:
    return values if isinstance(values, DenseArrayAttr) else DenseArrayAttr(i32, values)


I1 = TypeIs(i1)
I32 = TypeIs(i32)
I64 = TypeIs(i64)
Index = TypeIs(IndexType())


def one_of(description: str, *constraints: Constraint) -> Constraint:
    """`AnyTypeOf<[...]>` with the description ODS would give it."""
    return Constraint(description, lambda t: any(c(t) for c in constraints))


def is_int(t: Type) -> bool:
    return isinstance(t, IntegerType)


def is_float(t: Type) -> bool:
    return isinstance(t, FloatType)


def tensor_or_scalar(element: Callable[[Type], bool], description: str) -> Constraint:
    """A scalar satisfying `element`, or a ranked tensor of such."""
    return Constraint(description, lambda t: element(element_type(t)))


def tensor_of(element: Callable[[Type], bool], description: str) -> Constraint:
    return Constraint(
        description, lambda t: isinstance(t, RankedTensorType) and element(t.element_type)
    )


SignlessIntegerLike = tensor_or_scalar(
    lambda t: isinstance(t, IntegerType | IndexType), "signless-integer-like"
)
SignlessFixedWidthIntegerLike = tensor_or_scalar(is_int, "signless-fixed-width-integer-like")
FloatLike = tensor_or_scalar(is_float, "floating-point-like")
BoolLike = tensor_or_scalar(lambda t: t is i1, "bool-like")
SignlessIntegerOrFloatLike = tensor_or_scalar(
    lambda t: isinstance(t, IntegerType | IndexType | FloatType),
    "signless-integer-or-floating-point-like",
)


def i1_like(t: Type) -> Type:
    """`i1`, or an `i1` tensor of `t`'s shape and encoding (MLIR's getI1SameShape)."""
    return t.clone(element_type=i1) if isinstance(t, RankedTensorType) else i1


def bit_width(t: Type) -> int:
    """Bits of a scalar type (a pointer is 64 bits wide, index too)."""
    if isinstance(t, IntegerType | FloatType):
        return t.width
    return 64


def numel(t: Type) -> int:
    count = 1
    for d in shape_of(t):
        count *= d
    return count


def fail(op, message: str) -> None:
    raise VerificationError(message, op)


def check_type(op, actual: Type, expected: Type, what: str) -> None:
    """MLIR's `TypesMatchWith` check: `failed to verify that <what>`."""
    if actual is not expected:
        fail(op, f"failed to verify that {what}")


def check_inferred(op, inferred: Iterable[Type]) -> None:
    """What MLIR's InferTypeOpInterface checks: the results have the inferred types."""
    inferred = tuple(inferred)
    actual = tuple(r.type for r in op.results)
    if inferred != actual:
        fail(
            op,
            f"inferred type(s) {_types(inferred)} are incompatible with return type(s) of "
            f"operation {_types(actual)}",
        )


def _types(types: tuple) -> str:
    return ", ".join(f"'{t}'" for t in types)


def _same_type_operands(op) -> str | None:
    types = {v.type for v in op.operands}
    return None if len(types) <= 1 else "requires all operands to have the same type"


SameTypeOperands = Trait("SameTypeOperands", _same_type_operands)


def splat_of(attr, type: Type):
    """`attr` (a scalar constant, or a splat dense attribute) as a splat of tensor `type`."""
    if isinstance(attr, DenseElementsAttr):
        if not attr.is_splat:
            return None
        attr = attr.splat_value
    elif isinstance(attr, IntegerAttr | FloatAttr):
        attr = attr.value
    else:
        return None
    return DenseElementsAttr(type, attr)


def is_splat_value(attr, predicate: Callable[[object], bool]) -> bool:
    """Whether a constant (scalar or splat) holds a value satisfying `predicate`."""
    if isinstance(attr, DenseElementsAttr):
        return attr.is_splat and predicate(attr.splat_value)
    if isinstance(attr, IntegerAttr | FloatAttr):
        return predicate(attr.value)
    return False


class ConditionalTraits:
    """Traits that depend on an attribute of the op, as Triton's effect interfaces do: a
    `tt.extern_elementwise` with `pure = true` is Pure, one without has memory effects.

    Installed as the class's `traits` after `@irdl_op`: the class itself (`cls.traits`: what
    the verifier checks) keeps the `static` set, while `op.traits` (what rewrites ask) adds
    `extra(op)`."""

    __slots__ = ("extra", "static")

    def __init__(self, static: frozenset, extra: Callable):
        self.static = static
        self.extra = extra

    def __get__(self, op, owner=None):
        if op is None:
            return self.static
        return self.static | self.extra(op)


def conditional_traits(extra: Callable):
    """Class decorator, placed above `@irdl_op`: make `op.traits` add `extra(op)`."""

    def install(cls):
        cls.traits = ConditionalTraits(cls.traits, extra)
        return cls

    return install
