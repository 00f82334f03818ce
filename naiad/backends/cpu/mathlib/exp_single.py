"""f32 exp and exp2 in single precision: one reduction, one short polynomial, one scaling.

A softmax spends much of its time in exp, so f32 exp and exp2 do not take the double-word path
of `exp_log` (1 ulp, about twice the work); the library's bound for them is 2 ulp, and this
stays within it everywhere:

    exp:  n = rint(x / ln2), r = x - n*ln2 (ln2 in two parts, two fused multiply-adds; the first
          is exact), e**r = 1 + (r + r*r*P(r)), P of degree 4 (e**r to 2**-28.2 relative).
    exp2: n = rint(x), r = x - n (exact), 2**r = 1 + r*P(r), P of degree 5 (2**-27.5).

n comes from one fused multiply-add with 1.5 * 2**23: adding that constant rounds to an integer
(ties to even) and leaves the integer in the low bits of the sum, so rint and the conversion to
an integer cost one subtraction each. The result is p * 2**n with p in [0.7, 1.42]; inputs are
clamped first (NaN restored at the end) so that n stays within [-151, 129], and `Emitter.ldexp`
applies 2**n with one rounding (two normal powers, or one vscalef on AVX-512), so that subnormal
results are rounded once and overflow gives inf. Measured over every f32 input
(tests/backends/cpu/test_mathlib_exp.py): at most 1.013 ulp for exp (at x = 59.306) and 0.893
for exp2 (x = -126.4996: a subnormal result, rounded twice).

On the bench's AVX-512 machine (bench/cpu/mathlib.py) this exp runs 6.3 elements/ns (7.8 with
vscalef) against 4.0 for the double-word one; evaluating it in f64 instead (8 lanes, 0.5 ulp)
ran 3.3.
"""

from __future__ import annotations

from .constants import LN2, LOG2_E
from .poly import Emitter, split_constant

# Minimax coefficients from fit.py ("exp_single", "exp2_single"), ascending.
# e**r = 1 + r + r*r*EXP(r) on |r| <= ln2/2; 2**r = 1 + r*EXP2(r) on |r| <= 1/2.
EXP = (0.49999994, 0.16666517, 0.041668102, 0.008369211, 0.0013839175)
EXP2 = (0.69314724, 0.24022655, 0.055502728, 0.009617065, 0.0013417704, 0.00015825023)

# Past these the result has overflowed or underflowed in every rounding (e**89 > 2**128,
# e**-104 < 2**-150); within them n = rint(x/ln2) lies in [-151, 129].
_EXP_LIMITS = (-104.0, 89.0)
_EXP2_LIMITS = (-151.0, 129.0)
# Adding 1.5 * 2**23 to |v| < 2**22 rounds v to an integer and leaves it in the low mantissa bits.
_ROUNDER = 1.5 * 2.0**23


def round_to_integer(m: Emitter, x, factor: float | None = None):
    """(n as a float, n as an integer) with n = rint(x * factor) (or rint(x))."""
    total = m.add(x, _ROUNDER) if factor is None else m.fma(x, factor, _ROUNDER)
    n = m.sub(total, _ROUNDER)
    return n, m.b.sub(m.bits(total), m.bits(m.c(_ROUNDER)))


def exp(m: Emitter, x):
    """e**x for f32, within 2 ulp (see the module's docstring)."""
    clamped = m.clamp(x, *_EXP_LIMITS)
    n, ni = round_to_integer(m, clamped, float(LOG2_E))
    ln2_hi, ln2_lo = split_constant(LN2, m.fmt, 2)
    r = m.fma(m.neg(n), ln2_hi, clamped)  # exact: r is small and a multiple of ulp(ln2_hi)
    r = m.fma(m.neg(n), ln2_lo, r)
    p = m.add(m.fma(m.mul(r, r), m.poly(r, EXP), r), 1.0)
    return m.keep_nan(x, m.ldexp(p, ni))


def exp2(m: Emitter, x):
    """2**x for f32, within 2 ulp (see the module's docstring)."""
    clamped = m.clamp(x, *_EXP2_LIMITS)
    n, ni = round_to_integer(m, clamped)
    r = m.sub(clamped, n)
    p = m.fma(r, m.poly(r, EXP2), 1.0)
    return m.keep_nan(x, m.ldexp(p, ni))
