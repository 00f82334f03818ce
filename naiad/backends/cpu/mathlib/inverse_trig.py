"""Inverse circular functions: asin, acos, atan, atan2.

asin: |x| <= 1/2 uses asin a = a + a*z*P(z), z = a*a. Above, asin a = pi/2 - 2 asin s with
s = sqrt((1 - a)/2) (1 - a is exact there); the rounding error of the square root,
(z - s*s)/(2s), is carried along, and pi/2 - 2s is formed before the small terms are added.
acos reuses the same pieces: pi/2 - asin x for |x| <= 1/2, 2 asin s above, pi - 2 asin s below.

atan: a = |x| is reduced to |t| <= 1/2 by atan a = pi/4 + atan((a-1)/(a+1)) for 1/2 < a <= 2
and pi/2 + atan(-1/a) above 2 (one division in every case), then t + t*z*P(z).

atan2(y, x): the ratio min(|x|,|y|)/max(|x|,|y|) in [0, 1] goes through the same reduction;
the octant (which of |x|, |y| is larger, the sign bit of x) picks a constant K and a sign, and
the angle K ± atan is summed constant-last. The libm special cases (signed zeros, infinities)
come out of the ratio with 0/0 -> 0 and inf/inf -> 1; NaN in either argument gives NaN.

Tested bounds: asin acos atan atan2 within 1 ulp (f32 and f64; measured at most 0.75).
"""

from __future__ import annotations

import math

from .constants import PI, PI_2, PI_4, THREE_PI_4
from .poly import Emitter, split_constant

# From fit.py, ascending: f(t) = t + t*z*P(z), relative error on z = t*t <= 1/4 (asin: f32
# 2**-31.7, f64 2**-59.8; atan: f32 2**-31.5, f64 2**-57.7).
ASIN = {
    "f32": (0.1666666, 0.07500522, 0.044513382, 0.031838845, 0.014316911, 0.037691865),
    "f64": (
        0.16666666666666763, 0.07499999999970092, 0.04464285717534032, 0.030381942670374192,
        0.02237221610580761, 0.01735159086606911, 0.013981085867514396,
        0.011396650993597265, 0.010793405155998258, 0.0036550093370245566,
        0.02183651606565754, -0.021187181193317906, 0.03274957435143821,
    ),
}  # fmt: skip
ATAN = {
    "f32": (-0.33333325, 0.19999392, -0.14270107, 0.109238245, -0.079170525, 0.037759617),
    "f64": (
        -0.33333333333332976, 0.19999999999901716, -0.1428571427626039, 0.11111110654045245,
        -0.09090896101670538, 0.07692071633742333, -0.0666378703134771,
        0.058581376436085304, -0.05121282876584706, 0.04184461579043281,
        -0.02740195304287163, 0.010093624195323704,
    ),
}  # fmt: skip


def _pair(m: Emitter, decimal: str):
    return split_constant(decimal, m.fmt, 2)


def _asin_pieces(m: Emitter, a):
    """(big, s, tail) for a = |x|: asin a = s + tail where a <= 1/2, and asin a =
    pi/2 - 2*(s + tail) above, with s + tail = asin(sqrt((1 - a)/2)) to beyond precision."""
    big = m.gt(a, 0.5)
    z = m.select(big, m.mul(m.sub(1.0, a), 0.5), m.mul(a, a))
    s = m.select(big, m.sqrt(z), a)
    # The square root's rounding error; the tiny addend keeps 0/0 away at a = 1 (s = 0).
    root_error = m.div(m.fma(m.neg(s), s, z), m.add(m.add(s, s), 2.0**m.fmt.min_exponent))
    root_error = m.select(big, root_error, 0.0)
    tail = m.fma(m.mul(s, z), m.poly(z, ASIN[m.fmt.kind]), root_error)
    return big, s, tail


def _sum_constant(m: Emitter, constant_hi, value, tail):
    """constant_hi + value + tail rounded once (nearly): the first two as an exact pair
    (|constant_hi| >= |value| or constant_hi == 0), then the small tail."""
    high, low = m.fast_two_sum(constant_hi, value)
    return m.add(high, m.add(low, tail))


def _minus_twice(m: Emitter, constant: str, s, tail):
    """constant - 2*(s + tail)."""
    hi, lo = _pair(m, constant)
    return _sum_constant(m, m.c(hi), m.mul(s, -2.0), m.sub(lo, m.add(tail, tail)))


def asin(m: Emitter, x):
    big, s, tail = _asin_pieces(m, m.abs(x))
    y = m.select(big, _minus_twice(m, PI_2, s, tail), m.add(s, tail))
    return m.copysign(y, x)


def acos(m: Emitter, x):
    a = m.abs(x)
    big, s, tail = _asin_pieces(m, a)
    pio2_hi, pio2_lo = _pair(m, PI_2)
    # |x| <= 1/2: pi/2 - asin x, with asin x = x + signed tail.
    middle = _sum_constant(m, m.c(pio2_hi), m.neg(x), m.sub(pio2_lo, m.copysign(tail, x)))
    twice = m.mul(m.add(s, tail), 2.0)
    below = _minus_twice(m, PI, s, tail)
    y = m.select(big, m.select(m.lt(x, 0.0), below, twice), middle)
    return m.keep_nan(x, y)


def _atan_reduced(m: Emitter, a, a_lo, with_big: bool = True):
    """(t, t_lo, mid, big): atan(a + a_lo) = base + atan(t + t_lo), |t| <= 1/2, with base
    pi/4 when `mid` (t = (a-1)/(a+1)) and pi/2 when `big` (t = -1/a), 0 otherwise; t_lo
    carries the division's rounding error and the error of a + 1."""
    mid = m.gt(a, 0.5)
    sum_hi, sum_lo = m.two_sum(a, m.c(1.0))
    numerator = m.select(mid, m.sub(a, 1.0), a)  # a - 1 is exact for a in [1/2, 2]
    denominator = m.select(mid, sum_hi, 1.0)
    denominator_lo = m.select(mid, m.add(sum_lo, a_lo), 0.0)
    numerator_lo = a_lo
    big = None
    if with_big:
        big = m.gt(a, 2.0)
        numerator = m.select(big, -1.0, numerator)
        numerator_lo = m.select(big, 0.0, numerator_lo)
        denominator = m.select(big, a, denominator)
        denominator_lo = m.select(big, a_lo, denominator_lo)
    t = m.div(numerator, denominator)
    remainder = m.fma(m.neg(t), denominator, numerator)  # exact
    correction = m.div(m.sub(m.add(remainder, numerator_lo), m.mul(t, denominator_lo)), denominator)
    # a = inf makes the remainder 0 * inf: no correction there (NaN inputs stay NaN through t).
    return t, m.select(m.is_nan(correction), 0.0, correction), mid, big


def _atan_sum(m: Emitter, t, t_lo, base_hi, base_lo):
    """base + atan(t + t_lo) for |t| <= 1/2, rounded once (nearly)."""
    z = m.mul(t, t)
    small = m.add(base_lo, m.fma(t_lo, m.neg(z), t_lo))  # t_lo / (1 + z), to first order
    tail = m.fma(m.mul(t, z), m.poly(z, ATAN[m.fmt.kind]), small)
    return _sum_constant(m, base_hi, t, tail)


def atan(m: Emitter, x):
    a = m.abs(x)
    t, t_lo, mid, big = _atan_reduced(m, a, m.c(0.0))
    pio4_hi, pio4_lo = _pair(m, PI_4)
    pio2_hi, pio2_lo = _pair(m, PI_2)
    base_hi = m.select(big, pio2_hi, m.select(mid, pio4_hi, 0.0))
    base_lo = m.select(big, pio2_lo, m.select(mid, pio4_lo, 0.0))
    return m.copysign(_atan_sum(m, t, t_lo, base_hi, base_lo), x)


def atan2(m: Emitter, y, x):
    ax, ay = m.abs(x), m.abs(y)
    swap = m.gt(ay, ax)  # the angle is pi/2 - atan(|x|/|y|)
    negative_x = m.sign_bit_set(x)  # then pi - that (-0.0 counts as negative)
    smaller = m.select(swap, ax, ay)
    larger = m.select(swap, ay, ax)
    ratio = m.div(smaller, larger)
    ratio_lo = m.div(m.fma(m.neg(ratio), larger, smaller), larger)
    special = m.either(m.eq(larger, 0.0), m.eq(smaller, math.inf))
    ratio = m.select(m.eq(larger, 0.0), 0.0, ratio)  # atan2(±0, ±0)
    ratio = m.select(m.eq(smaller, math.inf), 1.0, ratio)  # atan2(±inf, ±inf)
    ratio_lo = m.select(m.either(special, m.is_nan(ratio_lo)), 0.0, ratio_lo)  # inf/finite
    t, t_lo, mid, _ = _atan_reduced(m, ratio, ratio_lo, with_big=False)
    # angle = K + sign * (base + atan t) with base in {0, pi/4}; K and the sign per octant.
    flip = m.b.xor(swap, negative_x)
    constants = {
        False: ("0", PI_2, PI, PI_2),  # base 0: K for (swap, negative_x) = ff, tf, ft, tt
        True: (PI_4, PI_4, THREE_PI_4, THREE_PI_4),  # base pi/4 folded into K
    }
    parts = []
    for index in (0, 1):
        chosen = []
        for base in (False, True):
            k_ff, k_tf, k_ft, k_tt = (_pair(m, c)[index] for c in constants[base])
            on_x_sign = m.select(negative_x, m.c(k_ft), m.c(k_ff))
            swapped = m.select(negative_x, m.c(k_tt), m.c(k_tf))
            chosen.append(m.select(swap, swapped, on_x_sign))
        parts.append(m.select(mid, chosen[1], chosen[0]))
    signed_t = m.select(flip, m.neg(t), t)
    signed_t_lo = m.select(flip, m.neg(t_lo), t_lo)
    angle = _atan_sum(m, signed_t, signed_t_lo, *parts)
    angle = m.copysign(angle, y)
    return m.select(m.either(m.is_nan(x), m.is_nan(y)), m.add(x, y), angle)


FUNCTIONS = {"asin": asin, "acos": acos, "atan": atan, "atan2": atan2}
