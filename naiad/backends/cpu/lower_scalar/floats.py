"""Float arithmetic that is exact or correctly rounded: + - * / rem, fma, sqrt, min / max, clamp,
sign operations, rounding to integers, classification.

f32 and f64 use LLVM's IEEE instructions and intrinsics (no fast-math flags: results must be
bit-exact with the reference); narrower formats compute in f32 and round back (compute.py).
Minimum and maximum are compares and selects: `maximumf` / `minimumf` propagate NaN, `maxnumf` /
`minnumf` return the number when one operand is NaN, and both order -0 below +0, as the
reference does.
"""

from __future__ import annotations

from llvmlite import ir

from ....dialects.tt.attributes import PropagateNan
from .compute import arith_kind, in_compute_type, narrow, widen
from .conversions import convert_float
from .registry import intrinsic, lowers
from .types import F64, FORMATS, NATIVE_FLOATS, float_kind


def call_intrinsic(b, ctx, stem: str, *args):
    """`llvm.<stem>.f32/f64` applied to float `args` of one type."""
    ty = args[0].type
    suffix = "f64" if ty == F64 else "f32"
    return b.call(intrinsic(ctx.module, f"llvm.{stem}.{suffix}", ty, [ty] * len(args)), args)


_BINARY = {
    "arith.addf": "fadd",
    "arith.subf": "fsub",
    "arith.mulf": "fmul",
    "arith.divf": "fdiv",
    "tt.precise_divf": "fdiv",
    "arith.remf": "frem",  # C fmod: exact (on x86 LLVM calls libm's fmod for it)
}


@lowers(*_BINARY)
def binary(b, op, operands, ctx):
    kind = arith_kind(op, op.results[0].type)
    method = getattr(b, _BINARY[op.name])
    return in_compute_type(b, kind, operands, method)


@lowers("arith.negf")
def negf(b, op, operands, ctx):
    """Flip the sign bit, NaN included (fp8e4b15 too: it is a sign flip of the bits)."""
    (x,) = operands
    kind = float_kind(op.results[0].type)
    if kind in NATIVE_FLOATS:
        return b.fneg(x)
    return b.xor(x, ir.Constant(x.type, FORMATS[kind].sign_bit))


@lowers("math.absf")
def absf(b, op, operands, ctx):
    """Clear the sign bit (fnuz formats: 0x80 is their NaN, and stays one)."""
    (x,) = operands
    kind = arith_kind(op, op.results[0].type)
    if kind in NATIVE_FLOATS:
        return call_intrinsic(b, ctx, "fabs", x)
    fmt = FORMATS[kind]
    cleared = b.and_(x, ir.Constant(x.type, fmt.magnitude_mask))
    if fmt.specials != "fnuz":
        return cleared
    return b.select(b.icmp_unsigned("==", x, ir.Constant(x.type, fmt.nan)), x, cleared)


def signbit(b, x):
    """Whether the sign bit of f32 / f64 `x` is set (lane by lane for a vector of them, which
    codegen/lower_reduce.py folds)."""
    scalar = getattr(x.type, "element", x.type)
    bits_type = ir.IntType(64 if scalar == F64 else 32)
    if isinstance(x.type, ir.VectorType):
        bits_type = ir.VectorType(bits_type, x.type.count)
    bits = b.bitcast(x, bits_type)
    return b.icmp_signed("<", bits, ir.Constant(bits.type, 0))


def extremum(b, x, y, is_max: bool, propagate_nan: bool):
    """max / min of f32 / f64 values with -0 < +0; NaN propagates, or loses to a number."""
    beyond = b.fcmp_ordered(">" if is_max else "<", x, y)
    result = b.select(beyond, x, y)
    x_negative = signbit(b, x)
    tie = b.select(x_negative, y, x) if is_max else b.select(x_negative, x, y)
    result = b.select(b.fcmp_ordered("==", x, y), tie, result)
    # Here a NaN x has given y: take x when it propagates, or when y is the NaN and loses.
    nan_picks_x = b.fcmp_unordered("uno", x if propagate_nan else y, x if propagate_nan else y)
    return b.select(nan_picks_x, x, result)


_EXTREMA = {
    "arith.maximumf": (True, True),
    "arith.minimumf": (False, True),
    "arith.maxnumf": (True, False),
    "arith.minnumf": (False, False),
}


@lowers(*_EXTREMA)
def extremum_op(b, op, operands, ctx):
    kind = arith_kind(op, op.results[0].type)
    is_max, propagate = _EXTREMA[op.name]
    return in_compute_type(b, kind, operands, lambda x, y: extremum(b, x, y, is_max, propagate))


@lowers("tt.clampf")
def clampf(b, op, operands, ctx):
    """min(max(x, lo), hi), NaN-propagating when `propagateNan` is `all`."""
    kind = arith_kind(op, op.results[0].type)
    propagate = PropagateNan.keyword(op.propagateNan) == "all"

    def clamp(x, lo, hi):
        return extremum(b, extremum(b, x, lo, True, propagate), hi, False, propagate)

    return in_compute_type(b, kind, operands, clamp)


@lowers("math.fma")
def fma(b, op, operands, ctx):
    """a * b + c rounded once. Narrow formats: the product is exact in f64 and the f64 sum is
    rounded into the format as a cast (what the reference computes)."""
    kind = arith_kind(op, op.results[0].type)
    if kind in NATIVE_FLOATS:
        return call_intrinsic(b, ctx, "fma", *operands)
    wide = [b.fpext(widen(b, x, kind), F64) for x in operands]
    return convert_float(b, call_intrinsic(b, ctx, "fma", *wide), "f64", kind)


@lowers("math.sqrt", "tt.precise_sqrt")
def sqrt(b, op, operands, ctx):
    kind = arith_kind(op, op.results[0].type)
    return in_compute_type(b, kind, operands, lambda x: call_intrinsic(b, ctx, "sqrt", x))


@lowers("math.rsqrt")
def rsqrt(b, op, operands, ctx):
    """1 / sqrt(x), each step rounded to the type, as the reference computes it."""
    kind = arith_kind(op, op.results[0].type)
    root = widen(b, sqrt(b, op, operands, ctx), kind)
    return narrow(b, b.fdiv(ir.Constant(root.type, 1.0), root), kind)


_ROUNDING = {
    "math.floor": "floor",
    "math.ceil": "ceil",
    "math.trunc": "trunc",
    "math.round": "round",  # half away from zero
    "math.roundeven": "roundeven",
}


@lowers(*_ROUNDING)
def to_integral(b, op, operands, ctx):
    """Rounding to an integral value: exact, so f32 and back loses nothing but the overflow
    rule of the way back. floor and ceil return as arithmetic; trunc, round and roundeven, which
    the reference reaches through libdevice's f32 function, as a cast (fp8 inf saturates)."""
    kind = arith_kind(op, op.results[0].type)
    result = call_intrinsic(b, ctx, _ROUNDING[op.name], widen(b, operands[0], kind))
    if kind in NATIVE_FLOATS or op.name in ("math.floor", "math.ceil"):
        return narrow(b, result, kind)
    return convert_float(b, result, "f32", kind)


@lowers("math.copysign")
def copysign(b, op, operands, ctx):
    """|a| with b's sign, computed in f32 and converted back as the reference (so an fnuz -0
    is 0, not the NaN pattern)."""
    kind = arith_kind(op, op.results[0].type)
    x, y = (widen(b, v, kind) for v in operands)
    result = call_intrinsic(b, ctx, "copysign", x, y)
    return result if kind in NATIVE_FLOATS else convert_float(b, result, "f32", kind)


@lowers("math.isnan", "math.isinf")
def classify(b, op, operands, ctx):
    """Tests of the exact value (fp8e4b15, every pattern a number, is neither)."""
    x = widen(b, operands[0], float_kind(op.operands[0].type))
    if op.name == "math.isnan":
        return b.fcmp_unordered("uno", x, x)
    infinity = ir.Constant(x.type, float("inf"))
    return b.fcmp_ordered("==", call_intrinsic(b, ctx, "fabs", x), infinity)
