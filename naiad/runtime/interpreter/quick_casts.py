"""Float conversions given bit for bit by cheaper means than floats.py's bit-level path.

The bit-level path (decode, round, encode: some forty NumPy calls) costs a launch a tenth of a
millisecond per conversion, and a kernel converts often: each float constant, each `.to(fp16)`
of a block. `convert` gives the same bits from NumPy's own casts or from tables, and None where
it has no cheaper way (floats.py then takes its bit-level path):

- Between fp64, fp32, fp16 and bf16 (but fp64 -> bf16, which ml_dtypes rounds twice, through
  fp32), NumPy's and ml_dtypes' casts are one round-to-nearest-even step that keeps subnormals
  and overflows to inf, as the GPU's `cvt.rn`; toward zero is that result stepped back one place
  where it landed farther from zero than the source (an overflow to inf steps back to the
  largest finite, and inf stays inf), as `cvt.rz`. Widening is exact. Only NaN differs (the GPU
  gives the canonical NaN or keeps the payload, depending on the pair), so an array holding a
  NaN goes to the bit-level path. bf16 -> fp32 is a shift, every NaN included.
- From an fp8 format to any type, and between fp16, bf16 and the fp8 formats: a table of the
  bit-level path's answer for each source pattern, filled in as patterns come (a block holds a
  few thousand of the 2**16 fp16 patterns; all of them would cost a launch 5-7 ms).
- fp32 -> an fp8 format: first to fp16 by round-to-odd (toward zero, the last bit set when
  anything was cut off; beyond 65504 it gives 65504 | 1). fp16 keeps at least two bits more than
  any fp8 format, over the whole fp8 range, so rounding that once more in either mode gives what
  rounding the fp32 value once gives, and a magnitude past 65504 rounds as 65504 does (each
  fp8's largest value is below it: it saturates or, toward zero, stops at the largest finite).
  Then the fp16 table. fp8e4b15 is defined by Triton through `cvt.rz.f16.f32` instead, which is
  the stepped cast above.
"""

from __future__ import annotations

import numpy as np

from .float_formats import numpy_dtype

_CASTABLE = {"fp64", "fp32", "fp16", "bf16"}
_FP8 = {"fp8e5", "fp8e4nv", "fp8e4b8", "fp8e5b16", "fp8e4b15"}
_NARROW = {"fp16", "bf16", *_FP8}
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_TABLES: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}  # values, known


def convert(array: np.ndarray, src: str, dst: str, rounding: str, exact):
    """`array` (of type `src`, not `dst`) as `dst`, bit for bit what `exact(array, src, dst,
    rounding)` (the bit-level path) gives, or None where no cheaper way is known."""
    if src in _FP8 or (src in _NARROW and dst in _NARROW):
        return _lookup(src, dst, rounding, exact, array.view(_UINT[array.dtype.itemsize * 8]))
    if src == "bf16" and dst == "fp32":
        return (array.view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
    if src in _CASTABLE and dst in _CASTABLE and (src, dst) != ("fp64", "bf16"):
        if np.isnan(array).any() or not _keeps_subnormals():
            return None
        return _cast(array, numpy_dtype(dst), rounding)
    if src == "fp32" and dst in _FP8:
        if np.isnan(array).any() or not _keeps_subnormals():
            return None
        if dst == "fp8e4b15":
            half = _cast(array, np.dtype(np.float16), "rtz").view(np.uint16)
        else:
            half = _fp16_to_odd(array)
        return _lookup("fp16", dst, rounding, exact, half)
    return None


_SUBNORMAL = 2.0**-140  # an fp32 subnormal


def _keeps_subnormals() -> bool:
    """Whether this thread's float unit keeps subnormal results and inputs, as the GPU's `cvt`s
    do: `torch.set_flush_denormal(True)` (or a library) may have set the flush-to-zero and
    denormals-are-zero modes, which NumPy's casts obey and the bit-level path ignores."""
    return float(np.array(_SUBNORMAL, np.float32).astype(np.float64)) == _SUBNORMAL


def _cast(array: np.ndarray, dtype: np.dtype, rounding: str) -> np.ndarray:
    """NumPy's round-to-nearest-even cast, stepped toward zero for rtz where it went away."""
    nearest = array.astype(dtype)
    if rounding == "rtne" or dtype.itemsize >= array.dtype.itemsize:
        return nearest
    away = np.abs(nearest.astype(array.dtype)) > np.abs(array)  # never at 0: no borrow
    bits = nearest.view(_UINT[dtype.itemsize * 8])
    return (bits - away.astype(bits.dtype)).view(dtype)


def _fp16_to_odd(x: np.ndarray) -> np.ndarray:
    """The fp16 bit patterns of fp32 `x` (no NaN) rounded to odd: toward zero, the last bit set
    where the value was not exact (past 65504: 65504, already odd)."""
    nearest = x.astype(np.float16)
    back = nearest.astype(np.float32)
    bits = nearest.view(np.uint16)
    bits = bits - (np.abs(back) > np.abs(x)).astype(np.uint16)
    return bits | (back != x).astype(np.uint16)


def _lookup(src: str, dst: str, rounding: str, exact, patterns: np.ndarray) -> np.ndarray:
    """The bit-level path's `dst` values of the `src` bit `patterns` (unsigned integers), from
    the pair's table, where the patterns not met before are converted and kept first."""
    key = (src, dst, rounding)
    entry = _TABLES.get(key)
    if entry is None:
        size = 1 << (numpy_dtype(src).itemsize * 8)
        entry = _TABLES[key] = (np.empty(size, numpy_dtype(dst)), np.zeros(size, bool))
    table, known = entry
    if not known[patterns].all():
        new = np.unique(patterns[~known[patterns]])
        table[new] = exact(new.view(numpy_dtype(src)), src, dst, rounding)
        known[new] = True
    return table[patterns]
