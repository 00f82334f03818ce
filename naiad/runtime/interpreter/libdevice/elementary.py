"""libdevice's C-library math (tanh, pow, hypot, fmod, ...): fp32 and fp64 from one NumPy routine.

fp32 arguments are widened to fp64, computed there and rounded once to fp32 by the caller, which
is at least as accurate as the GPU: on an H200 its fp32 functions are within 1-3 ulps of these,
its `fast_*` variants and Bessel functions further, and its `sqrtf` is not correctly rounded
under Triton (here it is). Functions whose answer is exact (rounding to integers, fmod,
remainder, ldexp, nextafter, copysign, classification) are exact here too.
"""

from __future__ import annotations

import math

import numpy as np

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def _wide(fn):
    """fn on the arguments widened to fp64."""
    return lambda *args: fn(*(np.asarray(a, dtype=np.float64) for a in args))


def _python(fn, on_error=None):
    """An elementwise `math` function; `on_error(x)` answers where it raises (poles, overflow)."""

    def one(x):
        try:
            return fn(x)
        except (ValueError, OverflowError):
            return on_error(x)

    return lambda x: np.vectorize(one, otypes=[np.float64])(np.asarray(x, dtype=np.float64))


def round_half_away(x):
    """Round to the nearest integer, ties away from zero (C `round`); exact in every case."""
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


def _pi_scaled(x, cosine: bool):
    """sin(pi x) or cos(pi x), with no rounding of pi x: x is reduced exactly to r in
    [-1/4, 1/4] plus a number of quarter turns, and only pi r is rounded."""
    reduced = np.fmod(x, 2.0)  # exact; the period is 2
    quarters = np.rint(2 * reduced)
    r = reduced - quarters / 2  # exact
    turn = np.mod(quarters + (1 if cosine else 0), 4.0)
    s, c = np.sin(np.pi * r), np.cos(np.pi * r)
    value = np.select([turn == 0, turn == 1, turn == 2], [s, c, -s], -c)
    # IEEE 754 zeros: sinPi(n) has the sign of n, cosPi(n + 1/2) is +0.
    value = np.where(value == 0, np.copysign(0.0, x) if not cosine else 0.0, value)
    return np.where(np.isfinite(x), value, np.nan)


def _norm(*xs):
    """sqrt(sum of squares) scaled by the largest magnitude; inf if any is infinite."""
    magnitudes = np.stack(np.broadcast_arrays(*(np.abs(x) for x in xs)))
    largest = magnitudes.max(axis=0)
    scale = np.where((largest == 0) | ~np.isfinite(largest), 1.0, largest)
    result = scale * np.sqrt(((magnitudes / scale) ** 2).sum(axis=0))
    result = np.where(np.isnan(magnitudes).any(axis=0), np.nan, result)
    return np.where(np.isinf(magnitudes).any(axis=0), np.inf, result)


def remainder(x, y):
    """IEEE remainder x - n*y, n = x/y rounded to nearest even; exact.

    fmod(x, 2|y|) keeps the parity of n; the answer is the smallest of r, r - |y|, r - 2|y|
    (all exact by Sterbenz's lemma where they can be chosen), ties toward even n.
    """
    ay = np.abs(y)
    twice = 2 * ay
    r = np.abs(np.where(np.isfinite(twice), np.fmod(x, twice), x))
    once = r - ay
    twice_off = once - ay
    beyond_half = np.where(np.abs(twice_off) <= np.abs(once), twice_off, once)
    pick = np.where(r <= np.abs(once), r, beyond_half)
    result = np.where(np.signbit(x), -pick, pick)
    return np.where(np.isinf(x) | (y == 0) | np.isnan(x) | np.isnan(y), np.nan, result)


def fdim(x, y):
    return np.where(np.isnan(x) | np.isnan(y), np.nan, np.where(x > y, x - y, 0.0))


def ldexp(x, n):
    return np.ldexp(x, np.clip(np.asarray(n, dtype=np.int64), -4000, 4000).astype(np.int32))


def ilogb(x):
    exponent = np.frexp(np.where(np.isfinite(x) & (x != 0), x, 1.0))[1] - 1
    result = np.where(np.isinf(x), INT32_MAX, exponent)
    return np.where((x == 0) | np.isnan(x), INT32_MIN, result).astype(np.int32)


def logb(x):
    exponent = (np.frexp(np.where(np.isfinite(x) & (x != 0), x, 1.0))[1] - 1).astype(np.float64)
    result = np.where(x == 0, -np.inf, exponent)
    return np.where(np.isnan(x), x, np.where(np.isinf(x), np.inf, result))


def saturate(x):
    return np.where(np.isnan(x), np.float32(0), np.clip(x, np.float32(0), np.float32(1)))


def rcp64h(x):
    """rcp.approx.ftz.f64: 1 / x from the high 32 bits of x, answered in the high 32 bits.

    PTX leaves the error of this "gross approximation" open; here it is the exact reciprocal of
    the truncated input, truncated to 20 mantissa bits. Subnormals are flushed to zero.
    """
    mask = np.uint64(0xFFFFFFFF00000000)
    high = (np.asarray(x, order="C").view(np.uint64) & mask).view(np.float64)
    high = np.where(np.abs(high) < np.finfo(np.float64).tiny, np.copysign(0.0, x), high)
    result = (np.asarray(1.0 / high, order="C").view(np.uint64) & mask).view(np.float64)
    return np.where(np.abs(result) < np.finfo(np.float64).tiny, np.copysign(0.0, result), result)


def _tgamma_at_pole(x):
    if x == 0:
        return math.copysign(math.inf, x)
    return math.inf if x > 0 else math.nan  # overflow; negative integers and -inf have no value


def _flag(predicate):
    return lambda x: predicate(np.asarray(x)).astype(np.int32)


_WIDE = {
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "rint": np.rint,
    "nearbyint": np.rint,
    "round": round_half_away,
    "exp2": np.exp2,
    "exp": np.exp,
    "exp10": lambda x: np.power(10.0, x),
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "sinpi": lambda x: _pi_scaled(x, False),
    "cospi": lambda x: _pi_scaled(x, True),
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "atan2": np.arctan2,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "cbrt": np.cbrt,
    "rcbrt": lambda x: 1.0 / np.cbrt(x),
    "hypot": np.hypot,
    "rhypot": lambda x, y: 1.0 / np.hypot(x, y),
    "norm3d": _norm,
    "rnorm3d": lambda *xs: 1.0 / _norm(*xs),
    "norm4d": _norm,
    "rnorm4d": lambda *xs: 1.0 / _norm(*xs),
    "fmod": np.fmod,
    "remainder": remainder,
    "fdim": fdim,
    "ldexp": ldexp,
    "scalbn": ldexp,
    "pow": np.power,
    "powi": np.power,
    "ilogb": ilogb,
    "logb": logb,
    "fabs": np.abs,
    "erf": _python(math.erf),
    "erfc": _python(math.erfc),  # these never raise
    "lgamma": _python(math.lgamma, lambda x: math.inf),
    "tgamma": _python(math.gamma, _tgamma_at_pole),
}

# Exact in the argument's own precision: no widening (nextafter must step an fp32 ulp).
_NATIVE = {"copysign": np.copysign, "nextafter": np.nextafter}

_FAST = {
    "sinf": "sin",
    "cosf": "cos",
    "log2f": "log2",
    "logf": "log",
    "expf": "exp",
    "tanhf": "tanh",
    "tanf": "tan",
    "exp10f": "exp10",
    "log10f": "log10",
    "powf": "pow",
}


def _register() -> dict:
    symbols = {}
    for stem, fn in _WIDE.items():
        symbols[f"__nv_{stem}f"] = symbols[f"__nv_{stem}"] = _wide(fn)
    for stem, fn in _NATIVE.items():
        symbols[f"__nv_{stem}f"] = symbols[f"__nv_{stem}"] = fn
    for fast, stem in _FAST.items():
        symbols[f"__nv_fast_{fast}"] = symbols[f"__nv_{stem}f"]
    symbols["__nv_fast_fdividef"] = _wide(np.divide)
    symbols["__nv_saturatef"] = saturate
    symbols["__nv_rcp64h"] = rcp64h
    symbols["__nv_isnanf"] = symbols["__nv_isnand"] = _flag(np.isnan)
    symbols["__nv_isinff"] = symbols["__nv_isinfd"] = _flag(np.isinf)
    symbols["__nv_finitef"] = symbols["__nv_isfinited"] = _flag(np.isfinite)
    symbols["__nv_signbitf"] = symbols["__nv_signbitd"] = _flag(np.signbit)
    return symbols


SYMBOLS = _register()
