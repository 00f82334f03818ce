"""The emitter every math function is written with: float arithmetic, bit tricks and polynomials.

The library's functions must stay branch-free so that, once inlined into a loop, the loop
vectorizer widens them: every choice is a `select`, every call is an LLVM intrinsic that has a
vector form (fma, fabs, floor, rint, ...), and integer views of a float go through `bitcast`.
`Emitter` wraps an `llvmlite.ir.IRBuilder` for one float type and gives those pieces names, so the
algorithms in the family modules read as formulas and are written once for f32 and f64.

No instruction carries fast-math flags: the results must keep IEEE semantics (NaN, infinities,
signed zeros) and every fused multiply-add is written explicitly.
"""

from __future__ import annotations

import functools
import math
import struct
from decimal import Decimal
from fractions import Fraction

from llvmlite import ir

from ....ir.float_format import FLOAT_FORMATS, FloatFormat

F32 = FLOAT_FORMATS["f32"]
F64 = FLOAT_FORMATS["f64"]


def float_format(float_type: ir.Type) -> FloatFormat:
    """The format of `ir.FloatType()` or `ir.DoubleType()`; other types are refused."""
    if isinstance(float_type, ir.FloatType):
        return F32
    if isinstance(float_type, ir.DoubleType):
        return F64
    raise TypeError(f"the math library covers float and double, not {float_type}")


def round_to_bits(value: Fraction, bits: int) -> Fraction:
    """`value` rounded to nearest (ties to even) with `bits` significant bits."""
    if value == 0:
        return Fraction(0)
    exponent = math.floor(math.log2(abs(value)))
    # log2 of a Fraction goes through float; correct an off-by-one at exact powers of two.
    while abs(value) >= Fraction(2) ** (exponent + 1):
        exponent += 1
    while abs(value) < Fraction(2) ** exponent:
        exponent -= 1
    unit = Fraction(2) ** (exponent - bits + 1)
    return round(value / unit) * unit


def float_bits(value: float, fmt: FloatFormat) -> int:
    """The bit pattern of `value` rounded to `fmt`, as a non-negative integer."""
    float_code, int_code = ("<f", "<I") if fmt.width == 32 else ("<d", "<Q")
    return struct.unpack(int_code, struct.pack(float_code, value))[0]


@functools.cache
def split_constant(decimal: str, fmt: FloatFormat, parts: int, head_bits: int = 0) -> tuple:
    """An exact-enough constant as `parts` floats of `fmt` whose sum approximates it.

    `decimal` carries enough digits (50 give about 166 bits). With `head_bits`, every part but
    the last keeps only that many significant bits, so that its product with a small integer is
    exact (the Cody–Waite form); otherwise each part is the full-precision rounding of what is
    left, which suits products taken inside a fused multiply-add.
    """
    rest = Fraction(Decimal(decimal))
    values = []
    for index in range(parts):
        last = index == parts - 1
        bits = fmt.precision if last or not head_bits else head_bits
        part = round_to_bits(rest, bits)
        values.append(float(part))
        rest -= part
    return tuple(values)


class Emitter:
    """Branch-free float code for one float type at the builder's insertion point.

    `vector_ldexp`: the target scales by powers of two in one vector instruction (AVX-512's
    vscalef, which LLVM selects for `llvm.ldexp`); elsewhere `llvm.ldexp` becomes a call of the
    C library per element, so `ldexp` multiplies instead. Both round once: the same bits.
    """

    def __init__(self, builder: ir.IRBuilder, float_type: ir.Type, vector_ldexp: bool = False):
        self.b = builder
        self.ty = float_type
        self.fmt = float_format(float_type)
        self.ity = ir.IntType(self.fmt.width)
        self.i32 = ir.IntType(32)
        self.vector_ldexp = vector_ldexp

    @property
    def module(self) -> ir.Module:
        return self.b.module

    def retyped(self, float_type: ir.Type) -> Emitter:
        """An emitter for another float type writing at the same place (f32 work done in f64)."""
        return Emitter(self.b, float_type, self.vector_ldexp)

    # -- constants and arithmetic -------------------------------------------------------------

    def c(self, value: float) -> ir.Constant:
        """A float constant (rounded to nearest when the type is f32)."""
        return ir.Constant(self.ty, value)

    def ic(self, value: int) -> ir.Constant:
        """An integer constant of the float type's width."""
        return ir.Constant(self.ity, value)

    def _value(self, x):
        return self.c(x) if isinstance(x, (int, float)) else x

    def add(self, x, y):
        return self.b.fadd(self._value(x), self._value(y))

    def sub(self, x, y):
        return self.b.fsub(self._value(x), self._value(y))

    def mul(self, x, y):
        return self.b.fmul(self._value(x), self._value(y))

    def div(self, x, y):
        return self.b.fdiv(self._value(x), self._value(y))

    def neg(self, x):
        return self.b.fneg(x)

    def intrinsic(self, name: str, *args):
        """Call `llvm.<name>` on float arguments of this type (declared once per module)."""
        full = f"llvm.{name}.{self.ty.intrinsic_name}"
        function = self.module.globals.get(full)
        if function is None:
            function = ir.Function(
                self.module, ir.FunctionType(self.ty, [self.ty] * len(args)), name=full
            )
        return self.b.call(function, [self._value(a) for a in args])

    def fma(self, x, y, z):
        """`x * y + z` with one rounding."""
        return self.intrinsic("fma", x, y, z)

    def abs(self, x):
        return self.intrinsic("fabs", x)

    def copysign(self, magnitude, sign):
        return self.intrinsic("copysign", magnitude, sign)

    def trunc(self, x):
        return self.intrinsic("trunc", x)

    def floor(self, x):
        return self.intrinsic("floor", x)

    def rint(self, x):
        """Round to the nearest integer, ties to even (the default rounding mode)."""
        return self.intrinsic("rint", x)

    def sqrt(self, x):
        return self.intrinsic("sqrt", x)

    # -- comparisons and selection ------------------------------------------------------------

    def lt(self, x, y):
        return self.b.fcmp_ordered("<", self._value(x), self._value(y))

    def gt(self, x, y):
        return self.b.fcmp_ordered(">", self._value(x), self._value(y))

    def eq(self, x, y):
        return self.b.fcmp_ordered("==", self._value(x), self._value(y))

    def is_nan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def is_finite(self, x):
        """True for every value but ±inf and NaN."""
        return self.lt(self.abs(x), math.inf)

    def select(self, condition, x, y):
        return self.b.select(condition, self._value(x), self._value(y))

    def either(self, p, q):
        return self.b.or_(p, q)

    def both(self, p, q):
        return self.b.and_(p, q)

    def clamp(self, x, lo: float, hi: float):
        """`x` limited to [lo, hi]; NaN becomes `lo`, so that the integer work after it stays
        defined (the caller restores NaN at the end)."""
        above_lo = self.select(self.gt(x, lo), x, lo)
        return self.select(self.gt(above_lo, hi), hi, above_lo)

    def nan_if(self, condition, x):
        """NaN where `condition` holds, `x` elsewhere."""
        return self.select(condition, math.nan, x)

    def keep_nan(self, x, result):
        """`result`, except NaN where the input `x` is NaN."""
        return self.select(self.is_nan(x), x, result)

    # -- bit views ----------------------------------------------------------------------------

    def bits(self, x):
        """The float's bits as a signed integer of the same width."""
        return self.b.bitcast(x, self.ity)

    def from_bits(self, i):
        return self.b.bitcast(i, self.ty)

    def sign_bit_set(self, x):
        """True for negative values, -0.0 and NaNs with the sign bit."""
        return self.b.icmp_signed("<", self.bits(x), self.ic(0))

    def to_int(self, x):
        """An integral float (|x| < 2**31) as an integer of the float's width.

        Converting to i32 first keeps f64 vectorizable on AVX2, which has no packed f64 -> i64.
        """
        small = self.b.fptosi(x, self.i32)
        return small if self.fmt.width == 32 else self.b.sext(small, self.ity)

    def to_float(self, i):
        """An integer of the float's width (|i| < 2**31) as a float, through i32 for the same
        reason as `to_int`."""
        small = i if self.fmt.width == 32 else self.b.trunc(i, self.i32)
        return self.b.sitofp(small, self.ty)

    def imin(self, i, limit: int):
        return self.b.select(self.b.icmp_signed(">", i, self.ic(limit)), self.ic(limit), i)

    def pow2(self, n):
        """2**n as a float, for an integer `n` in the normal exponent range, by building the
        exponent field directly."""
        biased = self.b.add(n, self.ic(self.fmt.bias))
        return self.from_bits(self.b.shl(biased, self.ic(self.fmt.mant_bits)))

    def ldexp(self, x, n):
        """x * 2**n for |n| up to twice the exponent range, with one rounding (into the
        subnormals or to infinity) at the very end: 2**n is applied as two normal powers, or
        by `llvm.ldexp` where the target has a vector instruction for it."""
        if self.vector_ldexp:
            name = f"llvm.ldexp.{self.ty.intrinsic_name}.i32"
            function = self.module.globals.get(name)
            if function is None:
                signature = ir.FunctionType(self.ty, [self.ty, self.i32])
                function = ir.Function(self.module, signature, name=name)
            exponent = n if self.fmt.width == 32 else self.b.trunc(n, self.i32)
            return self.b.call(function, [x, exponent])
        half = self.b.ashr(n, self.ic(1))
        rest = self.b.sub(n, half)
        return self.mul(self.mul(x, self.pow2(half)), self.pow2(rest))

    # -- polynomials and exact transformations ------------------------------------------------

    def poly(self, x, coefficients):
        """c0 + c1*x + c2*x**2 + ... by Horner's rule with fused multiply-adds.

        Horner rather than Estrin even for the long f64 polynomials: its error stays near half
        an ulp of the result (Estrin's pairing measured up to 5 ulp in erfc's polynomial), and
        in a vectorized loop independent iterations hide the latency of the chain."""
        *rest, last = coefficients
        acc = self.c(last)
        for coefficient in reversed(rest):
            acc = self.fma(acc, x, coefficient)
        return acc

    def two_prod(self, x, y):
        """(p, e) with p = fl(x*y) and p + e = x*y exactly (fma gives the rounding error)."""
        p = self.mul(x, y)
        return p, self.fma(x, y, self.neg(p))

    def two_sum(self, x, y):
        """(s, e) with s = fl(x+y) and s + e = x + y exactly, whatever the magnitudes."""
        s = self.add(x, y)
        y_part = self.sub(s, x)
        return s, self.add(self.sub(x, self.sub(s, y_part)), self.sub(y, y_part))

    def fast_two_sum(self, x, y):
        """(s, e) with s = fl(x+y) and s + e = x + y exactly, given |x| >= |y| or x == 0."""
        s = self.add(x, y)
        return s, self.add(self.sub(x, s), y)
