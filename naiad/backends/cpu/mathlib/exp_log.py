"""Exponentials and logarithms: exp, exp2, expm1, log, log2, log10, log1p.

exp: x = n*ln2 + r + r_lo by a Cody–Waite reduction (ln2 in two parts; x - n*ln2_hi is exact
inside an fma, and subtracting n*ln2_lo is a two-sum, so r_lo is its exact rounding error);
then e**r = 1 + r + r*r/2 + r**3 Q(r) on |r| <= ln2/2, with 1 + r and r*r/2 as exact pairs so
that only the sum is rounded, and a scaling by 2**n built from exponent bits, in two halves so
that subnormal results are rounded once and overflow gives inf. Inputs are clamped first to
where the result has already overflowed or underflowed, which keeps n in range. exp2 is
2**n * e**(r*ln2) with r = x - n exact and r*ln2 a double-word product; expm1 is
2**n * ((1 - 2**-n) + (e**r - 1)), the bracket summed the same way.

log: x = 2**e * m with m in [sqrt(1/2), sqrt(2)) from the bits (subnormals are scaled first),
f = m - 1 exactly, s = f/(2+f), and log(1+f) = 2 atanh(s) = f - f*f/2 + s*(f*f/2 + R(s*s)):
the leading f - f*f/2 is kept as an unevaluated sum hi + lo, so e*log_b(2) + (hi + lo)*log_b(e)
is summed with an exact two-sum and only rounded once at the end. log2 and log10 multiply the
pair by log_b(e) in double-word arithmetic, which is what keeps them within an ulp.

f32 exp and exp2 are not computed here but in single precision (exp_single.py: within 1.02 ulp,
at half the cost); their `_parts` forms, which pow, cosh, tanh and erfc build on, stay here.

Tested bounds (tests/backends/cpu/test_mathlib.py): exp exp2 expm1 log log2 log10 log1p within
1 ulp in f32 and f64 over their whole domains (measured at most 0.77, the worst in subnormal
results, which round twice).
"""

from __future__ import annotations

import math

from . import exp_single
from .constants import LN2, LOG2_E, LOG10_2, LOG10_E
from .poly import Emitter, float_bits, split_constant

# Minimax coefficients from fit.py, ascending. EXP: e**r = 1 + r + r*r/2 + r**3 EXP(r) on
# |r| <= ln2/2, fitted for the relative error of e**r - 1 (f32 2**-31.0, f64 2**-61.6), which
# bounds the error of e**r too.
EXP = {
    "f32": (0.16666666, 0.041666467, 0.008333644, 0.0013935058, 0.00019663597),
    "f64": (
        0.16666666666666677, 0.04166666666666664, 0.008333333333321246,
        0.0013888888888898578, 0.00019841269887430863, 2.480158730703892e-05,
        2.755724262533573e-06, 2.7557278344122037e-07, 2.510966910437135e-08,
        2.091683066378021e-09,
    ),
}  # fmt: skip
# R(z) = z*LOG(z) = 2 atanh(s)/s - 2, z = s*s <= 0.0295 (f32 2**-29.2, f64 2**-58.5).
LOG = {
    "f32": (0.66666776, 0.39977512, 0.29873988),
    "f64": (
        0.6666666666666735, 0.3999999999940859, 0.28571428743968097, 0.2222219839125288,
        0.18183574694765745, 0.1531376389365934, 0.14799017039173437,
    ),
}  # fmt: skip

# Inputs past which the result is already inf or 0 (or -1 for expm1) in every rounding: the
# clamps keep n within twice the exponent range, which `Emitter.ldexp` handles.
_EXP_LIMITS = {"f32": (-104.0, 89.0), "f64": (-746.0, 710.0)}
EXP2_LIMITS = {"f32": (-151.0, 129.0), "f64": (-1076.0, 1025.0)}
_EXPM1_LIMITS = {"f32": (-30.0, 89.0), "f64": (-60.0, 710.0)}

# log_b(2) (head with few bits, so e * head is exact) and log_b(e) (None for b = e).
_BASES = {"e": (LN2, None), "2": ("1", LOG2_E), "10": (LOG10_2, LOG10_E)}


def reduce_ln2(m: Emitter, x):
    """(n, r, r_lo): x = n*ln2 + r + r_lo with n integral (a float), |r| <= ln2/2 (about) and
    r_lo the rounding error of r. x - n*ln2_hi is exact inside the fma (the result is small and
    a multiple of ulp(ln2_hi)); subtracting n*ln2_lo is a two-sum."""
    ln2_hi, ln2_lo = split_constant(LN2, m.fmt, 2)
    n = m.rint(m.mul(x, float(LOG2_E)))
    head = m.fma(m.neg(n), ln2_hi, x)
    product = m.mul(n, ln2_lo)
    r = m.sub(head, product)
    return n, r, m.sub(m.sub(head, r), product)


def _expm1_pair(m: Emitter, head, r, extra=None):
    """(high, low) with high + low = head + (e**r - 1) + extra, for |r| <= ln2/2 and |head| >=
    |r| or head == 0: head + r is an exact pair and so is r*r/2; only the small r**3 terms are
    rounded before low is formed, so high + low rounds (nearly) once."""
    high, low = m.fast_two_sum(head, r)
    square, square_lo = m.two_prod(r, r)
    small = m.fma(m.mul(square, r), m.poly(r, EXP[m.fmt.kind]), m.mul(square_lo, 0.5))
    if extra is not None:
        small = m.add(small, extra)
    return high, m.add(m.add(low, m.mul(square, 0.5)), small)


def exp_small(m: Emitter, r, r_lo):
    """e**(r + r_lo) for |r| <= ln2/2 and |r_lo| up to an ulp of the unreduced argument (a
    caller's correction x_lo joins it): r_lo enters as r_lo * e**r."""
    high, low = _expm1_pair(m, m.c(1.0), r)
    return m.add(high, m.fma(r_lo, m.add(high, low), low))


def exp_parts(m: Emitter, x, x_lo=None):
    """(p, n): e**(x + x_lo) = p * 2**n with p near 1 and n an integer; x must be clamped
    (finite, |x| below about 1100) by the caller. `x_lo` is a small correction to x."""
    n, r, r_lo = reduce_ln2(m, x)
    if x_lo is not None:
        r_lo = m.add(r_lo, x_lo)
    return exp_small(m, r, r_lo), m.to_int(n)


def exp(m: Emitter, x):
    if m.fmt.kind == "f32":
        return exp_single.exp(m, x)
    p, n = exp_parts(m, m.clamp(x, *_EXP_LIMITS[m.fmt.kind]))
    return m.keep_nan(x, m.ldexp(p, n))


def exp2_parts(m: Emitter, x, x_lo=None):
    """(p, n): 2**(x + x_lo) = p * 2**n; x clamped by the caller. 2**x = 2**n * e**(r*ln2)
    with r = x - n exact and r*ln2 (+ x_lo*ln2) formed as a double-word pair."""
    n = m.rint(x)
    r = m.sub(x, n)
    ln2_hi, ln2_lo = split_constant(LN2, m.fmt, 2)
    t, t_lo = m.two_prod(r, ln2_hi)
    t_lo = m.fma(r, ln2_lo, t_lo)
    if x_lo is not None:
        t_lo = m.fma(x_lo, ln2_hi, t_lo)
    return exp_small(m, t, t_lo), m.to_int(n)


def exp2(m: Emitter, x):
    if m.fmt.kind == "f32":
        return exp_single.exp2(m, x)
    p, n = exp2_parts(m, m.clamp(x, *EXP2_LIMITS[m.fmt.kind]))
    return m.keep_nan(x, m.ldexp(p, n))


def expm1(m: Emitter, x):
    """2**n * ((1 - 2**-n) + e**r - 1): 1 - 2**-n is exact while |n| <= precision (beyond, its
    smaller term joins the tail), and the sum is rounded once before an exact scaling."""
    n, r, r_lo = reduce_ln2(m, m.clamp(x, *_EXPM1_LIMITS[m.fmt.kind]))
    ni = m.to_int(n)
    # 2**-n for n up to 100 only: beyond, it is far below an ulp (and leaves the normal range).
    power = m.pow2(m.b.neg(m.imin(ni, 100)))
    precision = m.fmt.precision
    exact = m.both(
        m.b.icmp_signed("<=", ni, m.ic(precision)), m.b.icmp_signed(">=", ni, m.ic(-precision))
    )
    positive = m.b.icmp_signed(">", ni, m.ic(0))
    head = m.select(exact, m.sub(1.0, power), m.select(positive, 1.0, m.neg(power)))
    extra = m.select(exact, 0.0, m.select(positive, m.neg(power), 1.0))
    high, low = _expm1_pair(m, head, r, extra)
    y = m.ldexp(m.add(high, m.add(low, m.fma(r_lo, r, r_lo))), ni)  # r_lo * (1 + r): it is tiny
    y = m.select(m.lt(m.abs(x), 2.0**-precision), x, y)  # keeps -0.0
    return m.keep_nan(x, y)


def decompose(m: Emitter, u, extra_exponent=None):
    """(e, f): u = 2**e * (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), f exact, for finite
    u > 0 (subnormals included); e is a float, plus `extra_exponent` when given."""
    fmt = m.fmt
    subnormal = m.lt(u, 2.0**fmt.min_exponent)
    scaled = m.select(subnormal, m.mul(u, 2.0**fmt.precision), u)
    sqrt_half = float_bits(math.sqrt(0.5), fmt)
    # Subtracting the bits of sqrt(1/2) puts the exponent boundary there: e = floor(log2(u/m)).
    offset = m.b.sub(m.bits(scaled), m.ic(sqrt_half))
    e = m.to_float(m.b.ashr(offset, m.ic(fmt.mant_bits)))
    mantissa_bits = m.b.and_(offset, m.ic((1 << fmt.mant_bits) - 1))
    mantissa = m.from_bits(m.b.add(mantissa_bits, m.ic(sqrt_half)))
    e = m.select(subnormal, m.sub(e, float(fmt.precision)), e)
    if extra_exponent is not None:
        e = m.add(e, extra_exponent)
    return e, m.sub(mantissa, 1.0)  # exact: the mantissa is within [1/2, 2]


def log_parts(m: Emitter, u, extra_exponent=None, correction=None):
    """(e, hi, lo): log(u) = e*ln2 + hi + lo for finite u > 0, hi + lo = log(m) with more than
    the type's precision. `extra_exponent` (a float) is added to e (log(2u) = log(u) + ln2
    without forming 2u); `correction` (small) is added to lo."""
    e, f = decompose(m, u, extra_exponent)
    s = m.div(f, m.add(f, 2.0))
    z = m.mul(s, s)
    r = m.mul(z, m.poly(z, LOG[m.fmt.kind]))
    half_f_sq = m.mul(m.mul(f, f), 0.5)
    hi = m.sub(f, half_f_sq)
    # (f - hi) - half_f_sq is the rounding error of hi, exactly (Sterbenz, then a two-sum).
    lo = m.add(m.sub(m.sub(f, hi), half_f_sq), m.mul(s, m.add(half_f_sq, r)))
    if correction is not None:
        lo = m.add(lo, correction)
    return e, hi, lo


def log_combine(m: Emitter, parts, base: str = "e"):
    """log_base(u) from `log_parts`: e*log_b(2) + (hi + lo)*log_b(e), rounded once."""
    e, hi, lo = parts
    log_2, log_e = _BASES[base]
    k_hi, k_lo = split_constant(log_2, m.fmt, 2, head_bits=m.fmt.precision - 12)
    scaled = m.mul(e, k_hi)  # exact: |e| < 2**11 and k_hi has precision - 12 bits
    if log_e is None:
        product_hi, product_lo = hi, lo
    else:
        c_hi, c_lo = split_constant(log_e, m.fmt, 2)
        product_hi, product_lo = m.two_prod(hi, c_hi)
        product_lo = m.add(product_lo, m.fma(lo, c_hi, m.mul(hi, c_lo)))
    # |scaled| >= log_b(2) > |product_hi| unless e == 0: the fast two-sum is exact.
    total, error = m.fast_two_sum(scaled, product_hi)
    tail = m.add(error, m.add(product_lo, m.mul(e, k_lo)))
    return m.add(total, tail)


def log_special(m: Emitter, x, y, zero_at: float = 0.0):
    """libm's special values of a logarithm whose pole is at `zero_at`: -inf there, NaN below
    it (and for NaN), +inf at +inf."""
    y = m.select(m.eq(x, math.inf), math.inf, y)
    y = m.select(m.eq(x, zero_at), -math.inf, y)
    return m.nan_if(m.b.fcmp_unordered("<", x, m.c(zero_at)), y)


def log1p_input(m: Emitter, x):
    """(u, c): 1 + x = u + c*u to first order, u = fl(1 + x), c from the exact rounding error
    of that sum (a fast two-sum with the larger operand first)."""
    u = m.add(x, 1.0)
    error = m.select(m.gt(x, 1.0), m.sub(1.0, m.sub(u, x)), m.sub(x, m.sub(u, 1.0)))
    return u, m.div(error, u)


def _log_base(base: str):
    def emit(m: Emitter, x):
        return log_special(m, x, log_combine(m, log_parts(m, x), base))

    emit.__name__ = f"log_{base}"
    return emit


log = _log_base("e")
log2 = _log_base("2")
log10 = _log_base("10")


def log1p(m: Emitter, x):
    u, c = log1p_input(m, x)
    y = log_combine(m, log_parts(m, u, correction=c))
    y = m.select(m.lt(m.abs(x), 2.0**-m.fmt.precision), x, y)  # keeps -0.0
    return log_special(m, x, y, zero_at=-1.0)


FUNCTIONS = {
    "exp": exp,
    "exp2": exp2,
    "expm1": expm1,
    "log": log,
    "log2": log2,
    "log10": log10,
    "log1p": log1p,
}
