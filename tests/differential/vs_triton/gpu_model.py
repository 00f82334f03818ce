"""Models of the GPU's rules, for the lanes where Triton's interpreter is not the GPU: conversions
(one rounding, saturation, cvt.rzi), float binary operators in their computation type, integer
// and % (by zero included), and the types and values of Python constants in compiled Triton.
"""

import bisect
import math
from fractions import Fraction
from functools import cache

import numpy as np

from .harness import FP8, NUMPY, WIDTH, is_float, is_int
from .kernel_sources import COMPARISONS


def exact(values, dtype):
    """Values as exact Python numbers (int, or float for floats: every format fits a double)."""
    flat = np.asarray(values).reshape(-1)
    if is_int(dtype):
        return [int(v) for v in flat]
    return [float(v) for v in flat.astype(np.float64)]


@cache
def _table(fmt):
    """Non-negative finite values of an 8/16-bit float format, ascending, with their bits."""
    width = WIDTH[fmt]
    bits = np.arange(1 << (width - 1), dtype=f"uint{width}")
    values = bits.view(NUMPY[fmt]).astype(np.float64)
    keep = np.isfinite(values)
    return [float(v) for v in values[keep]], [int(b) for b in bits[keep]]


# Overflow rule per (format, rounding): "ieee" (rtne -> inf, rtz -> largest finite, inf stays),
# "sat" (cvt .satfinite: beyond the largest finite, inf included -> largest finite).
_OVERFLOW = {
    ("fp8e4nv", "rtne"): "sat",
    ("fp8e4nv", "rtz"): "sat",
    ("fp8e5", "rtne"): "sat",
    ("fp8e5", "rtz"): "ieee",
}


def _pick(value, below, above, below_even, rounding):
    """Round `value` (exact, between the neighbours `below` < `above`) to one of them."""
    if rounding == "rtz":
        return below
    lo, hi = Fraction(value) - Fraction(below), Fraction(above) - Fraction(value)
    if lo != hi:
        return below if lo < hi else above
    return below if below_even else above


def round_to(value, fmt, rounding="rtne"):
    """One GPU rounding step of the exact number `value` into float format `fmt`, as an array of
    one element of NUMPY[fmt]."""
    dtype = NUMPY[fmt]
    if isinstance(value, float) and math.isnan(value):
        return np.array(np.nan).astype(dtype)
    negative = value < 0 or (isinstance(value, float) and math.copysign(1.0, value) < 0)
    magnitude = -value if value < 0 else value
    if fmt in ("fp32", "fp64"):
        big = np.finfo(dtype).max
        if magnitude > big:
            info = np.finfo(dtype)
            half_ulp = Fraction(2) ** (info.maxexp - 2 - info.nmant)
            limit = Fraction(float(big)) + half_ulp
            if magnitude == math.inf or (rounding == "rtne" and Fraction(magnitude) >= limit):
                result = math.inf
            else:
                result = float(big)
        else:
            guess = np.array(float(magnitude)).astype(dtype)
            near = [
                np.nextafter(guess, dtype.type(0)),
                guess,
                np.nextafter(guess, dtype.type(np.inf)),
            ]
            below = max((c for c in near if Fraction(float(c)) <= magnitude), key=float)
            above = min((c for c in near if Fraction(float(c)) >= magnitude), key=float)
            if Fraction(float(below)) == magnitude:
                result = float(below)
            else:
                even = int(np.array(below).view(f"uint{WIDTH[fmt]}")) % 2 == 0
                result = float(_pick(magnitude, float(below), float(above), even, rounding))
        return np.array(-result if negative else result).astype(dtype)
    values, bits = _table(fmt)
    top = values[-1]
    rule = _OVERFLOW.get((fmt, rounding), "ieee")
    if magnitude == math.inf:
        result = top if rule == "sat" or not np.isinf(np.array(np.inf).astype(dtype)) else math.inf
    elif magnitude > top:
        step = top - values[-2]
        if rule == "sat" or rounding == "rtz":
            result = top
        else:
            result = math.inf if Fraction(magnitude) >= Fraction(top) + Fraction(step) / 2 else top
        if result == math.inf and not np.isinf(np.array(np.inf).astype(dtype)):
            result = math.nan
    else:
        i = bisect.bisect_left(values, magnitude)
        if values[i] == magnitude:
            result = values[i]
        else:
            result = _pick(magnitude, values[i - 1], values[i], bits[i - 1] % 2 == 0, rounding)
    return np.array(-result if negative else result).astype(dtype)


def gpu_convert(values, src, dst, rounding="rtne"):
    """The GPU's conversion of `values` (NUMPY[src]) to `dst` (floats.py's documented facts)."""
    out = []
    raw = np.asarray(values).reshape(-1).view(f"uint{WIDTH[src]}") if src != "int1" else None
    for i, v in enumerate(exact(values, src)):
        if dst == "int1":
            out.append(v != 0)
        elif is_int(dst):
            whole = _float_to_int(v, src, dst) if is_float(src) else wrap(v, dst)
            out.append(whole)
        elif src == "fp8e5" and dst == "bf16" and not math.isfinite(v):
            # The GPU shifts the bits into place and multiplies by 2**112 (floats.py): inf ->
            # 65536 and the NaNs 0x7d, 0x7e, 0x7f -> 81920, 98304, 114688, sign kept.
            code = int(raw[i])
            big = {0x7C: 65536.0, 0x7D: 81920.0, 0x7E: 98304.0, 0x7F: 114688.0}[code & 0x7F]
            out.append(-big if code & 0x80 else big)
        else:
            out.append(round_to(v, dst, rounding).item())
    return np.array(out, dtype=object).astype(NUMPY[dst]).reshape(np.shape(values))


def wrap(v, dtype):
    """The integer `v` wrapped around into `dtype` (two's complement)."""
    width, signed = WIDTH[dtype], not dtype.startswith("u")
    v &= (1 << width) - 1
    return v - (1 << width) if signed and v >= 1 << (width - 1) else v


def _float_to_int(v, src, dst):
    """cvt.rzi: truncate, saturate at max(width, 16) bits, keep the low bits (floats.py)."""
    width = WIDTH[dst]
    signed = not dst.startswith("u")
    wide = max(width, 16)
    lo, hi = (-(1 << (wide - 1)), (1 << (wide - 1)) - 1) if signed else (0, (1 << wide) - 1)
    if math.isnan(v):
        whole = (1 << (wide - 1)) if src == "fp64" or wide == 64 else 0
    elif v == math.inf:
        whole = hi
    elif v == -math.inf:
        whole = lo
    else:
        whole = min(max(math.trunc(v), lo), hi)
    return wrap(whole, dst)


def computation_float(a, b, op):
    """The float computation type of `a op b` for tensor operands (Triton's rules)."""
    if "fp64" in (a, b):
        return "fp64"
    if "fp32" in (a, b) or {a, b} == {"fp16", "bf16"}:
        return "fp32"
    if "fp16" in (a, b):
        return "fp32" if op in ("truediv", "mod") else "fp16"
    if a == b == "bf16":
        return "fp32" if op in ("truediv", "mod") else "bf16"
    return "fp32"  # bf16 with an integer


_NP_OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.divide,
    "mod": np.fmod,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}


def gpu_float_binary(op, x, a, y, b, comp):
    """`x op y` computed in float type `comp` (operands converted exactly / by one rounding)."""
    work = np.float64 if comp == "fp64" else np.float32

    def to_work(v, dtype):
        if is_float(dtype):
            return np.asarray(v).astype(np.float64).astype(work)
        return gpu_convert(v, dtype, "fp64" if comp == "fp64" else "fp32").astype(work)

    with np.errstate(all="ignore"):
        xs, ys = to_work(x, a), to_work(y, b)
        if comp in ("bf16", "fp16"):  # exact operands in the narrow type: round them there
            xs = xs.astype(NUMPY[comp]).astype(np.float32)
            ys = ys.astype(NUMPY[comp]).astype(np.float32)
        result = _NP_OPS[op](xs, ys)
    if op in COMPARISONS:
        return result
    # fp32 keeps 24 >= 2 * 8 + 2 bits: rounding its result again to bf16/fp16 is one rounding.
    return result.astype(NUMPY[comp])


def gpu_int_divide(op, x, y, dtype):
    """Integer // and % as the GPU gives them, by zero and INT_MIN // -1 included."""
    out = []
    for a, b in zip(exact(x, dtype), exact(y, dtype)):
        if b == 0:
            r = a if op == "mod" else -1  # all ones, as unsigned too (wrapped below)
        else:
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C: toward zero
            r = a - q * b if op == "mod" else q
        out.append(wrap(r, dtype))
    return np.array(out, dtype=object).astype(NUMPY[dtype])


def literal_type(value) -> str:
    """Triton's type of a Python number inside a kernel (`to_tensor_type`)."""
    if isinstance(value, bool):
        return "int1"
    if isinstance(value, int):
        for name, lo, hi in (
            ("int32", -(2**31), 2**31),
            ("uint32", 2**31, 2**32),
            ("int64", -(2**63), 2**63),
            ("uint64", 2**63, 2**64),
        ):
            if lo <= value < hi:
                return name
        raise ValueError(value)
    if value == 0 or not math.isfinite(value) or 2.0**-126 <= abs(value) <= 3.4028234663852886e38:
        return "fp32"
    return "fp64"


def scalar_constant(value, dtype) -> np.ndarray:
    """Triton's `scalar_constant(value, dtype)` as compiled: zero is the null value (+0), fp16 and
    bf16 constants are made from a C float (rounded to fp32 first)."""
    if value == 0:
        value = 0
    if is_int(dtype):
        return np.array(
            [wrap(int(value), dtype)] if dtype != "int1" else [bool(value)], dtype=object
        ).astype(NUMPY[dtype])
    if dtype in ("fp16", "bf16") or dtype in FP8:
        return gpu_convert(np.array([float(value)], np.float64).astype(np.float32), "fp32", dtype)
    return gpu_convert(np.array([float(value)], np.float64), "fp64", dtype)
