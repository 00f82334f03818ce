"""The error function and its complement: erf, erfc.

erf x = x * (2/sqrt(pi) + z P(z)), z = x*x, on |x| < 1, the leading product exact in an fma.
Above 1/2, erfc a = e**(-a*a) * G(a) for a = |x|, with G = erfc(a) e**(a*a) (smooth, between
0.02 and 0.62 there) approximated by t H(t - origin), t = 1/(1 + a/2): the factor t carries
G's 1/a decay, so H varies little and its polynomial's terms hardly cancel. a*a is an exact pair
(hi, lo) and e**(-hi - lo) comes from exp's parts, so p * G is rounded before one scaling by
2**n (subnormal results included); without the pair, the rounding of a*a alone would cost
a*a*eps relative error (100 ulp at a = 10). The rounding errors of t and of t - origin enter
to first order. Then erf x = ±(1 - erfc a) for |x| >= 1, erfc a = 1 - erf a below 1/2, and
erfc x = 2 - erfc |x| for x < 0.

f32 erf above 1 takes a shorter road (gelu's cost is erf's): erfc a = 2**Q(a) with Q a
polynomial of degree 6 in a on [1, 3.92], fitted to log2(erfc a) weighted so that its error is
relative to erf (2**-29.8), then erf = 1 - 2**Q, 2**Q by exp_single's reduction and polynomial
and one multiply by 2**n (Q lies in [-26, -2.6]: no clamp, no subnormal). No division and no
double-word exponent: erf needs erfc only to its own few ulps times erfc/erf <= 0.19, and past
3.92 erfc is below half an ulp of 1, where erf rounds to 1.

Tested bounds (f32 and f64): erf within 2 ulp (measured 1.2), erfc within 4 (measured 3.4:
e**(-a*a), G and their product each round once).
"""

from __future__ import annotations

from . import exp_log, exp_single
from .poly import Emitter, split_constant

# From fit.py, ascending. erf x = x * (2/sqrt(pi) + z*ERF(z)), z = x*x <= 1, relative
# (f32 2**-29.3, f64 2**-62.3).
ERF = {
    "f32": (-0.3761263, 0.11283603, -0.026854202, 0.005188598, -0.0008009387, 7.8424775e-05),
    "f64": (
        -0.3761263890318375, 0.1128379167095485, -0.026866170645068077,
        0.005223977624714208, -0.0008548326974149617, 0.0001205533084967993,
        -1.4925588662187973e-05, 1.6460891023024368e-06, -1.634912664265019e-07,
        1.4651686694662192e-08, -1.1341345097088261e-09, 5.903743722242342e-11,
    ),
}  # fmt: skip
# H(s) = erfc(a) e**(a*a) / t with t = 1/(1 + c*a) and s = t - origin, a in [1/2, limit];
# relative error f32 2**-27.8, f64 2**-54.2 (both set by the rounding of the constant term:
# half an ulp of H at the limit). Large a sit near s = 0, where the first terms dominate; the
# terms' sum stays within 1.6 H, so Horner's rule loses little.
ERFC = {
    "f32": (
        0.3358573, 0.37874, 0.34616846, 0.22432177, 0.044335652, -0.05510017, -0.19841823,
        0.20275187, -0.08364019, 0.045737296, -0.023366114,
    ),
    "f64": (
        0.3022795194027951, 0.31786248041551385, 0.28472247833233966, 0.19829584347273646,
        0.0778288292027645, -0.03236566370975214, -0.08093101880000987,
        -0.045707105114291165, 0.03761666459247663, 0.06539299841784245,
        0.08978575386778834, -0.40129801971002627, 0.9890566870301538, -2.7909175674695317,
        5.926087954647642, -8.30286171059143, 7.692476573233928, -4.6473863446703625,
        1.710756496720288, -0.3310139902430025, 0.04583361563354529, -0.027148311487042904,
        0.008460619882261301,
    ),
}  # fmt: skip
# From fit.py ("erf_tail"), ascending: log2(erfc a) on 1 <= a <= 3.92 for f32's erf.
ERF_TAIL = (
    -0.00049271446, -1.626046, -0.9206485, -0.14875145, 0.031505585, -0.004252552, 0.00026888677,
)  # fmt: skip
_ERF_TAIL_RANGE = (1.0, 3.92)
# (c, origin, limit): past the limit, erfc has underflowed to 0 (and erf rounded to 1).
_ERFC_RANGE = {"f32": (0.5, 0.1640625, 10.1), "f64": (0.5, 0.0673828125, 27.5)}
TWO_OVER_SQRT_PI = "1.1283791670955125738961589031215451716881012586580"


def _erf_small(m: Emitter, x):
    """erf x for |x| <= 1: x*c0 + x*(c0_lo + z*ERF(z)), the leading product exact in the fma."""
    c_hi, c_lo = split_constant(TWO_OVER_SQRT_PI, m.fmt, 2)
    z = m.mul(x, x)
    return m.fma(x, c_hi, m.mul(x, m.fma(z, m.poly(z, ERF[m.fmt.kind]), c_lo)))


def _erfc_positive(m: Emitter, a, carry_errors: bool = True):
    """erfc a for a >= 1/2 (a is clamped to [1/2, limit] here, NaN to 1/2).

    t = 1/(1 + c*a) and s = t - origin carry their rounding errors (t_lo, s_lo) into the
    result: H(s + s_lo) ~ H(s) + s_lo * H'(s), with the slope from H's first terms. erf, which
    needs erfc a only to a few ulps of itself (it is below 0.16 of the result), skips them and
    the second division."""
    suffix = m.fmt.kind
    c, origin, limit = _ERFC_RANGE[suffix]
    table = ERFC[suffix]
    a = m.clamp(a, 0.5, limit)
    d, d_lo = m.two_sum(m.c(1.0), m.mul(a, c))  # c*a is exact: c is a short constant
    t = m.div(1.0, d)
    s, s_lo = m.fast_two_sum(t, m.c(-origin))
    h = m.poly(s, table)
    if carry_errors:
        t_lo = m.div(m.sub(m.fma(m.neg(t), d, 1.0), m.mul(t, d_lo)), d)
        slope = m.fma(s, 2.0 * table[2], table[1])
        h = m.fma(m.add(s_lo, t_lo), slope, h)
        scaled = m.fma(h, t, m.mul(h, t_lo))  # erfc(a) e**(a*a)
    else:
        scaled = m.mul(h, t)
    square, square_lo = m.two_prod(a, a)
    p, n = exp_log.exp_parts(m, m.neg(square), m.neg(square_lo))
    return m.ldexp(m.mul(p, scaled), n)


def _erf_tail_single(m: Emitter, a):
    """f32 erf a for a >= 1 (clamped to the tail's range here, NaN to 1): 1 - 2**Q(a)."""
    q = m.poly(m.clamp(a, *_ERF_TAIL_RANGE), ERF_TAIL)
    n, ni = exp_single.round_to_integer(m, q)
    r = m.sub(q, n)
    p = m.fma(r, m.poly(r, exp_single.EXP2), 1.0)
    return m.sub(1.0, m.mul(p, m.pow2(ni)))


def erf(m: Emitter, x):
    a = m.abs(x)
    if m.fmt.kind == "f32":
        large = _erf_tail_single(m, a)
    else:
        large = m.sub(1.0, _erfc_positive(m, a, carry_errors=False))
    # copysign also keeps erf(-0.0) = -0.0, which the small path's sum may lose.
    y = m.copysign(m.select(m.lt(a, 1.0), _erf_small(m, a), large), x)
    return m.keep_nan(x, y)


def erfc(m: Emitter, x):
    a = m.abs(x)
    complement = m.select(m.lt(a, 0.5), m.sub(1.0, _erf_small(m, a)), _erfc_positive(m, a))
    y = m.select(m.lt(x, 0.0), m.sub(2.0, complement), complement)
    return m.keep_nan(x, y)


FUNCTIONS = {"erf": erf, "erfc": erfc}
