"""Correctly rounded fp32 / fp64 arithmetic in the four IEEE rounding modes.

Every result is exact: the nearest value (or a neighbour of the exact result) is found first, then
`directed` steps it one ulp where the sign of (exact - candidate) says the mode wants the other
neighbour. How each sign is obtained exactly:

- fp32: the exact result of + - * fma is a pair of doubles hi + lo (the product of two fp32 values
  is exact in fp64; an error-free TwoSum gives the rest). Rounding hi to odd and then to fp32
  rounds the pair correctly, as fp64 has more than 24 + 2 bits. / and sqrt computed in fp64 and
  rounded to fp32 are correctly rounded (53 >= 2 * 24 + 2); their residual a - q * b or
  a - q * q is exact in fp64.
- fp64: + and - use TwoSum. In the directed modes * / and sqrt, and fma in every mode, compare
  with Python's exact `Fraction`s per element: slow (microseconds per element), but these are
  rare in kernels, and exact.

Signed zeros follow IEEE 754: an exact zero sum is +0, or -0 when rounding down (and when both
addends are -0). Results here keep subnormals; `ftz.py` says where the GPU flushes them.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

MODES = ("rn", "rz", "rd", "ru")


def directed(candidate: np.ndarray, sign: np.ndarray, mode: str) -> np.ndarray:
    """Round in `mode`, given the nearest value and the sign of (exact - candidate)."""
    if mode == "rn":
        return candidate
    if mode == "rd":
        step, toward = sign < 0, -np.inf
    elif mode == "ru":
        step, toward = sign > 0, np.inf
    else:
        step, toward = ((sign < 0) & (candidate > 0)) | ((sign > 0) & (candidate < 0)), 0.0
    return np.where(step, np.nextafter(candidate, candidate.dtype.type(toward)), candidate)


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s + e == a + b exactly, with s = fl(a + b); e is 0 where s is not finite."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p + e == a * b exactly (Dekker's product, for doubles away from overflow and underflow)."""
    p = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, np.where(np.isfinite(p), e, 0.0)


def _split(a):
    c = a * 134217729.0  # 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def pair_to_fp32(hi: np.ndarray, lo: np.ndarray, mode: str) -> np.ndarray:
    """Round the exact value hi + lo (doubles, |lo| <= ulp(hi) / 2) to fp32."""
    hi, lo = np.asarray(hi, dtype=np.float64), np.asarray(lo, dtype=np.float64)
    sticky = (lo != 0) & ((hi.view(np.uint64) & np.uint64(1)) == 0)
    odd = np.where(sticky, np.nextafter(hi, np.where(lo > 0, np.inf, -np.inf)), hi)
    nearest = odd.astype(np.float32)
    # hi - nearest is exact (the two are within a factor of two), so the sign is exact.
    sign = np.sign((hi - nearest.astype(np.float64)) + lo)
    return directed(nearest, np.where(np.isfinite(hi), sign, 0.0), mode)


def pair_to_fp64(hi: np.ndarray, lo: np.ndarray, mode: str) -> np.ndarray:
    """Round the exact value hi + lo (any two doubles) to fp64."""
    hi, lo = np.asarray(hi, dtype=np.float64), np.asarray(lo, dtype=np.float64)
    nearest, err = two_sum(hi, lo)
    overflow = np.isinf(nearest) & np.isfinite(hi) & np.isfinite(lo)
    return directed(nearest, np.where(overflow, -np.sign(nearest), np.sign(err)), mode)


def _zero_sum_sign(result, x, y, mode):
    """An exact zero sum x + y rounded down is -0 unless both addends are +0."""
    if mode != "rd":
        return result
    both_plus_zero = (x == 0) & (y == 0) & ~np.signbit(x) & ~np.signbit(y)
    return np.where((x + y == 0) & ~both_plus_zero, -0.0, result).astype(result.dtype)


def add(a, b, mode):
    if a.dtype == np.float32:
        a, b = a.astype(np.float64), b.astype(np.float64)
        return _zero_sum_sign(pair_to_fp32(*two_sum(a, b), mode), a, b, mode)
    return _zero_sum_sign(pair_to_fp64(a, b, mode), a, b, mode)


def sub(a, b, mode):
    return add(a, -b, mode)


def mul(a, b, mode):
    if a.dtype == np.float32:
        return pair_to_fp32(a.astype(np.float64) * b.astype(np.float64), 0.0, mode)
    return _per_element(lambda x, y: Fraction(x) * Fraction(y), np.multiply, mode, a, b)


def fma(a, b, c, mode):
    if a.dtype == np.float32:
        product, addend = a.astype(np.float64) * b.astype(np.float64), c.astype(np.float64)
        return _zero_sum_sign(pair_to_fp32(*two_sum(product, addend), mode), product, addend, mode)
    return np.vectorize(lambda x, y, z: _fma64(x, y, z, mode), otypes=[np.float64])(a, b, c)


def div(a, b, mode):
    if a.dtype == np.float32:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        q = (a64 / b64).astype(np.float32)
        residual = np.sign(a64 - q.astype(np.float64) * b64) * np.sign(b64)
        exact = np.isfinite(a64) & np.isfinite(b64) & (b64 != 0)
        return directed(q, np.where(exact, residual, 0.0), mode)
    return _per_element(
        lambda x, y: Fraction(x) / Fraction(y), np.divide, mode, a, b, valid=lambda x, y: y != 0
    )


def rcp(a, mode):
    return div(np.ones_like(a), a, mode)


def sqrt(a, mode):
    if a.dtype == np.float32:
        a64 = a.astype(np.float64)
        q = np.sqrt(a64).astype(np.float32)
        q64 = q.astype(np.float64)
        exact = np.isfinite(a64) & (a64 > 0)
        return directed(q, np.where(exact, np.sign(a64 - q64 * q64), 0.0), mode)
    root = np.sqrt(a)
    sign = np.vectorize(_sqrt_residual_sign, otypes=[np.float64])(a, root)
    return directed(root, sign, mode)


def rsqrt_rn(a):
    """1 / sqrt(a) for fp32, correctly rounded: the fp64 estimate rounded to fp32 is within an ulp,
    and comparing the exact result with the midpoints around it is exact on rationals
    (y < m  <=>  m * m * a > 1)."""
    guess = (1.0 / np.sqrt(a.astype(np.float64))).astype(np.float32)
    return np.vectorize(_rsqrt_nearest, otypes=[np.float32])(a, guess)


def _rsqrt_nearest(x, guess):
    x, guess = float(x), np.float32(guess)
    if not (math.isfinite(x) and x > 0 and math.isfinite(guess) and guess > 0):
        return guess  # 0 -> inf, inf -> 0, negative -> NaN: already exact
    below = np.nextafter(guess, np.float32(0))
    above = np.nextafter(guess, np.float32(np.inf))

    def midpoint_above_result(low, high) -> int:
        """sign(m * m * x - 1) for the midpoint m of low and high: +1 when 1/sqrt(x) < m."""
        mid = (Fraction(float(low)) + Fraction(float(high))) / 2
        t = mid * mid * Fraction(x)
        return (t > 1) - (t < 1)

    lower = midpoint_above_result(below, guess)
    if lower >= 0:
        return below if lower > 0 or _even32(below) else guess
    upper = midpoint_above_result(guess, above)
    if upper <= 0:
        return above if upper < 0 or _even32(above) else guess
    return guess


def _even32(c) -> bool:
    return int(np.float32(c).view(np.uint32)) & 1 == 0


def _sqrt_residual_sign(x, root) -> float:
    if not (math.isfinite(x) and x > 0):
        return 0.0
    diff = Fraction(x) - Fraction(float(root)) ** 2
    return float((diff > 0) - (diff < 0))


def _per_element(exact, nearest, mode, *arrays, valid=lambda *_: True):
    """fp64 `nearest(*arrays)`, rounded in `mode` from the exact rational result per element."""
    plain = nearest(*arrays)
    if mode == "rn":
        return plain

    def one(*xs):
        result = xs[-1]
        args = xs[:-1]
        if not (all(math.isfinite(x) for x in args) and valid(*args)):
            return result
        q = exact(*args)
        return result if q == 0 else round_fraction(q, mode)

    return np.vectorize(one, otypes=[np.float64])(*arrays, plain)


def _fma64(x, y, z, mode):
    x, y, z = float(x), float(y), float(z)
    if not all(math.isfinite(v) for v in (x, y, z)):
        # Infinite or NaN operands: the product of finite x, y cannot overflow into the sum.
        return z if math.isfinite(x) and math.isfinite(y) else x * y + z
    q = Fraction(x) * Fraction(y) + Fraction(z)
    if q != 0:
        return round_fraction(q, mode)
    product_negative = (math.copysign(1.0, x) * math.copysign(1.0, y)) < 0
    if x * y == 0 and z == 0 and product_negative == (math.copysign(1.0, z) < 0):
        return z
    return -0.0 if mode == "rd" else 0.0


def round_fraction(q: Fraction, mode: str) -> float:
    """The fp64 value of the nonzero rational q, rounded in `mode` (overflow as IEEE)."""
    try:
        nearest = float(q)  # CPython's int / int is correctly rounded
    except OverflowError:
        nearest = math.inf if q > 0 else -math.inf
    if math.isinf(nearest):
        sign = -1.0 if nearest > 0 else 1.0
    else:
        diff = q - Fraction(nearest)
        sign = float((diff > 0) - (diff < 0))
    return float(directed(np.float64(nearest), np.float64(sign), mode))


def _register() -> dict:
    symbols = {
        "__nv_fmaf": lambda a, b, c: fma(a, b, c, "rn"),
        "__nv_fma": lambda a, b, c: fma(a, b, c, "rn"),
        "__nv_frsqrt_rn": rsqrt_rn,
    }
    for mode in MODES:
        for op, fn in (("add", add), ("sub", sub), ("mul", mul), ("div", div)):
            for prefix in ("f", "d"):
                symbols[f"__nv_{prefix}{op}_{mode}"] = lambda a, b, fn=fn, mode=mode: fn(a, b, mode)
        for op, fn in (("rcp", rcp), ("sqrt", sqrt)):
            for prefix in ("f", "d"):
                symbols[f"__nv_{prefix}{op}_{mode}"] = lambda a, fn=fn, mode=mode: fn(a, mode)
        for name in (f"__nv_fmaf_{mode}", f"__nv_fma_{mode}"):
            symbols[name] = lambda a, b, c, mode=mode: fma(a, b, c, mode)
    return symbols


SYMBOLS = _register()
