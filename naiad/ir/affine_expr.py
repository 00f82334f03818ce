"""Affine expressions: dimensions `d0`, symbols `s0`, constants, and `+ * mod floordiv
ceildiv` of them, the results of an affine map (affine.py).

Expressions are interned, like types, and built through operators that simplify as MLIR's
`AffineExpr` operators do (constants folded and moved to the right, `x + 0` and `x * 1` dropped,
`(x * 128) floordiv 64` is `x * 2`, `x - (x floordiv 4) * 4` is `x mod 4`, ...), so that a map
reads back from the text exactly as MLIR would hold it; `text()` spells them as MLIR's
AsmPrinter does (`d0 - d1` for `d0 + d1 * -1`).

    d0, s0 = dim(0), symbol(0)
    d0 * 2 + s0          # d0 * 2 + s0
    (d0 * 128) // 64     # d0 * 2
    d0.ceildiv(4).evaluate([9])   # 3
"""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd

from .interning import Interned

ADD, MUL, MOD, FLOORDIV, CEILDIV = "add", "mul", "mod", "floordiv", "ceildiv"
_SPELLING = {ADD: " + ", MUL: " * ", MOD: " mod ", FLOORDIV: " floordiv ", CEILDIV: " ceildiv "}


class AffineExpr(Interned):
    """Base of affine expressions. `+ - *` build sums and products, `%` is `mod`, `//` is
    `floordiv`; `ceildiv(x)` has no operator. An int operand is a constant."""

    __slots__ = ()

    def __add__(self, other) -> AffineExpr:
        return _add(self, as_expr(other))

    def __radd__(self, other) -> AffineExpr:
        return _add(as_expr(other), self)

    def __sub__(self, other) -> AffineExpr:
        return _add(self, -as_expr(other))

    def __rsub__(self, other) -> AffineExpr:
        return _add(as_expr(other), -self)

    def __neg__(self) -> AffineExpr:
        return _mul(self, constant(-1))

    def __mul__(self, other) -> AffineExpr:
        return _mul(self, as_expr(other))

    def __rmul__(self, other) -> AffineExpr:
        return _mul(as_expr(other), self)

    def __mod__(self, other) -> AffineExpr:
        return _mod(self, as_expr(other))

    def __floordiv__(self, other) -> AffineExpr:
        return _floordiv(self, as_expr(other))

    def floordiv(self, other) -> AffineExpr:
        return _floordiv(self, as_expr(other))

    def ceildiv(self, other) -> AffineExpr:
        return _ceildiv(self, as_expr(other))

    def is_symbolic_or_constant(self) -> bool:
        """Whether no dimension appears in the expression (MLIR's isSymbolicOrConstant)."""
        raise NotImplementedError

    def largest_known_divisor(self) -> int:
        """The largest integer known to divide every value of the expression."""
        return 1

    def evaluate(self, dims: Sequence[int], symbols: Sequence[int] = ()) -> int:
        """The value for the given dimension and symbol values (floor and ceiling division
        round toward minus and plus infinity; `mod` has the sign of the divisor)."""
        raise NotImplementedError

    def _spelling(self) -> str:
        return self.text(False)

    def text(self, strong: bool) -> str:
        """The MLIR spelling; `strong`: inside a tightly binding operator (parenthesize)."""
        raise NotImplementedError


class AffineDimExpr(AffineExpr):
    """`d<position>`: a loop dimension."""

    __slots__ = ("position",)
    position: int

    def __new__(cls, position: int):
        return cls._intern(int(position))

    def is_symbolic_or_constant(self) -> bool:
        return False

    def evaluate(self, dims, symbols=()) -> int:
        return int(dims[self.position])

    def text(self, strong: bool) -> str:
        return f"d{self.position}"


class AffineSymbolExpr(AffineExpr):
    """`s<position>`: a value fixed for the whole map (a size, an offset)."""

    __slots__ = ("position",)
    position: int

    def __new__(cls, position: int):
        return cls._intern(int(position))

    def is_symbolic_or_constant(self) -> bool:
        return True

    def evaluate(self, dims, symbols=()) -> int:
        return int(symbols[self.position])

    def text(self, strong: bool) -> str:
        return f"s{self.position}"


class AffineConstantExpr(AffineExpr):
    """An integer constant."""

    __slots__ = ("value",)
    value: int

    def __new__(cls, value: int):
        return cls._intern(int(value))

    def is_symbolic_or_constant(self) -> bool:
        return True

    def largest_known_divisor(self) -> int:
        return abs(self.value)

    def evaluate(self, dims, symbols=()) -> int:
        return self.value

    def text(self, strong: bool) -> str:
        return str(self.value)


class AffineBinaryExpr(AffineExpr):
    """`lhs <kind> rhs`, kind one of add, mul, mod, floordiv, ceildiv. Build it with the
    operators, which simplify; the constructor takes the parts as they are."""

    __slots__ = ("kind", "lhs", "rhs")
    kind: str
    lhs: AffineExpr
    rhs: AffineExpr

    def __new__(cls, kind: str, lhs: AffineExpr, rhs: AffineExpr):
        if kind not in _SPELLING:
            raise ValueError(f"unknown affine operator {kind!r}")
        return cls._intern(kind, lhs, rhs)

    def is_symbolic_or_constant(self) -> bool:
        return self.lhs.is_symbolic_or_constant() and self.rhs.is_symbolic_or_constant()

    def largest_known_divisor(self) -> int:
        kind = self.kind
        if kind == MUL:
            return self.lhs.largest_known_divisor() * self.rhs.largest_known_divisor()
        if kind in (ADD, MOD):
            return gcd(self.lhs.largest_known_divisor(), self.rhs.largest_known_divisor())
        return 1

    def evaluate(self, dims, symbols=()) -> int:
        a = self.lhs.evaluate(dims, symbols)
        b = self.rhs.evaluate(dims, symbols)
        kind = self.kind
        if kind == ADD:
            return a + b
        if kind == MUL:
            return a * b
        if b == 0:
            raise ZeroDivisionError(f"{self} divides by zero at dims {tuple(dims)}")
        if kind == FLOORDIV:
            return a // b
        if kind == CEILDIV:
            return -(-a // b)
        return a % b

    def text(self, strong: bool) -> str:
        """AsmPrinter's printAffineExprInternal: `x * -1` as `-x`, `x + y * -c` as `x - y * c`,
        `x + -c` as `x - c`."""
        lhs, rhs, kind = self.lhs, self.rhs, self.kind
        if kind != ADD:
            if kind == MUL and _constant_value(rhs) == -1:
                body = "-" + lhs.text(True)
            else:
                body = lhs.text(True) + _SPELLING[kind] + rhs.text(True)
        elif isinstance(rhs, AffineBinaryExpr) and rhs.kind == MUL and _is_negative(rhs.rhs):
            factor = rhs.rhs.value
            if factor == -1:
                inner = rhs.lhs.text(isinstance(rhs.lhs, AffineBinaryExpr) and rhs.lhs.kind == ADD)
                body = f"{lhs.text(False)} - {inner}"
            else:
                body = f"{lhs.text(False)} - {rhs.lhs.text(True)} * {-factor}"
        elif _is_negative(rhs):
            body = f"{lhs.text(False)} - {-rhs.value}"
        else:
            body = f"{lhs.text(False)} + {rhs.text(False)}"
        return f"({body})" if strong else body


def dim(position: int) -> AffineDimExpr:
    return AffineDimExpr(position)


def symbol(position: int) -> AffineSymbolExpr:
    return AffineSymbolExpr(position)


def constant(value: int) -> AffineConstantExpr:
    return AffineConstantExpr(value)


def as_expr(value) -> AffineExpr:
    """`value` itself if an expression, a constant if an int."""
    if isinstance(value, AffineExpr):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return AffineConstantExpr(value)
    raise TypeError(f"expected an affine expression or an int, got {value!r}")


def _constant_value(e: AffineExpr) -> int | None:
    return e.value if isinstance(e, AffineConstantExpr) else None


def _is_negative(e: AffineExpr) -> bool:
    return isinstance(e, AffineConstantExpr) and e.value < 0


def _binary(e: AffineExpr, kind: str) -> AffineBinaryExpr | None:
    return e if isinstance(e, AffineBinaryExpr) and e.kind == kind else None


def _scaled(e: AffineExpr) -> tuple[AffineExpr, int]:
    """`e` as (x, c) with e = x * c (c = 1 unless `e` is a product by a constant)."""
    product = _binary(e, MUL)
    if product is not None and isinstance(product.rhs, AffineConstantExpr):
        return product.lhs, product.rhs.value
    return e, 1


# -- MLIR's simplifying constructors (simplifyAdd, simplifyMul, ... in AffineExpr.cpp)


def _add(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    a, b = _constant_value(lhs), _constant_value(rhs)
    if a is not None and b is not None:
        return constant(a + b)
    if a is not None or (lhs.is_symbolic_or_constant() and not rhs.is_symbolic_or_constant()):
        return _add(rhs, lhs)
    if b == 0:
        return lhs
    left = _binary(lhs, ADD)
    left_const = None if left is None else _constant_value(left.rhs)
    if left_const is not None and b is not None:
        return _add(left.lhs, constant(left_const + b))
    x, c1 = _scaled(lhs)
    y, c2 = _scaled(rhs)
    if x is y:
        return _mul_raw(x, constant(c1 + c2))
    if left_const is not None:
        return _add(_add(left.lhs, rhs), left.rhs)
    folded = _fold_mod(lhs, rhs)
    return folded if folded is not None else AffineBinaryExpr(ADD, lhs, rhs)


def _fold_mod(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr | None:
    """`e + (e floordiv q) * -q` (or `* q * -1`) is `e mod q`."""
    product = _binary(rhs, MUL)
    if product is None:
        return None
    inner = _binary(product.lhs, MUL)
    if _constant_value(product.rhs) == -1 and inner is not None:
        quotient = _binary(inner.lhs, FLOORDIV)
        if quotient is not None and quotient.rhs is inner.rhs and quotient.lhs is lhs:
            return _mod(lhs, inner.rhs)
    quotient = _binary(product.lhs, FLOORDIV)
    if quotient is None or quotient.lhs is not lhs:
        return None
    if quotient.rhs is _mul(product.rhs, constant(-1)):
        return _mod(lhs, quotient.rhs)
    return None


def _mul(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    a, b = _constant_value(lhs), _constant_value(rhs)
    if a is not None and b is not None:
        return constant(a * b)
    if not lhs.is_symbolic_or_constant() and not rhs.is_symbolic_or_constant():
        raise ValueError(
            "non-affine expression: at least one of the multiply operands has to be either "
            "a constant or symbolic"
        )
    if not rhs.is_symbolic_or_constant() or a is not None:
        return _mul(rhs, lhs)
    if b == 1:
        return lhs
    if b == 0:
        return rhs
    left = _binary(lhs, MUL)
    left_const = None if left is None else _constant_value(left.rhs)
    if left_const is not None and b is not None:
        return _mul(left.lhs, constant(left_const * b))
    if left_const is not None:
        return _mul(_mul(left.lhs, rhs), left.rhs)
    return AffineBinaryExpr(MUL, lhs, rhs)


def _mul_raw(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    """MLIR builds `(c1 + c2) * x` without simplifying it (so `x * 0` and `x * 1` remain)."""
    return AffineBinaryExpr(MUL, lhs, rhs)


def _check_divisor(rhs: AffineExpr, kind: str) -> int | None:
    if not rhs.is_symbolic_or_constant():
        raise ValueError(
            f"non-affine expression: right operand of {kind} has to be either a constant or "
            "symbolic"
        )
    b = _constant_value(rhs)
    return b if b is not None and b >= 1 else None


def _floordiv(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    b = _check_divisor(rhs, FLOORDIV)
    if b is None:
        return AffineBinaryExpr(FLOORDIV, lhs, rhs)
    a = _constant_value(lhs)
    if a is not None:
        return constant(a // b)
    if b == 1:
        return lhs
    left = _binary(lhs, MUL)
    if left is not None and isinstance(left.rhs, AffineConstantExpr) and left.rhs.value % b == 0:
        return _mul(left.lhs, constant(left.rhs.value // b))
    left = _binary(lhs, ADD)
    if left is not None and (
        left.lhs.largest_known_divisor() % b == 0 or left.rhs.largest_known_divisor() % b == 0
    ):
        return _add(_floordiv(left.lhs, rhs), _floordiv(left.rhs, rhs))
    return AffineBinaryExpr(FLOORDIV, lhs, rhs)


def _ceildiv(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    b = _check_divisor(rhs, CEILDIV)
    if b is None:
        return AffineBinaryExpr(CEILDIV, lhs, rhs)
    a = _constant_value(lhs)
    if a is not None:
        return constant(-(-a // b))
    if b == 1:
        return lhs
    left = _binary(lhs, MUL)
    if left is not None and isinstance(left.rhs, AffineConstantExpr) and left.rhs.value % b == 0:
        return _mul(left.lhs, constant(left.rhs.value // b))
    return AffineBinaryExpr(CEILDIV, lhs, rhs)


def _mod(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    b = _check_divisor(rhs, MOD)
    if b is None:
        return AffineBinaryExpr(MOD, lhs, rhs)
    a = _constant_value(lhs)
    if a is not None:
        return constant(a % b)
    if lhs.largest_known_divisor() % b == 0:
        return constant(0)
    left = _binary(lhs, ADD)
    if left is not None:
        if left.lhs.largest_known_divisor() % b == 0:
            return _mod(left.rhs, rhs)
        if left.rhs.largest_known_divisor() % b == 0:
            return _mod(left.lhs, rhs)
    left = _binary(lhs, MOD)
    inner = None if left is None else _constant_value(left.rhs)
    if inner is not None and inner >= 1 and inner % b == 0:
        return _mod(left.lhs, rhs)
    return AffineBinaryExpr(MOD, lhs, rhs)
