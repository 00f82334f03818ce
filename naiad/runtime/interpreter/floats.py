"""Scalar type conversions of the NumPy interpreter, bit-exact with Triton's code on Hopper (sm_90).

`convert(values, src, dst, rounding)` is the one entry: `src` and `dst` are Triton type names
("fp32", "fp8e4nv", "uint16", ...), `rounding` is `fp_downcast_rounding` ("rtne" or "rtz").
`numpy_dtype(name)` gives the array dtype of each type; fp8e4b15 has no NumPy or ml_dtypes type and
is held as its uint8 bit patterns. ml_dtypes' own casts are not used for rounding: they map
overflow to NaN or inf where the GPU saturates, have no round-toward-zero, and round int -> bf16
twice (through fp32).

What Triton 3.6 emits for each conversion on sm_90, read from `language/semantic.py` (`cast`),
`third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/ElementwiseOpToLLVM.cpp` (`FpToFpOpConversion`),
`third_party/nvidia/language/cuda/utils.py` (the fp8e4b15 conversions), the PTX ISA `cvt` section
and CUDA's `cuda_fp8.hpp`, then measured on an H200 over every 8- and 16-bit pattern and seeded
32- and 64-bit samples (`tests/gpu/test_floats_triton.py`):

- Every float -> float conversion below is one correctly rounded step from the exact source value,
  except the two fp8e4b15 cases and the fp8e5 -> bf16 case noted. Subnormals are kept (no `.ftz`).
- fp32 -> fp16 / bf16: `cvt.{rn,rz}.{f16,bf16}.f32`; fp64 -> fp32 / fp16 / bf16: `cvt.rn.*.f64`;
  fp16 <-> bf16 and fp16 / bf16 -> fp64 go through fp32, which is exact. IEEE overflow: rtne
  gives inf, rtz the largest finite value; inf stays inf.
- fp16 / bf16 / fp32 -> fp8e4nv or fp8e5, rtne: `cvt.rn.satfinite.{e4m3x2,e5m2x2}` (bf16 first
  widened to fp32). `.satfinite`: a magnitude beyond the largest finite (448 / 57344), infinities
  included, becomes the signed largest finite value.
- fp32 -> fp8e5, rtz: `cvt.rz.f16.f32`, then the low byte of the fp16 is dropped. Two nested
  truncations are one, so this is rtz with IEEE overflow: finite -> +-57344, inf stays inf.
- fp8e4nv / fp8e5 -> fp16: `cvt.rn.f16x2.{e4m3x2,e5m2x2}`, exact; -> fp32 adds an exact fpext;
  fp8e4nv -> bf16 goes through fp16 (exact).
- fp8e5 -> bf16 shifts the bits into bf16 position and multiplies by 2**112 (`mul.rn.bf16x2`):
  exact for finite values, but the all-ones exponent is not special there, so +-inf (0x7c) becomes
  +-65536 and the NaNs 0x7d / 0x7e / 0x7f become 81920 / 98304 / 114688 (sign kept).
- fp8e4b15 (bias 15, no inf, no NaN, 0x7f = 1.875) -> fp16 moves bits: sign, then the 7 low bits
  shifted left by 7; exact. Triton returns that fp16 tensor for every destination but fp32 (which
  adds an fpext), and a store casts it onward; we give the fp16 value converted to `dst`.
- fp16 -> fp8e4b15: |x| is clamped to 1.75 with `min.f16x2`, which returns the non-NaN operand, so
  NaN and inf become 1.75 and 0x7f is never produced; then it rounds to nearest with ties AWAY
  from zero (bits + 0x40, >> 7) and copies the fp16 sign bit. The rounding mode is ignored.
- fp32 -> fp8e4b15: `cvt.rz.f16.f32` first, then as fp16: rounded twice.
- NaN: fp8 and fp16 sources and fp8 / fp16 / bf16 results from fp32 give the canonical NaN
  (positive, every mantissa bit set: 0x7fff, 0x7fffffff, fp8 0x7f). The fp64 <-> fp32 and
  fp64 -> fp16 / bf16 `cvt`s keep the sign and the leading payload bits, quieted; bf16 -> fp32 is
  a plain shift that keeps every bit, signalling NaNs too.
- float -> int: `cvt.rzi`: truncate toward zero and saturate, at 16 bits at least: an 8-bit result
  is the low byte of the 16-bit conversion (300.0 -> int8 44). NaN gives 0, except 0x80...0 from
  fp64 sources and into 64-bit integers. float -> int1 is `x != 0`, unordered: NaN -> 1.
- int -> float: `cvt.rn`, one round-to-nearest-even step (int64 -> fp32 too; int32 -> bf16 too).
  int -> int wraps (truncate, or sign/zero-extend by the source's signedness).

Triton refuses these on NVIDIA, yet other targets (and Triton's interpreter) allow them, so they
get the nearest consistent meaning: fp8e4b8 / fp8e5b16 (not supported on NVIDIA) round like the
others with AMD's software rule (`ConvertFpCastOpToLLVM.cpp`): finite overflow saturates, inf and
NaN become 0x80, no -0. fp64 <-> fp8, fp8 <-> fp8, fp8 <-> int and rtz other than from fp32 to
fp16 / bf16 / fp8e5 are one rounding step with the destination's rule above (fp8e4nv saturates in
rtz too); fp8 -> fp64 and fp8 -> int go through fp32 and fp16 as Triton's fp8e4b15 does. To
fp8e4b15 from anything but fp16 goes through fp16 by rtz, as fp32 does.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import quick_casts
from .float_formats import (
    FNUZ,
    FORMATS,
    IEEE,
    INT_TYPES,
    SATFINITE,
    Exact,
    decode,
    encode,
    from_bits,
    numpy_dtype,
    to_bits,
)

__all__ = ["convert", "from_float64", "numpy_dtype", "to_float64"]

_FP16 = FORMATS["fp16"]


def convert(values, src: str, dst: str, rounding: str = "rtne") -> np.ndarray:
    """Convert `values` (held as `numpy_dtype(src)`) from Triton type `src` to `dst`, as the GPU
    does. `rounding` applies where `dst` is a float; float -> int always truncates."""
    if rounding not in ("rtne", "rtz"):
        raise ValueError(f"rounding must be 'rtne' or 'rtz', got {rounding!r}")
    array = np.asarray(values)
    if array.dtype != numpy_dtype(src):
        raise TypeError(f"{src} values must be held as {numpy_dtype(src)}, got {array.dtype}")
    if src == dst:
        return array.copy()
    with np.errstate(all="ignore"):
        quick = quick_casts.convert(array, src, dst, rounding, _bit_level)
        return _bit_level(array, src, dst, rounding) if quick is None else np.asarray(quick)


def _bit_level(array: np.ndarray, src: str, dst: str, rounding: str) -> np.ndarray:
    """`convert` on the bits: decode each value exactly, then round it into `dst` (under
    `convert`'s errstate)."""
    dst_dtype = numpy_dtype(dst)
    if dst in INT_TYPES:
        if src in INT_TYPES:
            return array != 0 if dst == "int1" else array.astype(dst_dtype)
        return _float_to_int(to_float64(array, src), src == "fp64", dst_dtype)
    if src in INT_TYPES:
        bits = _round_into(_exact_int(array, src), dst, rounding)
    else:
        bits = _float_to_float(to_bits(array, src), src, dst, rounding)
    return from_bits(bits, dst)


def to_float64(values, name: str) -> np.ndarray:
    """Float values of type `name` as float64, exactly (every format fits); NaN loses its sign.
    An infinity's or NaN's lane overflows `ldexp` before `where` replaces it: not worth a
    warning."""
    exact = decode(to_bits(values, name), FORMATS[name])
    with np.errstate(over="ignore"):
        magnitude = np.ldexp(exact.sig.astype(np.float64), exact.exp)
    magnitude = np.where(exact.inf, np.inf, np.where(exact.nan, np.nan, magnitude))
    return np.where(exact.neg & ~exact.nan, -magnitude, magnitude)


def from_float64(values, name: str, rounding: str = "rtne") -> np.ndarray:
    """float64 values converted to type `name`, as an fp64 -> `name` cast on the GPU."""
    return convert(np.asarray(values, np.float64), "fp64", name, rounding)


def _overflow_rule(dst: str, rounding: str) -> str:
    if dst in ("fp8e4b8", "fp8e5b16"):
        return FNUZ
    if dst == "fp8e4nv" or (dst == "fp8e5" and rounding == "rtne"):
        return SATFINITE
    return IEEE


def _float_to_float(bits: np.ndarray, src: str, dst: str, rounding: str) -> np.ndarray:
    if src == "fp16" and dst == "fp8e4b15":
        return _fp16_to_fp8e4b15(bits)
    if src == "bf16" and dst == "fp32":
        return bits << np.uint64(16)  # a shift: every NaN, signalling too, keeps its bits
    if (dst == "fp64" and src != "fp32") or {src, dst} == {"fp16", "bf16"}:
        in_fp32 = _float_to_float(bits, src, "fp32", rounding)
        return _float_to_float(in_fp32, "fp32", dst, rounding)
    exact = decode(bits, FORMATS[src])
    if src == "fp8e5" and dst == "bf16":
        no = np.zeros(bits.shape, bool)
        exact = dataclasses.replace(exact, nan=no, inf=no)  # the 2**112 multiply sees numbers
    # The cvt between fp64 and fp32 / fp16 / bf16 keeps a NaN's sign and payload.
    return _round_into(exact, dst, rounding, nan_payload="fp64" in (src, dst))


def _round_into(exact: Exact, dst: str, rounding: str, nan_payload: bool = False) -> np.ndarray:
    if dst == "fp8e4b15":
        return _fp16_to_fp8e4b15(encode(exact, _FP16, "rtz", IEEE))
    keep_payload = nan_payload and FORMATS[dst].width > 8
    return encode(exact, FORMATS[dst], rounding, _overflow_rule(dst, rounding), keep_payload)


def _fp16_to_fp8e4b15(half: np.ndarray) -> np.ndarray:
    """Triton's fp16 -> fp8e4b15 on the bits: clamp |x| to 1.75 (0x3f00), round half away.

    As integers, the NaN and inf magnitudes are above 0x3f00, so one comparison also gives
    `min.f16x2`'s answer for them (1.75).
    """
    magnitude = np.minimum(half & np.uint64(0x7FFF), np.uint64(0x3F00))
    rounded = (magnitude + np.uint64(0x40)) >> np.uint64(7)
    return rounded | ((half >> np.uint64(8)) & np.uint64(0x80))


def _exact_int(array: np.ndarray, src: str) -> Exact:
    zeros = np.zeros(array.shape, bool)
    if src == "int1" or src.startswith("uint"):
        neg, magnitude = zeros, array.astype(np.uint64)
    else:
        wide = array.astype(np.int64)
        neg = wide < 0
        as_unsigned = wide.view(np.uint64)
        magnitude = np.where(neg, ~as_unsigned + np.uint64(1), as_unsigned)  # |INT64_MIN| fits
    return Exact(neg, magnitude, np.zeros(array.shape, np.int64), zeros, zeros)


def _float_to_int(x: np.ndarray, from_fp64: bool, dst_dtype: np.dtype) -> np.ndarray:
    """`cvt.rzi` of float64 `x`: truncate toward zero and saturate, at 16 bits at least.

    PTX has no 8-bit registers, so an 8-bit result is the low byte of the 16-bit conversion (300.0
    -> int8 44, 1e6 -> int8 -1). NaN gives the width's lowest signed pattern (0x80...0) from fp64
    or into 64 bits, else 0.
    """
    if dst_dtype == np.bool_:
        return x != 0
    info = np.iinfo(dst_dtype)
    width = max(info.bits, 16)
    wide = np.iinfo(f"{'int' if info.kind == 'i' else 'uint'}{width}")
    whole = np.trunc(x)
    # The bounds are powers of two, exact in float64, unlike int64's largest value.
    too_big = whole >= 2.0 ** (width - (wide.min < 0))
    too_small = whole < float(wide.min)
    nan = np.isnan(x)
    inside = np.where(too_big | too_small | nan, 0.0, whole).astype(wide.dtype)
    nan_value = 1 << (width - 1) if from_fp64 or width == 64 else 0
    out = np.where(too_big, wide.max, np.where(too_small, wide.min, inside)).astype(wide.dtype)
    out = np.where(nan, np.array(nan_value).astype(wide.dtype), out)
    return out.astype(dst_dtype)
