"""The error-function family and the modified Bessel functions I0, I1 on the CPU, in fp64 by the
interpreter's own methods (runtime/interpreter/libdevice/special.py and bessel.py say why each
is accurate), on the C library's erf, erfc, exp and log:

- erfcx(x) = exp(x*x) (1 + err) erfc(x), x*x = square + err exactly; from x = 10 on the
  continued fraction of erfc, unrolled from its 40th term.
- erfinv: Newton's method on erf from the Maclaurin series for |x| <= 1/2; beyond it, and for
  erfcinv, Newton's method on log(erfcx(y)) - y*y = log(z) from y = sqrt(-log z).
- normcdf(x) = erfc(-x / sqrt(2)) / 2, the rounding of -x / sqrt(2) applied through erfc's
  derivative; normcdfinv(p) = -sqrt(2) erfcinv(2p).
- I0, I1: the power series to |x| = 30 (90 terms, all positive), Hankel's expansion beyond
  with exp(x) applied in two halves.

Every branch is computed and the answer selected, as the interpreter selects with np.where.
"""

from __future__ import annotations

import decimal
import math

from llvmlite import ir

from ..floats import call_intrinsic
from ..types import F64
from .special import both, libm

SQRT_PI = math.sqrt(math.pi)
_INV_SQRT2 = math.sqrt(0.5)
with decimal.localcontext() as _ctx:
    _ctx.prec = 50
    _INV_SQRT2_LO = float(decimal.Decimal(2).sqrt() / 2 - decimal.Decimal(_INV_SQRT2))


def _c(value):
    return ir.Constant(F64, value)


def _select(b, cond, a, c):
    return b.select(cond, a, c)


def _lt(b, x, v):
    return b.fcmp_ordered("<", x, _c(v))


def _le(b, x, v):
    return b.fcmp_ordered("<=", x, _c(v))


def _eq(b, x, v):
    return b.fcmp_ordered("==", x, _c(v))


def erfcx(b, ctx, x):
    square = b.fmul(x, x)
    square_err = call_intrinsic(b, ctx, "fma", x, x, b.fneg(square))
    finite = b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", square), _c(math.inf))
    square_err = _select(b, finite, square_err, _c(0.0))
    direct = b.fmul(libm(b, ctx, "exp", square), b.fadd(_c(1.0), square_err))
    direct = b.fmul(direct, libm(b, ctx, "erfc", x))
    far = b.fcmp_ordered(">=", x, _c(10.0))
    xf = _select(b, far, x, _c(10.0))
    t = xf
    for k in range(40, 0, -1):
        t = b.fadd(xf, b.fdiv(_c(k / 2), t))
    return _select(b, far, b.fdiv(_c(1.0), b.fmul(_c(SQRT_PI), t)), direct)


def _erfinv_central(b, ctx, x):
    c = b.fmul(_c(SQRT_PI / 2), x)
    c2 = b.fmul(c, c)
    inner = b.fadd(_c(7 / 30), b.fmul(c2, _c(127 / 630)))
    inner = b.fadd(_c(1 / 3), b.fmul(c2, inner))
    y = b.fmul(c, b.fadd(_c(1.0), b.fmul(c2, inner)))
    for _ in range(4):
        error = b.fsub(libm(b, ctx, "erf", y), x)
        slope = b.fmul(_c(SQRT_PI / 2), libm(b, ctx, "exp", b.fmul(y, y)))
        y = b.fsub(y, b.fmul(error, slope))
    return y


def _erfcinv_tail(b, ctx, z):
    """The y >= 0 with erfc(y) = z, for 0 < z <= 1/2."""
    log_z = libm(b, ctx, "log", z)
    y = call_intrinsic(b, ctx, "sqrt", b.fneg(log_z))
    for _ in range(8):
        scaled = erfcx(b, ctx, y)
        gap = b.fsub(b.fsub(libm(b, ctx, "log", scaled), b.fmul(y, y)), log_z)
        y = b.fadd(y, b.fmul(b.fmul(gap, scaled), _c(SQRT_PI / 2)))
    return y


def erfinv(b, ctx, x):
    a = call_intrinsic(b, ctx, "fabs", x)
    central = _le(b, a, 0.5)
    inner = _erfinv_central(b, ctx, _select(b, central, x, _c(0.0)))
    use_half = b.or_(central, b.fcmp_ordered(">=", a, _c(1.0)))
    tail = _erfcinv_tail(b, ctx, _select(b, use_half, _c(0.5), b.fsub(_c(1.0), a)))
    y = _select(b, central, inner, call_intrinsic(b, ctx, "copysign", tail, x))
    y = _select(b, _eq(b, a, 1.0), call_intrinsic(b, ctx, "copysign", _c(math.inf), x), y)
    invalid = b.fcmp_unordered(">", a, _c(1.0))
    return _select(b, invalid, _c(math.nan), y)


def erfcinv(b, ctx, z):
    low = b.and_(b.fcmp_ordered(">", z, _c(0.0)), _le(b, z, 0.5))
    high = b.and_(b.fcmp_ordered(">=", z, _c(1.5)), _lt(b, z, 2.0))
    central = b.and_(b.fcmp_ordered(">", z, _c(0.5)), _lt(b, z, 1.5))
    inner = _erfinv_central(b, ctx, _select(b, central, b.fsub(_c(1.0), z), _c(0.0)))
    y = _select(b, central, inner, _c(0.0))
    y = _select(b, low, _erfcinv_tail(b, ctx, _select(b, low, z, _c(0.5))), y)
    upper = _erfcinv_tail(b, ctx, _select(b, high, b.fsub(_c(2.0), z), _c(0.5)))
    y = _select(b, high, b.fneg(upper), y)
    y = _select(b, _eq(b, z, 0.0), _c(math.inf), _select(b, _eq(b, z, 2.0), _c(-math.inf), y))
    invalid = b.or_(b.fcmp_unordered("<", z, _c(0.0)), b.fcmp_ordered(">", z, _c(2.0)))
    return _select(b, invalid, _c(math.nan), y)


def normcdf(b, ctx, x):
    minus = b.fneg(x)
    u = b.fmul(minus, _c(_INV_SQRT2))
    u_err = call_intrinsic(b, ctx, "fma", minus, _c(_INV_SQRT2), b.fneg(u))
    finite = b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", x), _c(math.inf))
    u_lo = _select(b, finite, b.fsub(u_err, b.fmul(x, _c(_INV_SQRT2_LO))), _c(0.0))
    slope = b.fdiv(_c(2.0), b.fmul(_c(SQRT_PI), erfcx(b, ctx, u)))
    correction = b.fsub(_c(1.0), b.fmul(u_lo, slope))
    usable = b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", correction), _c(math.inf))
    correction = _select(b, usable, correction, _c(1.0))
    return b.fmul(b.fmul(_c(0.5), libm(b, ctx, "erfc", u)), correction)


def normcdfinv(b, ctx, p):
    return b.fmul(_c(-math.sqrt(2.0)), erfcinv(b, ctx, b.fmul(_c(2.0), p)))


def modified_bessel(order: int):
    """I0 or I1."""

    def implementation(b, ctx, x):
        a = call_intrinsic(b, ctx, "fabs", x)
        near = _le(b, a, 30.0)
        half = b.fmul(_select(b, near, a, _c(0.0)), _c(0.5))
        quarter_square = b.fmul(half, half)
        term = half if order else _c(1.0)
        total = term
        for k in range(1, 91):
            term = b.fdiv(b.fmul(term, quarter_square), _c(float(k * (k + order))))
            total = b.fadd(total, term)
        far = _select(b, near, _c(60.0), a)
        mu = 4.0 * order * order
        step, expansion = _c(1.0), _c(1.0)
        for k in range(1, 30):
            numerator = b.fmul(b.fneg(step), _c(mu - (2 * k - 1) ** 2))
            step = b.fdiv(numerator, b.fmul(_c(8.0 * k), far))
            expansion = b.fadd(expansion, step)
        growth = libm(b, ctx, "exp", b.fmul(far, _c(0.5)))
        root = call_intrinsic(b, ctx, "sqrt", b.fmul(_c(2 * math.pi), far))
        asymptotic = b.fmul(growth, b.fdiv(b.fmul(growth, expansion), root))
        infinite = _eq(b, a, math.inf)
        result = _select(b, near, total, _select(b, infinite, _c(math.inf), asymptotic))
        if order == 1:
            negative = b.icmp_signed(
                "<", b.bitcast(x, ir.IntType(64)), ir.Constant(ir.IntType(64), 0)
            )
            result = _select(b, negative, b.fneg(result), result)
        return result

    return implementation


both("erfcx", erfcx)
both("erfinv", erfinv)
both("erfcinv", erfcinv)
both("normcdf", normcdf)
both("normcdfinv", normcdfinv)
both("cyl_bessel_i0", modified_bessel(0))
both("cyl_bessel_i1", modified_bessel(1))
