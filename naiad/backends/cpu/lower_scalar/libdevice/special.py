"""libdevice's special functions on the CPU: computed in fp64 as the interpreter's libdevice
computes them (runtime/interpreter/libdevice/: elementary.py, special.py, bessel.py), the fp32
symbols on their arguments widened and the result rounded once, as there.

- From the C library the process has (loader.py resolves these names): exp10, hypot,
  remainder, ldexp, pow (powi), lgamma, tgamma, erf, erfc, and the Bessel functions j0 j1 jn y0
  y1 yn. A call is not widened by the loop vectorizer; these are rare in kernels.
- Written here, with the interpreter's formulas: sinpi / cospi (exact reduction to a quarter
  turn), norm3d / norm4d (scaled by the largest magnitude) and their reciprocals, rcbrt,
  frsqrt_rn (correctly rounded, by the midpoints around the fp64 estimate), rcp64h (the bits
  of an approximate reciprocal), erfcx / erfinv / erfcinv / normcdf / normcdfinv (specialerf.py),
  cyl_bessel_i0 / i1 (specialerf.py).

Accuracy: within a few ulps of the interpreter's reference where the C library's functions are
(glibc's are within a few ulps of the exact values); relative errors of Bessel functions grow
next to their zeros, on every implementation.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ..floats import call_intrinsic
from ..math_ops import call_math
from ..registry import intrinsic
from ..types import F32, F64, I32, I64
from .table import SYMBOLS, flush


def _c(value, ty=F64):
    return ir.Constant(ty, value)


def libm(b, ctx, name: str, *args, result=F64):
    """A call of the C library's `name` (fp64; int arguments as they are)."""
    return b.call(intrinsic(ctx.module, name, result, [a.type for a in args]), list(args))


def wide(fn):
    """An implementation on fp64 arguments: fp32 ones are widened and the result rounded."""

    def implementation(b, ctx, op, args):
        narrow = any(a.type == F32 for a in args)
        widened = [b.fpext(a, F64) if a.type == F32 else a for a in args]
        result = fn(b, ctx, *widened)
        return b.fptrunc(result, F32) if narrow and result.type == F64 else result

    return implementation


def both(stem: str, fn) -> None:
    SYMBOLS[f"__nv_{stem}f"] = SYMBOLS[f"__nv_{stem}"] = wide(fn)


def _from_c(name: str):
    return lambda b, ctx, *args: libm(b, ctx, name, *args)


for _stem in ("exp10", "hypot", "remainder", "lgamma", "tgamma", "j0", "j1", "y0", "y1"):
    both(_stem, _from_c(_stem))
SYMBOLS["__nv_fast_exp10f"] = SYMBOLS["__nv_exp10f"]
for _stem in ("jn", "yn"):  # (int n, x)
    both(_stem, lambda b, ctx, n, x, name=_stem: libm(b, ctx, name, n, x))


def _ldexp(b, ctx, x, n):
    return libm(b, ctx, "ldexp", x, n)


both("ldexp", _ldexp)
both("scalbn", _ldexp)
both("powi", lambda b, ctx, x, n: libm(b, ctx, "pow", x, b.sitofp(n, F64)))
both("rhypot", lambda b, ctx, x, y: b.fdiv(_c(1.0), libm(b, ctx, "hypot", x, y)))
both("rcbrt", lambda b, ctx, x: b.fdiv(_c(1.0), call_math(b, ctx, "cbrt", [x])))


# -- sin(pi x), cos(pi x) --------------------------------------------------------------------------
def _pi_scaled(b, ctx, x, cosine: bool):
    """x reduced exactly to r in [-1/4, 1/4] and a number of quarter turns; pi r rounded once."""
    reduced = b.frem(x, _c(2.0))
    quarters = call_intrinsic(b, ctx, "roundeven", b.fmul(reduced, _c(2.0)))
    r = b.fsub(reduced, b.fmul(quarters, _c(0.5)))
    turn = b.frem(b.fadd(quarters, _c(5.0 if cosine else 4.0)), _c(4.0))  # in [0, 4)
    angle = b.fmul(_c(math.pi), r)
    s, c = libm(b, ctx, "sin", angle), libm(b, ctx, "cos", angle)
    value = b.select(b.fcmp_ordered("==", turn, _c(0.0)), s, b.fneg(c))
    value = b.select(b.fcmp_ordered("==", turn, _c(1.0)), c, value)
    value = b.select(b.fcmp_ordered("==", turn, _c(2.0)), b.fneg(s), value)
    zero = _c(0.0) if cosine else call_intrinsic(b, ctx, "copysign", _c(0.0), x)
    value = b.select(b.fcmp_ordered("==", value, _c(0.0)), zero, value)
    finite = b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", x), _c(math.inf))
    return b.select(finite, value, _c(math.nan))


both("sinpi", lambda b, ctx, x: _pi_scaled(b, ctx, x, False))
both("cospi", lambda b, ctx, x: _pi_scaled(b, ctx, x, True))


# -- norms -----------------------------------------------------------------------------------------
def _norm(b, ctx, *xs):
    """sqrt(sum of squares) scaled by the largest magnitude; inf if any is infinite, else NaN
    if any is NaN."""
    magnitudes = [call_intrinsic(b, ctx, "fabs", x) for x in xs]
    largest = magnitudes[0]
    for m in magnitudes[1:]:
        largest = call_intrinsic(b, ctx, "maxnum", largest, m)
    plain = b.or_(
        b.fcmp_ordered("==", largest, _c(0.0)), b.fcmp_unordered(">=", largest, _c(math.inf))
    )
    scale = b.select(plain, _c(1.0), largest)
    total = None
    for m in magnitudes:
        q = b.fdiv(m, scale)
        total = b.fmul(q, q) if total is None else b.fadd(total, b.fmul(q, q))
    result = b.fmul(scale, call_intrinsic(b, ctx, "sqrt", total))
    any_nan = any_inf = _c(0, ir.IntType(1))
    for m in magnitudes:
        any_nan = b.or_(any_nan, b.fcmp_unordered("uno", m, m))
        any_inf = b.or_(any_inf, b.fcmp_ordered("==", m, _c(math.inf)))
    result = b.select(any_nan, _c(math.nan), result)
    return b.select(any_inf, _c(math.inf), result)


both("norm3d", _norm)
both("norm4d", _norm)
both("rnorm3d", lambda b, ctx, *xs: b.fdiv(_c(1.0), _norm(b, ctx, *xs)))
both("rnorm4d", lambda b, ctx, *xs: b.fdiv(_c(1.0), _norm(b, ctx, *xs)))


# -- frsqrt_rn and rcp64h --------------------------------------------------------------------------
def _frsqrt_rn(b, ctx, op, args):
    """1 / sqrt(x) for fp32, correctly rounded: the fp64 estimate g rounded to fp32 is within an
    ulp; the exact result lies below the midpoint m of two neighbours iff m * m * x > 1, and
    m * m is exact in fp64 (25-bit m), so one fused multiply-add decides."""
    x = flush(b, ctx, args[0])
    x64 = b.fpext(x, F64)
    guess = b.fptrunc(b.fdiv(_c(1.0), call_intrinsic(b, ctx, "sqrt", x64)), F32)
    bits = b.bitcast(guess, I32)
    below = b.bitcast(b.sub(bits, _c(1, I32)), F32)
    above = b.bitcast(b.add(bits, _c(1, I32)), F32)

    def side(low, high):
        """sign of (m * m * x - 1) for the midpoint m of low and high, as a float."""
        m = b.fmul(b.fadd(b.fpext(low, F64), b.fpext(high, F64)), _c(0.5))
        return call_intrinsic(b, ctx, "fma", b.fmul(m, m), x64, _c(-1.0))

    def even(v):
        return b.icmp_unsigned("==", b.and_(b.bitcast(v, I32), _c(1, I32)), _c(0, I32))

    lower, upper = side(below, guess), side(guess, above)
    down = b.or_(
        b.fcmp_ordered(">", lower, _c(0.0)),
        b.and_(b.fcmp_ordered("==", lower, _c(0.0)), even(below)),
    )
    up = b.or_(
        b.fcmp_ordered("<", upper, _c(0.0)),
        b.and_(b.fcmp_ordered("==", upper, _c(0.0)), even(above)),
    )
    result = b.select(down, below, b.select(up, above, guess))
    ordinary = b.and_(
        b.fcmp_ordered(">", x, _c(0.0, F32)), b.fcmp_ordered("<", x, _c(math.inf, F32))
    )
    return flush(b, ctx, b.select(ordinary, result, guess))


SYMBOLS["__nv_frsqrt_rn"] = _frsqrt_rn


def _rcp64h(b, ctx, op, args):
    """1 / x from the high 32 bits of x, answered in the high 32 bits; subnormals flushed."""
    mask = _c(0xFFFFFFFF00000000, I64)

    def high_part(v):
        kept = b.bitcast(b.and_(b.bitcast(v, I64), mask), F64)
        tiny = b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", kept), _c(2.0**-1022))
        return b.select(tiny, call_intrinsic(b, ctx, "copysign", _c(0.0), v), kept)

    return high_part(b.fdiv(_c(1.0), high_part(args[0])))


SYMBOLS["__nv_rcp64h"] = _rcp64h
