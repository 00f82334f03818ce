"""libdevice's conversions between floats and integers, in every rounding mode, bit-exact.

Float -> integer follows PTX `cvt.{rni,rzi,rmi,rpi}`: round to an integer in the mode, then
saturate to the destination's range (negative values give 0 for unsigned destinations). NaN gives
0 from fp32 to a 32-bit integer, and the sign-bit pattern (0x80000000, 0x8000000000000000) from
fp64 or to a 64-bit integer: what an H200 answers under Triton. Integer -> float and
fp64 -> fp32 round the exact value once, in the mode.
"""

from __future__ import annotations

import numpy as np

from .elementary import round_half_away
from .rounding import MODES, pair_to_fp32, pair_to_fp64, two_sum

_TO_INTEGRAL = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def float_to_int(x: np.ndarray, to_integral, dtype) -> np.ndarray:
    """x rounded to an integer by `to_integral`, saturated to `dtype`; NaN as the GPU gives it."""
    x, dtype = np.asarray(x), np.dtype(dtype)
    info = np.iinfo(dtype)
    bits = 8 * dtype.itemsize
    integral = to_integral(x.astype(np.float64))
    too_big = integral >= 2.0 ** (bits - (info.min < 0))  # exact powers of two
    too_small = integral < float(info.min)
    nan = np.isnan(integral)
    result = np.where(too_big | too_small | nan, 0.0, integral).astype(dtype)
    result = np.where(too_big, info.max, np.where(too_small, info.min, result)).astype(dtype)
    if x.dtype == np.float32 and bits == 32:
        return result
    sign_bit = np.array(1 << (bits - 1), dtype=f"uint{bits}").view(dtype)
    return np.where(nan, sign_bit, result).astype(dtype)


def int_to_fp32(x: np.ndarray, mode: str) -> np.ndarray:
    hi, lo = _exact_pair(x)
    return pair_to_fp32(*two_sum(hi, lo), mode)


def int_to_fp64(x: np.ndarray, mode: str) -> np.ndarray:
    return pair_to_fp64(*_exact_pair(x), mode)


def _exact_pair(x: np.ndarray):
    """Two doubles whose sum is the integer x exactly: its high and low 32-bit halves."""
    x = np.asarray(x)
    wide = x.astype(np.int64) if x.dtype.kind == "i" else x.astype(np.uint64)
    high = (wide >> wide.dtype.type(32)).astype(np.float64) * 2.0**32
    low = (wide & wide.dtype.type(0xFFFFFFFF)).astype(np.float64)
    return high, low


def _fp64_to_fp32(x, mode):
    return pair_to_fp32(np.asarray(x, dtype=np.float64), np.zeros(np.shape(x)), mode)


def _register() -> dict:
    symbols = {}
    for mode in MODES:
        for src, dst, dtype in (
            ("double", "int", np.int32),
            ("double", "uint", np.uint32),
            ("float", "int", np.int32),
            ("float", "uint", np.uint32),
            ("float", "ll", np.int64),
            ("float", "ull", np.uint64),
            ("double", "ll", np.int64),
            ("double", "ull", np.uint64),
        ):
            symbols[f"__nv_{src}2{dst}_{mode}"] = lambda x, mode=mode, dtype=dtype: float_to_int(
                x, _TO_INTEGRAL[mode], dtype
            )
        for src in ("int", "uint", "ll", "ull"):
            symbols[f"__nv_{src}2float_{mode}"] = lambda x, mode=mode: int_to_fp32(x, mode)
        for src in ("ll", "ull"):
            symbols[f"__nv_{src}2double_{mode}"] = lambda x, mode=mode: int_to_fp64(x, mode)
        symbols[f"__nv_double2float_{mode}"] = lambda x, mode=mode: _fp64_to_fp32(x, mode)
    symbols["__nv_int2double_rn"] = symbols["__nv_uint2double_rn"] = lambda x: np.asarray(x).astype(
        np.float64
    )
    symbols["__nv_llrintf"] = symbols["__nv_llrint"] = lambda x: float_to_int(x, np.rint, np.int64)
    symbols["__nv_llroundf"] = symbols["__nv_llround"] = lambda x: float_to_int(
        x, round_half_away, np.int64
    )
    return symbols


SYMBOLS = _register()
