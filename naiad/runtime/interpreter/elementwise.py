"""What each elementwise operation means on NumPy arrays (the GPU's answers where LLVM has none).

Integer division by zero gives all ones (-1 signed), as NVIDIA's division instructions do, and
remainder by zero gives the dividend, so that x == (x // y) * y + x % y holds; INT_MIN / -1 wraps
to INT_MIN with remainder 0. Shifts by the bit width or more give PTX's clamped result (0, or the
sign for arithmetic right shifts). Conversions come from `floats.convert`, bit-exact with the GPU.
"""

from __future__ import annotations

import fractions
import math

import numpy as np

from . import floats
from .memory import Pointers, merged_origin


def host_dtype(ty) -> np.dtype:
    """The NumPy dtype holding values of the language scalar type `ty`."""
    if ty.is_ptr():
        return np.dtype(np.uint64)
    return floats.numpy_dtype(ty.name)


def _int_bits(ty) -> int:
    return ty.int_bitwidth


def _as_wide_bool(fn):
    """int1 arithmetic is modulo 2: compute on uint8 and keep the low bit."""

    def op(a, b, ty, **_):
        if ty.scalar.is_bool():
            return (fn(a.astype(np.uint8), b.astype(np.uint8), ty) & 1).astype(bool)
        return fn(a, b, ty)

    return op


def _divide(a, b, ty, remainder: bool):
    scalar = ty.scalar
    a, b = np.asarray(a), np.asarray(b)
    zero = b == 0
    if scalar.is_int_signed():
        overflow = (a == scalar.get_int_min_value()) & (b == -1)
        safe = np.where(zero | overflow, 1, b).astype(a.dtype)
        quotient = a // safe
        inexact = (quotient * safe != a) & ((a < 0) != (safe < 0))
        quotient = (quotient + inexact).astype(a.dtype)
        if remainder:
            result = (a - quotient * safe).astype(a.dtype)
            result = np.where(overflow, 0, result)
            return np.where(zero, a, result).astype(a.dtype)
        return np.where(zero, -1, quotient).astype(a.dtype)
    safe = np.where(zero, 1, b).astype(a.dtype)
    if remainder:
        return np.where(zero, a, a % safe).astype(a.dtype)
    return np.where(zero, np.array(scalar.get_int_max_value()).astype(a.dtype), a // safe).astype(
        a.dtype
    )


def _shift(a, b, ty, kind):
    bits = _int_bits(ty.scalar)
    unsigned = np.dtype(f"uint{max(bits, 8)}")
    amount = np.asarray(b).astype(unsigned)
    big = amount >= bits
    safe = np.where(big, 0, amount).astype(a.dtype)
    if kind == "shl":
        return np.where(big, 0, np.left_shift(a, safe)).astype(a.dtype)
    if a.dtype.kind in "iu":
        # The op, not the host dtype, says logical or arithmetic: Triton's `int8 >> uint8` is an
        # arithmetic shift of the promoted uint8 bits.
        a = a.view(unsigned if kind == "shrui" else np.dtype(f"int{max(bits, 8)}"))
        safe = safe.astype(a.dtype)
    if kind == "shrui":
        result = np.where(big, 0, np.right_shift(a, safe))
    else:
        fill = np.where(a < 0, -1, 0).astype(a.dtype)
        result = np.where(big, fill, np.right_shift(a, safe))
    return result.astype(a.dtype).view(host_dtype(ty.scalar))


def _mulhi(a, b, ty):
    """The high half of the unsigned product of the operands' bit patterns (`tt.mulhiui`)."""
    if _int_bits(ty.scalar) == 32:
        product = a.astype(np.uint32).astype(np.uint64) * b.astype(np.uint32).astype(np.uint64)
        return (product >> np.uint64(32)).astype(np.uint32).view(a.dtype)
    # 64 x 64 -> high 64 bits: schoolbook on 32-bit halves.
    ua, ub = a.astype(np.uint64), b.astype(np.uint64)
    mask = np.uint64(0xFFFFFFFF)
    a_lo, a_hi = ua & mask, ua >> np.uint64(32)
    b_lo, b_hi = ub & mask, ub >> np.uint64(32)
    lo_lo = a_lo * b_lo
    mid1 = a_hi * b_lo + (lo_lo >> np.uint64(32))
    mid2 = a_lo * b_hi + (mid1 & mask)
    high = a_hi * b_hi + (mid1 >> np.uint64(32)) + (mid2 >> np.uint64(32))
    return high.view(a.dtype)


def extremum_float(a, b, which: str, nan_propagates: bool):
    """IEEE 754-2019's maximum / minimum (`nan_propagates`) or maximumNumber / minimumNumber
    of `a` and `b`: -0 below +0 either way."""
    if nan_propagates:
        result = np.maximum(a, b) if which == "max" else np.minimum(a, b)
    else:
        result = np.fmax(a, b) if which == "max" else np.fmin(a, b)
    # IEEE maximum/minimum order -0 below +0.
    tie = (a == b) & (np.signbit(a) != np.signbit(b))
    if tie.any():
        pick_b = ~np.signbit(b) if which == "max" else np.signbit(b)
        result = np.where(tie, np.where(pick_b, b, a), result)
    return result


def _negf(a, ty):
    """Flip the sign bit (NaN too), as the GPU's `neg`; fp8e4b15 is held as bits."""
    width = ty.scalar.primitive_bitwidth
    bits = np.asarray(a).view(f"uint{width}")
    return (bits ^ np.array(1 << (width - 1), f"uint{width}")).view(host_dtype(ty.scalar))


def _convert(a, ty, src_ty, rounding="rtne"):
    return floats.convert(np.asarray(a), src_ty.scalar.name, ty.scalar.name, rounding)


_erf = np.frompyfunc(math.erf, 1, 1)

_CMP = {
    "eq": np.equal,
    "ne": np.not_equal,
    "slt": np.less,
    "sle": np.less_equal,
    "sgt": np.greater,
    "sge": np.greater_equal,
    "ult": np.less,
    "ule": np.less_equal,
    "ugt": np.greater,
    "uge": np.greater_equal,
    "oeq": np.equal,
    "olt": np.less,
    "ole": np.less_equal,
    "ogt": np.greater,
    "oge": np.greater_equal,
    "une": np.not_equal,
    "one": lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),
    "ord": lambda a, b: ~np.isnan(a) & ~np.isnan(b),
    "uno": lambda a, b: np.isnan(a) | np.isnan(b),
}


def _float_math(fn):
    def op(a, ty, **_):
        return fn(a).astype(host_dtype(ty.scalar))

    return op


BINARY = {
    "arith.addi": _as_wide_bool(lambda a, b, ty: a + b),
    "arith.subi": _as_wide_bool(lambda a, b, ty: a - b),
    "arith.muli": _as_wide_bool(lambda a, b, ty: a * b),
    "arith.addf": lambda a, b, ty, **_: a + b,
    "arith.subf": lambda a, b, ty, **_: a - b,
    "arith.mulf": lambda a, b, ty, **_: a * b,
    "arith.divf": lambda a, b, ty, **_: a / b,
    "arith.remf": lambda a, b, ty, **_: np.fmod(a, b),
    "arith.divsi": lambda a, b, ty, **_: _divide(a, b, ty, False),
    "arith.divui": lambda a, b, ty, **_: _divide(a, b, ty, False),
    "arith.remsi": lambda a, b, ty, **_: _divide(a, b, ty, True),
    "arith.remui": lambda a, b, ty, **_: _divide(a, b, ty, True),
    "arith.andi": lambda a, b, ty, **_: a & b,
    "arith.ori": lambda a, b, ty, **_: a | b,
    "arith.xori": lambda a, b, ty, **_: a ^ b,
    "arith.shli": lambda a, b, ty, **_: _shift(a, b, ty, "shl"),
    "arith.shrsi": lambda a, b, ty, **_: _shift(a, b, ty, "shrsi"),
    "arith.shrui": lambda a, b, ty, **_: _shift(a, b, ty, "shrui"),
    "arith.maxsi": lambda a, b, ty, **_: np.maximum(a, b),
    "arith.maxui": lambda a, b, ty, **_: np.maximum(a, b),
    "arith.minsi": lambda a, b, ty, **_: np.minimum(a, b),
    "arith.minui": lambda a, b, ty, **_: np.minimum(a, b),
    "arith.maximumf": lambda a, b, ty, **_: extremum_float(a, b, "max", True),
    "arith.minimumf": lambda a, b, ty, **_: extremum_float(a, b, "min", True),
    "arith.maxnumf": lambda a, b, ty, **_: extremum_float(a, b, "max", False),
    "arith.minnumf": lambda a, b, ty, **_: extremum_float(a, b, "min", False),
    "arith.cmpi": lambda a, b, ty, predicate: _CMP[predicate](a, b),
    "arith.cmpf": lambda a, b, ty, predicate: _CMP[predicate](a, b),
    "tt.mulhiui": lambda a, b, ty, **_: _mulhi(a, b, ty),
    "tt.precise_divf": lambda a, b, ty, **_: a / b,
}

UNARY = {
    "math.exp": _float_math(np.exp),
    "math.exp2": _float_math(np.exp2),
    "math.log": _float_math(np.log),
    "math.log2": _float_math(np.log2),
    "math.sin": _float_math(np.sin),
    "math.cos": _float_math(np.cos),
    "math.sqrt": _float_math(np.sqrt),
    "tt.precise_sqrt": _float_math(np.sqrt),
    "math.rsqrt": _float_math(lambda a: 1 / np.sqrt(a)),
    "math.erf": _float_math(lambda a: np.asarray(_erf(a.astype(np.float64)), np.float64)),
    "math.floor": _float_math(np.floor),
    "math.ceil": _float_math(np.ceil),
    "arith.negf": lambda a, ty, **_: _negf(a, ty),
    "math.absf": _float_math(np.abs),
    "math.absi": lambda a, ty, **_: np.abs(a).astype(a.dtype),
}

CONVERSIONS = (
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.extf",
    "arith.truncf",
    "tt.fp_to_fp",
)


def fma(a, b, c, ty):
    """a * b + c with one rounding, as `fma.rn`. Narrower floats go through float64, where the
    product is exact and the sum's rounding error is far below their last place (<= 1 ulp in
    all); fp64 is computed exactly, since `a * b + c` in fp64 rounds twice and under
    cancellation loses every bit (a * b + -(a * b rounded) is the product's rounding error)."""
    dtype = host_dtype(ty.scalar)
    if dtype != np.float64:
        wide = np.asarray(a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64))
        # floats.convert rounds float64 once (ml_dtypes' astype rounds to bf16 through fp32)
        return floats.convert(wide, "fp64", ty.scalar.name)
    shape = np.broadcast(a, b, c).shape
    a, b, c = (np.broadcast_to(np.asarray(v, np.float64), shape).ravel() for v in (a, b, c))
    with np.errstate(all="ignore"):
        out = a * b + c  # right wherever an operand is inf or NaN, and for exact zeros
    for i in np.flatnonzero(np.isfinite(a) & np.isfinite(b) & np.isfinite(c)):
        exact = fractions.Fraction(float(a[i])) * fractions.Fraction(
            float(b[i])
        ) + fractions.Fraction(float(c[i]))
        if exact != 0:  # (an exact zero keeps the naive result's IEEE sign)
            try:
                out[i] = float(exact)  # int / int division: correctly rounded
            except OverflowError:
                out[i] = math.inf if exact > 0 else -math.inf
    return out.reshape(shape)


def clampf(x, lo, hi, ty, propagate_nan: bool):
    if propagate_nan:
        return np.minimum(np.maximum(x, lo), hi)
    return np.fmin(np.fmax(x, lo), hi)


def pointer_op(op, operands, ty):
    """Operations whose result is a pointer; the result keeps the operands' provenance."""
    if op == "tt.addptr":
        ptrs, offset = operands
        size = max(1, ty.scalar.element_ty.primitive_bitwidth // 8)
        delta = np.asarray(offset).astype(np.int64) * np.int64(size)
        addr = (ptrs.addr.astype(np.int64) + delta).astype(np.uint64)
        return Pointers(addr, ptrs.origin)
    if op == "tt.bitcast":
        return Pointers(operands[0].addr, operands[0].origin)
    if op == "tt.int_to_ptr":
        return Pointers(np.asarray(operands[0]).astype(np.int64).view(np.uint64), None)
    if op == "arith.select":
        cond, a, b = operands
        return Pointers(np.where(cond, a.addr, b.addr), merged_origin(a, b))
    raise NotImplementedError(f"interpreter: {op} does not produce pointers")
