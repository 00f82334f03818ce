"""Exact references, written independently of Naiad: integer results on Python integers wrapped to
the result's width (`//` and `%` are C's: truncation toward zero, remainder with the dividend's
sign); float results computed exactly and rounded once with `round_float`, our own
round-to-nearest-even (or toward zero) onto each format's grid, so no NumPy/ml_dtypes cast stands
in the reference path; and the GPU's float `%` (`gpu_float_rem`)."""

from __future__ import annotations

import fractions
import math

import numpy as np
from dtype_tables import _FORMATS, bitwidth, is_float, is_signed, np_dtype


def pyints(a) -> list[int]:
    """The values of an integer or bool array as Python integers."""
    return [int(v) for v in np.asarray(a).reshape(-1)]


def wrap(values, dtype: str) -> np.ndarray:
    """Python integers reduced modulo 2**bits into `dtype` (two's complement for signed types)."""
    bits = bitwidth(dtype)
    out = []
    for v in values:
        v %= 1 << bits
        if is_signed(dtype) and v >= 1 << (bits - 1):
            v -= 1 << bits
        out.append(v)
    if dtype == "int1":
        return np.array(out, dtype=bool)
    return np.array(out, dtype=object).astype(np_dtype(dtype))


def c_div(a: int, b: int) -> int:
    """C's integer division: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_rem(a: int, b: int) -> int:
    """C's remainder: a - b * c_div(a, b), with the sign of the dividend."""
    return a - b * c_div(a, b)


def gpu_float_rem(x, y, dtype: str) -> np.ndarray:
    """Float `%` as compiled for the GPU, by Naiad and by Triton alike: both emit LLVM's `frem`,
    which the NVPTX back end expands to fma.rn(-trunc(div.rn(x, y)), y, x), then x where y is
    infinite. This is not C's fmod: the quotient rounds (and may overflow to inf), so the result
    can be far off, and an exact cancellation gives +0.0 where fmod keeps the dividend's sign."""
    out = []
    for a, b in zip(np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()):
        if np.isinf(b):
            out.append(a)
            continue
        with np.errstate(all="ignore"):
            q = np.divide(a, b)  # right where it is not finite or zero (IEEE's specials)
        if np.isfinite(a) and np.isfinite(b) and b != 0 and a != 0:  # (0 / b keeps its sign)
            q = _rounded_once(fractions.Fraction(a) / fractions.Fraction(b), dtype)
        t = np.trunc(q)
        fused = (
            fractions.Fraction(a) - fractions.Fraction(t) * fractions.Fraction(b)
            if np.isfinite(t)
            else 0
        )
        if fused == 0:  # specials and exact cancellations: float64 computes these exactly
            with np.errstate(all="ignore"):
                out.append(np.float64(a) - t * np.float64(b))
        else:
            out.append(_rounded_once(fused, dtype))
    return round_float(np.array(out, np.float64), dtype).reshape(np.shape(x))


def _rounded_once(exact: fractions.Fraction, dtype: str) -> np.float64:
    """`exact` rounded to nearest on `dtype`'s grid, overflowing to a signed infinity."""
    try:
        return np.float64(round_float([exact], dtype)[0])
    except OverflowError:
        return np.float64(math.inf if exact > 0 else -math.inf)


def round_float(values, dtype: str, rounding: str = "rtne") -> np.ndarray:
    """Exact values (float64, Python ints or Fractions) rounded once onto `dtype`'s grid.

    rtne: to nearest, ties to even, overflow to inf; rtz: toward zero, overflow to the largest
    finite value. Subnormals are kept. NaN stays NaN, infinities and zeros keep their sign.
    """
    shape = np.shape(values)
    flat = np.asarray(values, dtype=object).reshape(-1)
    exact64 = all(
        isinstance(v, (float, np.floating))
        or (isinstance(v, (int, np.integer)) and abs(int(v)) < 2**53)
        for v in flat
    )
    if exact64:
        out = _round_float64(np.array([float(v) for v in flat], np.float64), dtype, rounding)
    else:
        out = np.array(
            [_round_exact(fractions.Fraction(v), dtype, rounding) for v in flat], np.float64
        )
    # Every value is now exact in float64 and on the grid of `dtype`: the cast does not round.
    return out.astype(np_dtype(dtype)).reshape(shape)


def _largest(dtype: str) -> float:
    p, _, emax = _FORMATS[dtype]
    return (2 - 2.0 ** (1 - p)) * 2.0**emax


def _round_float64(x: np.ndarray, dtype: str, rounding: str) -> np.ndarray:
    if dtype == "float64":  # already on the grid (and 1 / the subnormal spacing overflows)
        return x.copy()
    p, emin, _ = _FORMATS[dtype]
    magnitude = np.abs(x)
    regular = np.isfinite(x) & (x != 0)
    safe = np.where(regular, magnitude, 1.0)
    _, e2 = np.frexp(safe)  # safe = m * 2**e2 with m in [0.5, 1)
    e = np.maximum(e2 - 1, emin)
    scale = np.ldexp(1.0, (p - 1 - e).astype(np.int64))  # 1 / (the spacing of the grid at x)
    scaled = safe * scale  # exact: a power-of-two scaling
    whole = np.rint(scaled) if rounding == "rtne" else np.trunc(scaled)  # rint: ties to even
    with np.errstate(over="ignore"):
        result = whole / scale
    over = result > _largest(dtype)
    result = np.where(over, _largest(dtype) if rounding == "rtz" else np.inf, result)
    result = np.where(regular, np.copysign(result, x), x)
    return result


def _round_exact(exact: fractions.Fraction, dtype: str, rounding: str) -> float:
    if exact == 0:
        return 0.0
    p, emin, _ = _FORMATS[dtype]
    magnitude = abs(exact)
    e = max(_floor_log2(magnitude), emin)
    quantum = fractions.Fraction(2) ** (e - p + 1)
    whole, rest = divmod(magnitude / quantum, 1)
    half = fractions.Fraction(1, 2)
    if rounding == "rtne" and (rest > half or (rest == half and whole % 2 == 1)):
        whole += 1
    result = float(whole * quantum)
    if result > _largest(dtype):
        result = _largest(dtype) if rounding == "rtz" else math.inf
    return -result if exact < 0 else result


def _floor_log2(x: fractions.Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if fractions.Fraction(2) ** e > x:
        e -= 1
    elif fractions.Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def exact_values(a) -> list:
    """The exact values of an array: Python ints for integers, Fractions (or inf/NaN) for floats."""
    a = np.asarray(a)
    if a.dtype == bool or a.dtype.kind in "iu":
        return pyints(a)
    out = []
    for v in a.astype(np.float64).reshape(-1):
        out.append(float(v) if not math.isfinite(v) else fractions.Fraction(float(v)))
    return out


def convert(a, src: str, dst: str) -> np.ndarray:
    """`a` (of dtype `src`) converted to `dst` as Triton's implicit casts convert it, for the
    conversions binary operators make: int -> int wraps, int -> float rounds to nearest even,
    float -> wider float is exact."""
    if src == dst:
        return np.asarray(a)
    if not is_float(dst):
        assert not is_float(src), (src, dst)
        if dst == "int1":
            return np.asarray(a) != 0
        return wrap(pyints(a), dst)
    if is_float(src):
        assert _FORMATS[src][0] <= _FORMATS[dst][0], (src, dst)  # bf16 -> fp16 rounds, once
        return round_float(np.asarray(a).astype(np.float64), dst)
    return round_float(pyints(a), dst)
