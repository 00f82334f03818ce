"""Bit-level model of Triton's scalar types: how each is held in NumPy, and exact float rounding.

Every float format is a sign bit, an exponent field and a mantissa field; they differ in their
bias and in which bit patterns are special (the one table of them is the IR's,
naiad/ir/float_format.py; fp8e4b15's every pattern is a number, 0x7f is +1.875).

`decode` turns bit patterns into exact values `(-1)**neg * sig * 2**exp` (`sig` an integer of at
most 64 bits) and `encode` rounds such values into a format, so that every conversion between these
formats, and from integers of up to 64 bits, is one correctly rounded step. This module knows
nothing of the GPU; `floats` chooses the rounding, the overflow rule and the NaN of each
conversion to match what Triton's code does on Hopper.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ...ir.float_format import FLOAT_KINDS, KERNEL_FORMATS, FloatFormat

# Overflow rules for `encode`: what a finite value beyond the largest finite one, and an infinity,
# become.
IEEE = "ieee"  # round to nearest: infinity; toward zero: the largest finite; inf stays inf
SATFINITE = "satfinite"  # both become the largest finite value (PTX `.satfinite`)
FNUZ = "fnuz"  # finite overflow saturates, infinity becomes the format's only NaN


FORMATS = {name: KERNEL_FORMATS[kind] for name, kind in FLOAT_KINDS.items()}
"""The IR's float formats (naiad/ir/float_format.py) by Triton name."""

# fp8e4b15 (Triton's own format, bias 15) has no ml_dtypes type: its values are held as their
# uint8 bit patterns. The other fp8 formats are ml_dtypes' OCP and fnuz types of the same layout.
_NUMPY_DTYPES = {
    "fp64": np.float64,
    "fp32": np.float32,
    "fp16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "fp8e5": ml_dtypes.float8_e5m2,
    "fp8e4nv": ml_dtypes.float8_e4m3fn,
    "fp8e4b8": ml_dtypes.float8_e4m3fnuz,
    "fp8e5b16": ml_dtypes.float8_e5m2fnuz,
    "fp8e4b15": np.uint8,
    "int1": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
}

INT_TYPES = ("int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype that holds values of the Triton type `name` ("fp32", "fp8e4nv", "int1")."""
    try:
        return np.dtype(_NUMPY_DTYPES[name])
    except KeyError:
        raise ValueError(f"unknown Triton scalar type {name!r}") from None


def to_bits(values, name: str) -> np.ndarray:
    """The bit patterns of float `values` (held as `numpy_dtype(name)`), widened to uint64."""
    fmt = FORMATS[name]
    array = np.asarray(values)
    if array.dtype != numpy_dtype(name):
        raise TypeError(f"{name} values must be held as {numpy_dtype(name)}, got {array.dtype}")
    return array.view(f"uint{fmt.width}").astype(np.uint64)


def from_bits(bits: np.ndarray, name: str) -> np.ndarray:
    """Values of type `name` from uint64 bit patterns (the inverse of `to_bits`)."""
    return bits.astype(f"uint{FORMATS[name].width}").view(numpy_dtype(name))


@dataclass
class Exact:
    """Exact values `(-1)**neg * sig * 2**exp`, elementwise, plus NaN and infinity flags."""

    neg: np.ndarray  # bool
    sig: np.ndarray  # uint64
    exp: np.ndarray  # int64
    nan: np.ndarray  # bool
    inf: np.ndarray  # bool


def decode(bits: np.ndarray, fmt: FloatFormat) -> Exact:
    """The exact value of each bit pattern (uint64) of format `fmt`."""
    m = fmt.mant_bits
    mag = bits & np.uint64(fmt.magnitude_mask)
    exp_field = (mag >> np.uint64(m)).astype(np.int64)
    frac = mag & np.uint64((1 << m) - 1)
    normal = exp_field != 0
    sig = np.where(normal, frac | np.uint64(1 << m), frac)
    exp = np.maximum(exp_field, 1) - fmt.bias - m
    none = np.zeros(bits.shape, bool)
    if fmt.specials == "ieee":
        special = exp_field == (1 << fmt.exp_bits) - 1
        nan, inf = special & (frac != 0), special & (frac == 0)
    elif fmt.specials == "fn":
        nan, inf = mag == np.uint64(fmt.magnitude_mask), none
    elif fmt.specials == "fnuz":
        nan, inf = bits == np.uint64(fmt.sign_bit), none
    else:
        nan, inf = none, none
    neg = (bits & np.uint64(fmt.sign_bit)) != 0
    return Exact(neg, sig, exp, nan, inf)


def bit_length(x: np.ndarray) -> np.ndarray:
    """`int.bit_length` of each uint64, as int64 (a binary search over the 64 bit positions)."""
    length = np.zeros(x.shape, np.int64)
    rest = x
    for step in (32, 16, 8, 4, 2, 1):
        high = rest >> np.uint64(step)
        has_high = high != 0
        rest = np.where(has_high, high, rest)
        length += np.where(has_high, step, 0)
    return length + (rest != 0)


def encode(
    value: Exact, fmt: FloatFormat, rounding: str, overflow: str, nan_payload: bool = False
) -> np.ndarray:
    """Round exact values into `fmt` ("rtne" or "rtz") and return their bit patterns (uint64).

    NaN becomes `fmt.nan`, or with `nan_payload` (IEEE formats) keeps its sign and the leading
    bits of its payload, quieted. Finite overflow and infinities follow the `overflow` rule (IEEE,
    SATFINITE or FNUZ). Subnormal results are kept, never flushed.
    """
    if fmt.specials == "finite" or (overflow == IEEE and fmt.specials != "ieee"):
        raise ValueError(f"no {overflow} rounding into {fmt.kind}")
    m, emin = fmt.mant_bits, 1 - fmt.bias
    top = value.exp + bit_length(value.sig) - 1  # exponent of the leading bit
    scale = np.maximum(top, emin)  # exponent of the result's leading bit position
    shift = scale - m - value.exp  # bits of `sig` below the result's last place
    # Right shifts stop at 63: only a float's `sig` (53 bits at most) goes further, all of it
    # below half of the last place, so it rounds to zero either way.
    right = np.clip(shift, 0, 63).astype(np.uint64)
    left = np.clip(-shift, 0, m).astype(np.uint64)
    kept = value.sig >> right
    if rounding == "rtne":
        rest = value.sig & ((np.uint64(1) << right) - np.uint64(1))
        half = (np.uint64(1) << right) >> np.uint64(1)
        odd = (kept & np.uint64(1)) == 1
        kept = kept + ((shift > 0) & ((rest > half) | ((rest == half) & odd)))
    elif rounding != "rtz":
        raise ValueError(f"rounding must be 'rtne' or 'rtz', got {rounding!r}")
    mantissa = np.where(shift > 0, kept, value.sig << left).astype(np.int64)
    # A carry out of the mantissa lands in the exponent field, as it should.
    field = np.where(value.sig == 0, 0, ((scale + fmt.bias - 1) << m) + mantissa)
    limit = fmt.max_finite
    saturate = overflow != IEEE or rounding == "rtz"
    out = np.minimum(field, limit) if saturate else np.where(field > limit, fmt.inf, field)
    if overflow == IEEE:
        out = np.where(value.inf, fmt.inf, out)
    elif overflow == SATFINITE:
        out = np.where(value.inf, limit, out)
    else:
        out = np.where(value.inf, fmt.nan, out)
    out = out.astype(np.uint64)
    signed = value.neg
    if fmt.specials == "fnuz":
        signed = signed & (out != 0)  # fnuz has no -0: its pattern is the NaN
    out = np.where(signed, out | np.uint64(fmt.sign_bit), out)
    nan = _nan_with_payload(value, fmt) if nan_payload else np.uint64(fmt.nan)
    return np.where(value.nan, nan, out)


def _nan_with_payload(value: Exact, fmt: FloatFormat) -> np.ndarray:
    """The quiet NaN of `fmt` with the value's sign and the leading bits of its payload."""
    m = fmt.mant_bits
    src_m = np.maximum(bit_length(value.sig) - 1, 0)  # a NaN's `sig` has its implicit bit set
    payload = value.sig & ~(np.uint64(1) << src_m.astype(np.uint64))
    down = np.clip(src_m - m, 0, 63).astype(np.uint64)
    up = np.clip(m - src_m, 0, 63).astype(np.uint64)
    payload = np.where(src_m >= m, payload >> down, payload << up)
    quiet = np.uint64(fmt.inf | (1 << (m - 1)))
    return np.where(value.neg, np.uint64(fmt.sign_bit), np.uint64(0)) | quiet | payload
