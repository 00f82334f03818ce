"""The attributes of the `arith` dialect (ArithBase.td).

Two kinds, as upstream MLIR has them:

- `I64EnumAttr` / `I32EnumAttr` predicates and rounding modes, held as plain integer attributes
  (`predicate = 2 : i64` in the generic form, `slt` in the custom one): `CmpIPredicate`,
  `CmpFPredicate`, `RoundingMode` (`EnumAttr` constraints, base.py).
- `EnumAttr<Arith_Dialect, ...>` bit enums, which are dialect attributes of their own:
  `#arith.fastmath<nnan,ninf>` and `#arith.overflow<nsw, nuw>`. A custom format prints only the
  body (`fastmath<fast>` after the `fastmath` keyword, `overflow<nsw>`).
"""

from __future__ import annotations

from typing import ClassVar

from ...ir import DialectAttribute, i64
from ..base import EnumAttr

CmpIPredicate = EnumAttr(
    "CmpIPredicate",
    {
        "eq": 0,
        "ne": 1,
        "slt": 2,
        "sle": 3,
        "sgt": 4,
        "sge": 5,
        "ult": 6,
        "ule": 7,
        "ugt": 8,
        "uge": 9,
    },
    type=i64,
)
CmpFPredicate = EnumAttr(
    "CmpFPredicate",
    {
        "false": 0,
        "oeq": 1,
        "ogt": 2,
        "oge": 3,
        "olt": 4,
        "ole": 5,
        "one": 6,
        "ord": 7,
        "ueq": 8,
        "ugt": 9,
        "uge": 10,
        "ult": 11,
        "ule": 12,
        "une": 13,
        "uno": 14,
        "true": 15,
    },
    type=i64,
)
RoundingMode = EnumAttr(
    "RoundingMode",
    {"to_nearest_even": 0, "downward": 1, "upward": 2, "toward_zero": 3, "to_nearest_away": 4},
)


class _BitEnumAttribute(DialectAttribute):
    """A dialect attribute holding a set of flag bits, spelled `<a,b>` / `<none>`; a group
    that covers every bit (`fast`) is printed instead of its members, as ODS's
    `printBitEnumPrimaryGroups` does."""

    __slots__ = ("value",)
    value: int
    flags: ClassVar[dict[str, int]] = {}
    groups: ClassVar[dict[str, int]] = {}
    separator: ClassVar[str] = ","

    def __new__(cls, value: int | str = 0):
        if isinstance(value, str):
            value = cls.parse_flags(value)
        value = int(value)
        if value & ~sum(cls.flags.values()):
            raise ValueError(f"invalid {cls.mnemonic} bits {value:#x}")
        return cls._intern(value)

    @classmethod
    def parse_flags(cls, text: str) -> int:
        """The bits of a keyword list (`"nnan,ninf"`, `"nsw, nuw"`, `"fast"`, `"none"`)."""
        value = 0
        for word in (w.strip() for w in text.split(",")):
            if word == "none":
                continue
            bits = cls.flags.get(word, cls.groups.get(word))
            if bits is None:
                raise ValueError(f"unknown {cls.mnemonic} flag {word!r}")
            value |= bits
        return value

    @classmethod
    def from_body(cls, body: str) -> _BitEnumAttribute:
        """The attribute whose `print_body()` is `body` (`<nnan,ninf>`), for the parser."""
        text = body.strip()
        if not (text.startswith("<") and text.endswith(">")):
            raise ValueError(f"expected <...> after {cls.mnemonic}, got {body!r}")
        return cls(cls.parse_flags(text[1:-1]))

    def keywords(self) -> list[str]:
        value = self.value
        if value == 0:
            return ["none"]
        words = []
        for name, bits in self.groups.items():
            if value & bits == bits:
                words.append(name)
                value &= ~bits
        words += [name for name, bits in self.flags.items() if value & bits]
        return words

    def has(self, flag: str) -> bool:
        bits = self.flags.get(flag, self.groups.get(flag, 0))
        return self.value & bits == bits

    def print_body(self) -> str:
        return f"<{self.separator.join(self.keywords())}>"


class FastMathFlagsAttr(_BitEnumAttribute):
    """`#arith.fastmath<...>`: what a float op may assume (`nnan`, `ninf`, ..., `fast`)."""

    __slots__ = ()
    dialect = "arith"
    mnemonic = "fastmath"
    flags: ClassVar[dict[str, int]] = {
        "reassoc": 1,
        "nnan": 2,
        "ninf": 4,
        "nsz": 8,
        "arcp": 16,
        "contract": 32,
        "afn": 64,
    }
    groups: ClassVar[dict[str, int]] = {"fast": 127}
    separator = ","


class IntegerOverflowFlagsAttr(_BitEnumAttribute):
    """`#arith.overflow<nsw, nuw>`: overflow that makes the result poison."""

    __slots__ = ()
    dialect = "arith"
    mnemonic = "overflow"
    flags: ClassVar[dict[str, int]] = {"nsw": 1, "nuw": 2}
    groups: ClassVar[dict[str, int]] = {}
    separator = ", "


FASTMATH_NONE = FastMathFlagsAttr(0)
OVERFLOW_NONE = IntegerOverflowFlagsAttr(0)
