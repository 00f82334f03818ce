"""Seeded random inputs for the scalar lowering tests, with the values that break lowerings
mixed in: zeros of both signs, infinities, NaNs with payloads and signs, subnormals, the largest
finite values, INT_MIN and -1, shift amounts past the width, and for float conversions the
midpoints between neighbouring values of each narrow format (where rounding modes differ).

Arrays are in the reference's host dtypes (`naiad.runtime.evaluator.values.host_dtype`).
"""

from __future__ import annotations

import numpy as np

from naiad.ir import FloatType, IntegerType
from naiad.runtime.evaluator.values import FLOAT_NAMES, host_dtype
from naiad.runtime.interpreter import floats

NARROW = ("f16", "bf16", "f8E5M2", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ")

_FLOAT_SPECIALS = [
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, np.inf, -np.inf, np.nan, 3.0, -7.25,
    65504.0, 65519.0, 65520.0, 65536.0, 448.0, 464.0, 465.0, 480.0, 57344.0, 61440.0, 61441.0,
    1.75, 1.8125, 1.875, 2.0**-14, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-126, 2.0**-133,
    2.0**-149, 127.5, 128.0, 255.5, 256.0, 300.0, -300.0, 32767.5, 32768.0, 65535.0, -129.0,
    2.0**31, -(2.0**31), 2.0**32, 2.0**63, -(2.0**63), 2.0**64, 1e10, -1e-10, 1e30, 3.4e38,
    0.1, 1 / 3, 2.0**-7, 2.0**-9, 2.0**-10, 2.0**-17,
]  # fmt: skip

# NaN bit patterns: quiet, signalling, negative, with payloads.
_NAN_BITS = {
    32: [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA12345, 0x7FFFFFFF, 0x7FD5A5A5],
    64: [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFFA5A5A5A5A5A5A],
}


def values(ir_type, n: int, rng: np.random.Generator, near: tuple = NARROW) -> np.ndarray:
    """`n` inputs of IR scalar type `ir_type`, specials first."""
    if isinstance(ir_type, IntegerType):
        return int_values(ir_type.width, n, rng)
    if isinstance(ir_type, FloatType):
        if ir_type.kind in ("f32", "f64"):
            return wide_float_values(ir_type.kind, n, rng, near)
        return narrow_float_values(ir_type.kind, n, rng)
    raise TypeError(f"no test values of {ir_type}")


def int_values(width: int, n: int, rng) -> np.ndarray:
    if width == 1:
        return rng.integers(0, 2, n).astype(bool)
    dtype = np.dtype(f"int{width}")
    info = np.iinfo(dtype)
    specials = [0, 1, -1, 2, -2, 3, -3, info.min, info.max, info.min + 1, info.max - 1]
    specials += [width - 1, width, width + 1, 2 * width, 7, 8, 100, -100]
    specials = np.array(specials, dtype=np.int64).astype(dtype)
    bits = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.int64).astype(dtype)
    small = rng.integers(-300, 300, n).astype(dtype)
    out = np.where(rng.random(n) < 0.5, bits, small)
    out[: len(specials)] = specials[:n]
    return out


def narrow_float_values(kind: str, n: int, rng) -> np.ndarray:
    """Uniform bit patterns (every NaN, inf and subnormal shows up); every pattern first."""
    width = 8 if kind.startswith("f8") else 16
    every = np.arange(2**width, dtype=np.uint64)
    rng.shuffle(every)
    bits = np.concatenate([every, rng.integers(0, 2**width, max(0, n - 2**width), np.uint64)])
    storage = bits[:n].astype(f"uint{width}")
    return storage.view(floats.numpy_dtype(FLOAT_NAMES[kind]))


def midpoints(kind: str, n: int, rng) -> np.ndarray:
    """float64 values at and around the midpoints between neighbouring finite values of the
    narrow format `kind` (exact in f32: a midpoint needs one bit more than the format)."""
    name = FLOAT_NAMES[kind]
    width = 8 if kind.startswith("f8") else 16
    bits = rng.integers(0, 2**width, n, dtype=np.uint64)
    low = floats.to_float64(bits.astype(f"uint{width}").view(floats.numpy_dtype(name)), name)
    high = floats.to_float64((bits + 1).astype(f"uint{width}").view(floats.numpy_dtype(name)), name)
    mid = (low + high) / 2
    ok = np.isfinite(mid) & (np.sign(low) == np.sign(high))
    return np.where(ok, mid, low)


def wide_float_values(kind: str, n: int, rng, near=NARROW) -> np.ndarray:
    """f32 / f64 inputs: specials, NaN payloads, random bit patterns, values spread over
    magnitudes, and midpoints of the narrow formats `near` with their f32 neighbours."""
    dtype = np.dtype(np.float32 if kind == "f32" else np.float64)
    width = 8 * dtype.itemsize
    quarter = max(n // 4, 1)
    bits = rng.integers(0, 2**64, quarter, dtype=np.uint64).astype(f"uint{width}").view(dtype)
    spread = np.ldexp(rng.uniform(1, 2, quarter), rng.integers(-40, 40, quarter))
    spread *= rng.choice([-1.0, 1.0], quarter)
    mids = [midpoints(k, quarter, rng) for k in near] or [np.zeros(0)]
    mid = np.concatenate(mids).astype(dtype)
    mid = rng.permutation(mid)[:quarter]
    mid_up = np.nextafter(mid, dtype.type(np.inf))
    mid_down = np.nextafter(mid, dtype.type(-np.inf))
    nans = np.array(_NAN_BITS[width], f"uint{width}").view(dtype)
    with np.errstate(over="ignore"):
        specials = np.array(_FLOAT_SPECIALS, np.float64).astype(dtype)
    specials = np.concatenate([specials, -specials, nans])
    parts = [specials, bits, spread.astype(dtype), mid, mid_up, mid_down]
    out = np.concatenate(parts)
    head = out[: len(specials)]
    tail = rng.permutation(out[len(specials) :])
    return np.concatenate([head, tail])[:n] if n >= len(specials) else head[:n]


def pair_values(ir_type, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Two operand arrays; for floats a quarter of the pairs are equal, negated or close, so
    ties (+-0), cancellation and NaN-vs-number cases all occur."""
    a, b = values(ir_type, n, rng), values(ir_type, n, rng)
    if isinstance(ir_type, FloatType):
        pick = rng.integers(0, 8, n)
        b = np.where(pick == 0, a, b)
        negated = floats.convert(
            -floats.to_float64(a, FLOAT_NAMES[ir_type.kind]), "fp64", FLOAT_NAMES[ir_type.kind]
        )
        b = np.where(pick == 1, negated, b)
        b = b.astype(host_dtype(ir_type))
    return a, b


def moderate_values(ir_type, n: int, rng) -> np.ndarray:
    """Float arguments of magnitude below 128, and the specials (zeros, infinities, NaN, a
    subnormal), rounded to `ir_type`: for checking that an op reaches the right math function,
    whose accuracy over its whole domain the math library's own tests check."""
    spread = np.ldexp(rng.uniform(1, 2, n), rng.integers(-20, 7, n)) * rng.choice([-1, 1], n)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0**-140])
    wide = np.concatenate([specials, spread])[:n]
    return floats.convert(wide, "fp64", FLOAT_NAMES[ir_type.kind])
