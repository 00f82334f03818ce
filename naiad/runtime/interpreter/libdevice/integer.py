"""libdevice's integer and bit functions, and the reinterpretations of float bits: all bit-exact.

Signed values are handled through their two's-complement bit patterns (unsigned views); products
wider than 64 bits use Python integers.
"""

from __future__ import annotations

import numpy as np

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_BYTE_REVERSED = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], dtype=np.uint8)


def _bits(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return x.view(_UNSIGNED[x.dtype.itemsize])


def clz(x: np.ndarray) -> np.ndarray:
    """Leading zeros of a 32- or 64-bit pattern (the full width for 0)."""
    u = _bits(x)
    if u.dtype == np.uint64:
        high = (u >> np.uint64(32)).astype(np.uint32)
        low = (u & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        return np.where(high != 0, clz(high), 32 + clz(low)).astype(np.int32)
    # A uint32 is exact in fp64, and frexp's exponent is its bit length.
    return (32 - np.frexp(u.astype(np.float64))[1]).astype(np.int32)


def popc(x):
    return np.bitwise_count(_bits(x)).astype(np.int32)


def brev(x):
    x = np.asarray(x)
    u = np.asarray(_bits(x), order="C").reshape(np.shape(x) + (1,))
    reversed_bytes = _BYTE_REVERSED[u.view(np.uint8)][..., ::-1]
    return np.asarray(reversed_bytes, order="C").view(u.dtype).reshape(x.shape).view(x.dtype)


def ffs(x):
    """1-based index of the lowest set bit, 0 for 0."""
    u = _bits(x)
    lowest = u & (~u + u.dtype.type(1))
    return np.where(u == 0, 0, 8 * u.dtype.itemsize - clz(lowest)).astype(np.int32)


def byte_perm(x, y, selector):
    """Byte n of the result is byte (selector >> 4n) & 7 of the little-endian pair {y:x}."""
    shape = np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(selector))
    x, y, selector = (np.broadcast_to(_bits(v), shape).reshape(-1) for v in (x, y, selector))
    source = np.stack([x, y], axis=-1).astype(np.uint32).view(np.uint8).reshape(-1, 8)
    picks = np.stack([(selector >> np.uint32(4 * n)) & np.uint32(7) for n in range(4)], axis=-1)
    result = np.take_along_axis(source, picks.astype(np.intp), axis=-1)
    return np.asarray(result, order="C").view(np.uint32).reshape(shape).view(np.int32)


def mulhi(a, b):
    """The high half of the double-width product, signed or unsigned by the operands' dtype."""
    a, b = np.asarray(a), np.asarray(b)
    bits = 8 * a.dtype.itemsize
    wide = np.asarray(a.astype(object) * b.astype(object), dtype=object)
    return np.asarray(wide >> bits, dtype=object).astype(a.dtype)


def mul24(a, b):
    """Low 32 bits of the product of the low 24 bits of each operand (sign-extended if signed)."""
    a, b = np.asarray(a), np.asarray(b)
    low24 = [v.astype(np.int64) & 0xFFFFFF for v in (a, b)]
    if a.dtype == np.int32:
        low24 = [(v ^ 0x800000) - 0x800000 for v in low24]
    return (low24[0] * low24[1]).astype(a.dtype)


def sad(x, y, z):
    """|x - y| + z modulo 2**32."""
    difference = np.abs(np.asarray(x).astype(np.int64) - np.asarray(y).astype(np.int64))
    return (difference + np.asarray(z).astype(np.int64)).astype(np.uint32)


def halving_add(a, b, rounding_up: bool):
    """(a + b + rounding_up) >> 1, computed without overflow (an arithmetic shift)."""
    a = np.asarray(a)
    total = a.astype(np.int64) + np.asarray(b).astype(np.int64) + int(rounding_up)
    return (total >> 1).astype(a.dtype)


def _view(dtype):
    return lambda x: np.asarray(x, order="C").view(dtype)


def _hilo_to_double(hi, lo):
    high = np.asarray(hi).astype(np.int64).view(np.uint64) << np.uint64(32)
    low = np.asarray(lo).astype(np.uint32).astype(np.uint64)
    return (high | low).view(np.float64)


SYMBOLS = {
    "__nv_clz": clz,
    "__nv_clzll": clz,
    "__nv_popc": popc,
    "__nv_popcll": popc,
    "__nv_brev": brev,
    "__nv_brevll": brev,
    "__nv_ffs": ffs,
    "__nv_ffsll": ffs,
    "__nv_byte_perm": byte_perm,
    "__nv_mulhi": mulhi,
    "__nv_umulhi": mulhi,
    "__nv_mul64hi": mulhi,
    "__nv_umul64hi": mulhi,
    "__nv_mul24": mul24,
    "__nv_umul24": mul24,
    "__nv_sad": sad,
    "__nv_usad": sad,
    "__nv_hadd": lambda a, b: halving_add(a, b, False),
    "__nv_uhadd": lambda a, b: halving_add(a, b, False),
    "__nv_rhadd": lambda a, b: halving_add(a, b, True),
    "__nv_urhadd": lambda a, b: halving_add(a, b, True),
    "__nv_abs": np.abs,
    "__nv_llabs": np.abs,  # wraps: abs(INT_MIN) == INT_MIN
    "__nv_int_as_float": _view(np.float32),
    "__nv_uint_as_float": _view(np.float32),
    "__nv_float_as_int": _view(np.int32),
    "__nv_float_as_uint": _view(np.int32),
    "__nv_longlong_as_double": _view(np.float64),
    "__nv_double_as_longlong": _view(np.int64),
    "__nv_hiloint2double": _hilo_to_double,
    "__nv_double2loint": lambda x: _view(np.int64)(x).astype(np.int32),  # truncation wraps
    "__nv_double2hiint": lambda x: (_view(np.int64)(x) >> 32).astype(np.int32),
}
