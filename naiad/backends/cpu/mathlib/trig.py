"""Circular functions: sin, cos, tan.

Reduction: q = rint(x * 2/pi) and x - q*pi/2 with pi/2 in three parts of full precision (about
3 x 24 or 3 x 53 bits), kept as a pair r + r_lo. x - q*head is exact inside an fma (the result
is small and a multiple of ulp(head)); q*middle is an exact product pair and its difference
with that a two-sum; q*last joins r_lo. So r keeps its relative accuracy even where x is close
to a multiple of pi/2. Then sin r = r + r*z*S(z) and cos r = 1 - z/2 + z*z*C(z) (z = r*r) on
|r| <= pi/4, 1 - z/2 summed exactly and r_lo entering to first order, and the quadrant q mod 4
picks and signs one of them. tan = sin/cos (or -cos/sin on odd quadrants), the quotient
corrected with the division's remainder and both values' rounding errors.

Domain of the bound: |x| <= 1e4 (tested: within 1 ulp in f32 and f64 for sin, cos and tan;
measured still within 1 ulp up to 1e6 in f32 and 1e9 in f64). Beyond, the reduction loses
accuracy as q grows (there is no Payne–Hanek reduction): sin and cos stay finite and within
[-1, 1] (r and r_lo are clamped to where the polynomials stay below 1 in magnitude) and the
quadrant is computed exactly for every finite x; infinities and NaN give NaN.
"""

from __future__ import annotations

import math

from .constants import PI_2, TWO_OVER_PI
from .poly import Emitter, split_constant

# From fit.py, ascending. sin r = r + r*z*SIN(z), relative error on |r| <= pi/4 (f32 2**-32.5,
# f64 2**-57.8); cos r = 1 - z/2 + z*z*COS(z) (f32 2**-37.0, f64 2**-63.8).
SIN = {
    "f32": (-0.16666667, 0.008333379, -0.00019853025, 2.8317227e-06),
    "f64": (
        -0.1666666666666663, 0.008333333333321839, -0.00019841269829330013,
        2.755731351882253e-06, -2.505072993823871e-08, 1.5895106683171133e-10,
    ),
}  # fmt: skip
COS = {
    "f32": (0.041666668, -0.0013888979, 2.4821496e-05, -2.8824212e-07),
    "f64": (
        0.04166666666666659, -0.0013888888888872186, 2.480158728829516e-05,
        -2.755731401497354e-07, 2.0875678053422213e-09, -1.1357334557884795e-11,
    ),
}  # fmt: skip


def _reduce(m: Emitter, x):
    """(quadrant, r, r_lo): x = q*pi/2 + r + r_lo, quadrant = q mod 4 as an i32, r_lo the
    rounding error of r; x must be finite."""
    q = m.rint(m.mul(x, float(TWO_OVER_PI)))
    minus_q = m.neg(q)
    head, middle, last = split_constant(PI_2, m.fmt, 3)
    r1 = m.fma(minus_q, head, x)  # exact
    product, product_lo = m.two_prod(minus_q, middle)
    r, r_lo = m.two_sum(r1, product)
    r_lo = m.add(r_lo, m.fma(minus_q, last, product_lo))
    # q mod 4, exactly, for any integral float (q/4 and its floor are exact): the quadrant is
    # right even where the reduction is not.
    quadrant = m.sub(q, m.mul(m.floor(m.mul(q, 0.25)), 4.0))
    # The clamps change nothing where the reduction is accurate (|r| <= pi/4, |r_lo| <=
    # ulp(r)/2); far beyond it they keep the polynomials' results within [-1, 1].
    bound = 2.0 ** -(m.fmt.precision - 1)
    quadrant = m.b.fptosi(quadrant, m.i32)
    return quadrant, m.clamp(r, -1.0, 1.0), m.clamp(r_lo, -bound, bound)


def _sin_cos(m: Emitter, r, r_lo):
    """((sin, sin_lo), (cos, cos_lo)) of r + r_lo, for |r| <= pi/4 and a tiny r_lo: each value
    rounded once, with its rounding error (tan divides the pairs)."""
    z, z_lo = m.two_prod(r, r)
    half_z = m.mul(z, 0.5)
    # sin(r + r_lo) = sin r + r_lo * cos r, to first order, with cos r ~ 1 - z/2.
    sine_tail = m.fma(m.mul(r, z), m.poly(z, SIN[m.fmt.kind]), m.fma(r_lo, m.neg(half_z), r_lo))
    w = m.sub(1.0, half_z)
    # (1 - w) - z/2 is the rounding error of w, exactly; then -z_lo/2 and -r*r_lo.
    small = m.fma(m.neg(r), r_lo, m.mul(z_lo, -0.5))
    tail = m.fma(m.mul(z, z), m.poly(z, COS[m.fmt.kind]), m.sub(m.sub(1.0, w), half_z))
    return m.fast_two_sum(r, sine_tail), m.fast_two_sum(w, m.add(tail, small))


def _bit(m: Emitter, i, mask: int):
    return m.b.icmp_signed("!=", m.b.and_(i, m.i32(mask)), m.i32(0))


def _reduced(m: Emitter, x):
    """(quadrant, sin r, cos r) for a finite stand-in of x (inf and NaN are replaced by 0 and
    restored as NaN by `_finish`)."""
    quadrant, r, r_lo = _reduce(m, m.select(m.is_finite(x), x, 0.0))
    return (quadrant, *_sin_cos(m, r, r_lo))


def _finish(m: Emitter, x, y, odd_function: bool):
    """NaN for infinite or NaN x; for odd functions, x itself where |x| is tiny (keeps -0.0)."""
    if odd_function:
        y = m.select(m.lt(m.abs(x), 2.0 ** -(m.fmt.precision // 2 + 1)), x, y)
    return m.select(m.is_finite(x), y, math.nan)


def _negate_if(m: Emitter, condition, y):
    return m.select(condition, m.neg(y), y)


def sin(m: Emitter, x):
    quadrant, (s, _), (c, _) = _reduced(m, x)
    y = _negate_if(m, _bit(m, quadrant, 2), m.select(_bit(m, quadrant, 1), c, s))
    return _finish(m, x, y, odd_function=True)


def cos(m: Emitter, x):
    quadrant, (s, _), (c, _) = _reduced(m, x)
    shifted = m.b.add(quadrant, m.i32(1))  # cos x = sin(x + pi/2)
    y = _negate_if(m, _bit(m, shifted, 2), m.select(_bit(m, quadrant, 1), s, c))
    return _finish(m, x, y, odd_function=False)


def tan(m: Emitter, x):
    """sin/cos (or -cos/sin), the quotient corrected by the remainder of the division and the
    rounding errors of both: within an ulp instead of the three roundings' two."""
    quadrant, (s, s_lo), (c, c_lo) = _reduced(m, x)
    odd = _bit(m, quadrant, 1)
    numerator, numerator_lo = m.select(odd, m.neg(c), s), m.select(odd, m.neg(c_lo), s_lo)
    denominator, denominator_lo = m.select(odd, s, c), m.select(odd, s_lo, c_lo)
    q = m.div(numerator, denominator)
    remainder = m.add(m.fma(m.neg(q), denominator, numerator), numerator_lo)
    y = m.add(q, m.div(m.fma(m.neg(q), denominator_lo, remainder), denominator))
    return _finish(m, x, y, odd_function=True)


FUNCTIONS = {"sin": sin, "cos": cos, "tan": tan}
