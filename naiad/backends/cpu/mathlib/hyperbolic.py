"""Hyperbolic functions and their inverses: sinh, cosh, tanh, asinh, acosh, atanh.

sinh, cosh: h = e**|x| / 2 is exp's p * 2**(n - 1), exact from exp's parts, so it overflows
only where cosh does; cosh = h + 1/(4h), sinh = h - 1/(4h) for |x| >= 1 and an odd polynomial
x + x*z*P(z) below, where the difference would cancel. tanh: an odd polynomial on |x| < 0.55,
1 - 2/(e**2|x| + 1) above (|x| is clamped where tanh has rounded to 1).

asinh, acosh, atanh are logarithms (exp_log's log core): asinh a = log1p(a + a*a/(1 +
sqrt(1 + a*a))) below 2, log(2a + 1/(a + sqrt(a*a + 1))) above, and log(a) + ln2 past
2**(p/2), where a*a would lose 1 (the core adds 1 to the exponent instead of forming 2a).
acosh likewise with t = x - 1 below 2; atanh a = log1p(2a + 2a*a/(1 - a))/2 below 1/2 and
log1p(2a/(1 - a))/2 above (1 - a is exact there).

Tested bounds (f32 and f64): sinh cosh tanh asinh atanh within 2 ulp (measured at most 1.55),
acosh within 3 (measured 2.1 near 1, where log1p's argument t + sqrt(2t + t*t) carries the
square root's rounding).
"""

from __future__ import annotations

import math

from . import exp_log
from .poly import Emitter

# From fit.py, ascending: f(x) = x + x*z*P(z), relative error; sinh on |x| <= 1 (f32 2**-31.6,
# f64 2**-61.8), tanh on |x| <= 0.55 (f32 2**-29.7, f64 2**-60.6).
SINH = {
    "f32": (0.16666667, 0.0083333105, 0.00019842894, 2.7822252e-06),
    "f64": (
        0.16666666666666669, 0.008333333333332912, 0.0001984126984159341,
        2.7557319106755694e-06, 2.5052130999231768e-08, 1.6056659079045597e-10,
        7.776605218038088e-13,
    ),
}  # fmt: skip
TANH = {
    "f32": (-0.33333316, 0.13332544, -0.053847548, 0.021050718, -0.0062428787),
    "f64": (
        -0.333333333333333, 0.1333333333332658, -0.05396825396373696, 0.02186948838517974,
        -0.008863232590429098, 0.003592091920361398, -0.0014555421474872403,
        0.0005884416678739024, -0.0002333745579775303, 8.330666797751299e-05,
        -1.9488827656065523e-05,
    ),
}  # fmt: skip

_TANH_POLYNOMIAL_BELOW = 0.55
# Past these, cosh and sinh have overflowed and tanh has rounded to 1.
_HALF_EXP_LIMIT = {"f32": 90.0, "f64": 711.0}
_TANH_LIMIT = {"f32": 10.0, "f64": 20.0}


def _odd_polynomial(m: Emitter, x, table):
    z = m.mul(x, x)
    return m.fma(m.mul(x, z), m.poly(z, table[m.fmt.kind]), x)


def _half_exp(m: Emitter, a):
    """e**a / 2 for a >= 0 (clamped here), scaled exactly from exp's parts."""
    p, n = exp_log.exp_parts(m, m.clamp(a, 0.0, _HALF_EXP_LIMIT[m.fmt.kind]))
    return m.ldexp(p, m.b.sub(n, m.ic(1)))


def cosh(m: Emitter, x):
    half = _half_exp(m, m.abs(x))
    return m.keep_nan(x, m.add(half, m.div(0.25, half)))


def sinh(m: Emitter, x):
    a = m.abs(x)
    half = _half_exp(m, a)
    large = m.sub(half, m.div(0.25, half))
    y = m.select(m.lt(a, 1.0), _odd_polynomial(m, a, SINH), large)
    return m.keep_nan(x, m.copysign(y, x))


def tanh(m: Emitter, x):
    a = m.abs(x)
    p, n = exp_log.exp_parts(m, m.mul(m.clamp(a, 0.0, _TANH_LIMIT[m.fmt.kind]), 2.0))
    exp_2a = m.mul(p, m.pow2(n))  # 2**n stays normal below the clamp
    large = m.sub(1.0, m.div(2.0, m.add(exp_2a, 1.0)))
    y = m.select(m.lt(a, _TANH_POLYNOMIAL_BELOW), _odd_polynomial(m, a, TANH), large)
    return m.keep_nan(x, m.copysign(y, x))


def _log_of(m: Emitter, small, log1p_argument, middle_argument, big, big_argument):
    """log1p(log1p_argument) where `small`, log(middle_argument) in between, and
    log(big_argument) + ln2 where `big`: one log core on the selected input."""
    u, correction = exp_log.log1p_input(m, log1p_argument)
    core_input = m.select(big, big_argument, m.select(small, u, middle_argument))
    correction = m.select(small, correction, 0.0)
    extra = m.select(big, 1.0, 0.0)
    return exp_log.log_combine(m, exp_log.log_parts(m, core_input, extra, correction))


def _past_half_precision(m: Emitter, a):
    """True where a*a + 1 == a*a: from there on, asinh and acosh are log(2a)."""
    return m.gt(a, 2.0 ** (m.fmt.precision // 2 + 1))


def asinh(m: Emitter, x):
    a = m.abs(x)
    square = m.mul(a, a)
    root = m.sqrt(m.add(square, 1.0))
    small_argument = m.add(a, m.div(square, m.add(root, 1.0)))
    middle_argument = m.add(m.add(a, a), m.div(1.0, m.add(root, a)))
    big = _past_half_precision(m, a)
    y = _log_of(m, m.lt(a, 2.0), small_argument, middle_argument, big, a)
    y = m.select(m.lt(a, 2.0**-m.fmt.precision), a, y)
    y = m.select(m.eq(a, math.inf), a, y)
    return m.keep_nan(x, m.copysign(y, x))


def acosh(m: Emitter, x):
    t = m.sub(x, 1.0)  # exact below 2
    small_argument = m.add(t, m.sqrt(m.fma(t, t, m.add(t, t))))
    root = m.sqrt(m.fma(x, x, -1.0))
    middle_argument = m.sub(m.add(x, x), m.div(1.0, m.add(x, root)))
    big = _past_half_precision(m, x)
    y = _log_of(m, m.lt(x, 2.0), small_argument, middle_argument, big, x)
    y = m.select(m.eq(x, math.inf), x, y)
    return m.nan_if(m.b.fcmp_unordered("<", x, m.c(1.0)), y)


def atanh(m: Emitter, x):
    a = m.abs(x)
    one_minus = m.sub(1.0, a)
    twice = m.add(a, a)
    argument = m.select(
        m.lt(a, 0.5),
        m.add(twice, m.div(m.mul(twice, a), one_minus)),
        m.div(twice, one_minus),
    )
    y = m.mul(exp_log.log1p(m, argument), 0.5)
    y = m.select(m.lt(a, 2.0**-m.fmt.precision), a, y)
    return m.copysign(y, x)


FUNCTIONS = {
    "sinh": sinh,
    "cosh": cosh,
    "tanh": tanh,
    "asinh": asinh,
    "acosh": acosh,
    "atanh": atanh,
}
