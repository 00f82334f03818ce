"""Powers: pow, cbrt, rsqrt.

pow(x, y) = 2**(y * log2|x|), in f64 for both types. The product y * log2|x| can reach 1075 in
magnitude, so log2|x| must be accurate to about 2**-64 relative for the result to be within an
ulp: it is computed as a double-word pair from 2 atanh(s) = 2s + 2s**3/3 + s**5 P(s*s), with s
= f/(2 + f) and s**3 carried in double-word arithmetic, then multiplied by log2(e) in
double-word. The product with y is a pair too, and exp2 takes its low part. f32 pow rounds the
f64 result once. The libm special cases (C99 Annex F: pow(x, ±0) = 1, pow(1, y) = 1, signed
zeros and infinities by the parity of y, NaN for a negative finite x and a non-integer y) are
selects around the general formula.

cbrt: |x| = 2**(3q + r) * m; an initial polynomial for the cube root of m * 2**r in [1, 8),
Newton steps, and a last step whose residual m - y**3 is computed exactly with fused
multiply-adds; then the exponent q is put back by bits. rsqrt is 1/sqrt(x): a correctly rounded
square root and one division.

Tested bounds (f32 and f64): pow and cbrt within 1 ulp (measured 0.66 and 0.5), rsqrt within 2
(two roundings, measured 1.5).
"""

from __future__ import annotations

import math

from llvmlite import ir

from . import exp_log
from .constants import LOG2_E
from .poly import Emitter, split_constant

# From fit.py, ascending. 2 atanh(s) = 2s + 2s**3/3 + s**5 LOG_TAIL(s*s), s*s <= 0.0295,
# relative error of the s**5 term 2**-65.3.
LOG_TAIL = (
    0.4000000000000229, 0.28571428570082813, 0.22222222523054008, 0.18181784081855215,
    0.15386770954370738, 0.1325649008204349, 0.13199460206331415,
)  # fmt: skip
# The cube root on [1, 8], relative error 2**-10.5: the start of the Newton steps.
CBRT = {
    "f32": (0.58710665, 0.52617216, -0.13454051, 0.024185842, -0.0023085186, 8.813653e-05),
    "f64": (
        0.587106629942872, 0.5261722095919094, -0.13454053558216647, 0.02418584145091713,
        -0.002308517714960177, 8.813645130821477e-05,
    ),
}  # fmt: skip
_TWO_THIRDS = "0.66666666666666666666666666666666666666666666666667"


def _log2_pair(d: Emitter, a):
    """(hi, lo) = log2(a) for finite a > 0 in f64, relative error about 2**-64."""
    e, f = exp_log.decompose(d, a)
    u, u_lo = d.fast_two_sum(d.c(2.0), f)
    s = d.div(f, u)
    s_lo = d.div(d.sub(d.fma(d.neg(s), u, f), d.mul(s, u_lo)), u)
    # s**3 as a pair (z = s*s first), then times 2/3 as a pair.
    z, z_lo = d.two_prod(s, s)
    z_lo = d.fma(d.add(s, s), s_lo, z_lo)
    cube, cube_lo = d.two_prod(z, s)
    cube_lo = d.add(cube_lo, d.fma(z_lo, s, d.mul(z, s_lo)))
    third_hi, third_lo = split_constant(_TWO_THIRDS, d.fmt, 2)
    term, term_lo = d.two_prod(cube, third_hi)
    term_lo = d.add(term_lo, d.fma(cube_lo, third_hi, d.mul(cube, third_lo)))
    fifth = d.mul(d.mul(cube, z), d.poly(z, LOG_TAIL))
    # log(1 + f) = 2s + term + fifth, decreasing terms, summed as normalized pairs: exp2 takes
    # the low part of y * log2|x| to first order only, so it must be below an ulp of the high.
    small, small_lo = d.fast_two_sum(term, fifth)
    hi, lo = d.fast_two_sum(d.add(s, s), small)
    lo = d.add(lo, d.add(d.add(s_lo, s_lo), d.add(term_lo, small_lo)))
    # times log2(e), then plus e (|e| >= 1 > |product| or e == 0).
    c_hi, c_lo = split_constant(LOG2_E, d.fmt, 2)
    product, product_lo = d.two_prod(hi, c_hi)
    product_lo = d.add(product_lo, d.fma(lo, c_hi, d.mul(hi, c_lo)))
    total, total_lo = d.fast_two_sum(e, product)
    return d.fast_two_sum(total, d.add(total_lo, product_lo))


def _magnitude(d: Emitter, ax, y):
    """|x|**y in f64 for finite |x| > 0 and finite y (over- and underflow included)."""
    log_hi, log_lo = _log2_pair(d, ax)
    t, t_lo = d.two_prod(y, log_hi)
    t_lo = d.fma(y, log_lo, t_lo)
    p, n = exp_log.exp2_parts(d, d.clamp(t, *exp_log.EXP2_LIMITS["f64"]), t_lo)
    return d.ldexp(p, n)


def pow(m: Emitter, x, y):
    d = m.retyped(ir.DoubleType())
    wide = (lambda v: v) if m.fmt.width == 64 else (lambda v: m.b.fpext(v, d.ty))
    magnitude = _magnitude(d, d.abs(wide(x)), wide(y))
    if m.fmt.width == 32:
        magnitude = m.b.fptrunc(magnitude, m.ty)
    return _pow_special(m, x, y, magnitude)


def _pow_special(m: Emitter, x, y, magnitude):
    """The C99 Annex F cases around |x|**y computed for finite nonzero x and finite y."""
    ax = m.abs(x)
    negative_y = m.lt(y, 0.0)
    magnitude = m.select(m.eq(ax, 0.0), m.select(negative_y, math.inf, 0.0), magnitude)
    magnitude = m.select(m.eq(ax, math.inf), m.select(negative_y, 0.0, math.inf), magnitude)
    # y = ±inf: 0 or inf by whether |x| < 1 and y < 0 agree; 1 for |x| == 1.
    shrinks = m.b.xor(m.lt(ax, 1.0), negative_y)
    infinite_y = m.select(m.eq(ax, 1.0), 1.0, m.select(shrinks, 0.0, math.inf))
    magnitude = m.select(m.eq(m.abs(y), math.inf), infinite_y, magnitude)
    integral = m.eq(y, m.trunc(y))  # true for ±inf, false for NaN
    half = m.mul(y, 0.5)
    odd = m.both(integral, m.b.fcmp_ordered("!=", half, m.trunc(half)))
    result = m.select(m.both(m.sign_bit_set(x), odd), m.neg(magnitude), magnitude)
    negative_finite_x = m.both(m.lt(x, 0.0), m.is_finite(x))
    result = m.nan_if(m.both(negative_finite_x, m.b.not_(integral)), result)
    result = m.nan_if(m.either(m.is_nan(x), m.is_nan(y)), result)
    result = m.select(m.eq(x, 1.0), 1.0, result)
    return m.select(m.eq(y, 0.0), 1.0, result)


def cbrt(m: Emitter, x):
    fmt = m.fmt
    a = m.abs(x)
    # Subnormals are scaled by 2**(3k) into the normal range (k = 8 for f32, 18 for f64).
    k = (fmt.precision + 2) // 3
    subnormal = m.lt(a, 2.0**fmt.min_exponent)
    scaled = m.select(subnormal, m.mul(a, 2.0 ** (3 * k)), a)
    bits = m.bits(scaled)
    exponent = m.b.sub(m.b.ashr(bits, m.ic(fmt.mant_bits)), m.ic(fmt.bias))
    mantissa_bits = m.b.and_(bits, m.ic((1 << fmt.mant_bits) - 1))
    mantissa = m.from_bits(m.b.or_(mantissa_bits, m.ic(fmt.bias << fmt.mant_bits)))
    e = m.to_float(exponent)
    q = m.floor(m.mul(m.add(e, 0.5), 1.0 / 3.0))  # exact for |e| < 2**20
    r = m.sub(e, m.mul(q, 3.0))  # 0, 1 or 2
    v = m.mul(mantissa, m.select(m.eq(r, 0.0), 1.0, m.select(m.eq(r, 1.0), 2.0, 4.0)))
    y = m.poly(v, CBRT[fmt.kind])
    for _ in range(1 if fmt.width == 32 else 2):
        y = m.fma(m.sub(m.div(v, m.mul(y, y)), y), 1.0 / 3.0, y)
    # The last step with the residual v - y**3 computed exactly (two products as pairs).
    square, square_lo = m.two_prod(y, y)
    cube, cube_lo = m.two_prod(square, y)
    cube_lo = m.fma(square_lo, y, cube_lo)
    residual = m.sub(m.sub(v, cube), cube_lo)  # v - cube is exact: they are close
    y = m.add(y, m.div(residual, m.mul(square, 3.0)))
    shift = m.b.sub(m.to_int(q), m.select(subnormal, m.ic(k), m.ic(0)))
    y = m.copysign(m.mul(y, m.pow2(shift)), x)
    regular = m.both(m.gt(a, 0.0), m.is_finite(a))
    return m.select(regular, y, m.add(x, x))  # ±0, ±inf and NaN return themselves


def rsqrt(m: Emitter, x):
    return m.div(1.0, m.sqrt(x))


FUNCTIONS = {"pow": pow, "cbrt": cbrt, "rsqrt": rsqrt}
