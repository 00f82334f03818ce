"""Float formats narrower than f32, bit by bit in LLVM IR: decoding to f32 and rounding into them.

Only integer operations and selects (and one exact int -> float multiply), so a loop of them
vectorizes, and no flag of the floating-point environment (flush-to-zero, rounding mode) can
change a result. `encode` is one correctly rounded step from an f32 or f64 value into any format
of types.FORMATS, with the rounding ("rtne" / "rtz"), the overflow rule and the NaN the caller
names:

    IEEE        overflow: inf to nearest, the largest finite toward zero; inf stays inf
    SATFINITE   overflow and inf: the signed largest finite (PTX `.satfinite`)
    FNUZ        overflow: the largest finite; inf: the NaN (0x80); never -0
    NAN         overflow and inf: NaN (how ml_dtypes rounds fp8 arithmetic without inf)

NaN becomes the format's canonical NaN, or with `nan_payload` keeps its sign and the leading
bits of its payload, quieted (the GPU's cvt between f64 and f32 / f16 / bf16).

Between f32 and f16, on a target that has instructions for it, both directions take them
instead, with the same results (half_hardware.py); f32 to bf16 to nearest even is a rounding
add and a shift (`_f32_to_bf16`).
"""

from __future__ import annotations

from llvmlite import ir

from ....ir.float_format import FloatFormat
from .half_hardware import converts_halves, f16_to_f32, f32_to_f16
from .types import F32, F64, NATIVE_FORMATS

IEEE = "ieee"
SATFINITE = "satfinite"
FNUZ = "fnuz"
NAN = "nan"

_CANONICAL_F32_NAN = 0x7FFFFFFF


def const(ty: ir.Type, value) -> ir.Constant:
    return ir.Constant(ty, value)


def decode_to_f32(b: ir.IRBuilder, bits: ir.Value, fmt: FloatFormat) -> ir.Value:
    """The f32 holding the exact value of `bits` (format `fmt`); NaN becomes the canonical f32
    NaN, except from bf16, whose f32 is its bits shifted left (every NaN kept as it is)."""
    if fmt.kind == "f16" and converts_halves(b.module.triple):
        return f16_to_f32(b, bits)
    if fmt.width == 8 and converts_halves(b.module.triple):
        halves = _decode_by_halves(b, bits, fmt)
        if halves is not None:
            return halves
    i32 = ir.IntType(32)
    wide = b.zext(bits, i32)
    if fmt.kind == "bf16":
        return b.bitcast(b.shl(wide, const(i32, 16)), F32)
    m = fmt.mant_bits
    mag = b.and_(wide, const(i32, fmt.magnitude_mask))
    exponent = b.lshr(mag, const(i32, m))
    fraction = b.and_(mag, const(i32, (1 << m) - 1))
    # A normal number: rebias the exponent field, move the fraction to f32's position.
    rebiased = b.shl(b.add(exponent, const(i32, 127 - fmt.bias)), const(i32, 23))
    normal = b.or_(rebiased, b.shl(fraction, const(i32, 23 - m)))
    # A subnormal one is fraction * 2**(1 - bias - m): an exact conversion and an exact product
    # whose result is a normal f32 (no subnormal operand, so flush-to-zero cannot touch it).
    scale = const(F32, 2.0 ** (1 - fmt.bias - m))
    subnormal = b.bitcast(b.fmul(b.uitofp(fraction, F32), scale), i32)
    out = b.select(b.icmp_unsigned("==", exponent, const(i32, 0)), subnormal, normal)
    nan = None
    if fmt.specials == "ieee":
        special = b.icmp_unsigned("==", exponent, const(i32, (1 << fmt.exp_bits) - 1))
        out = b.select(special, const(i32, 0x7F800000), out)  # inf when the fraction is 0
        nan = b.and_(special, b.icmp_unsigned("!=", fraction, const(i32, 0)))
    elif fmt.specials == "fn":
        nan = b.icmp_unsigned("==", mag, const(i32, fmt.magnitude_mask))
    elif fmt.specials == "fnuz":
        nan = b.icmp_unsigned("==", wide, const(i32, fmt.sign_bit))
    negative = b.icmp_unsigned("!=", b.and_(wide, const(i32, fmt.sign_bit)), const(i32, 0))
    out = b.select(negative, b.or_(out, const(i32, 1 << 31)), out)
    if nan is not None:
        out = b.select(nan, const(i32, _CANONICAL_F32_NAN), out)
    return b.bitcast(out, F32)


def _decode_by_halves(b: ir.IRBuilder, bits: ir.Value, fmt: FloatFormat) -> ir.Value | None:
    """An 8-bit float decoded through `vcvtph2ps` (a handful of operations where
    decode_to_f32's rebiasing takes about twenty), else None. fp8e5 (IEEE) is an f16's top
    byte, inf and NaN included. A 4-bit exponent and 3-bit mantissa, placed in an f16's low
    fields, read as the value times 2^(bias - 15), subnormals included (they are the f16's
    too), and never as an f16 inf or NaN: one exact scaling, and the format's NaN selected."""
    i16 = ir.IntType(16)
    wide = b.zext(bits, i16)
    if fmt.kind == "f8E5M2" and fmt.specials == "ieee":
        return f16_to_f32(b, b.shl(wide, const(i16, 8)))
    if (fmt.exp_bits, fmt.mant_bits) != (4, 3) or fmt.specials not in ("fn", "fnuz", "finite"):
        return None
    sign = b.shl(b.and_(wide, const(i16, 0x80)), const(i16, 8))
    half = b.or_(sign, b.shl(b.and_(wide, const(i16, 0x7F)), const(i16, 7)))
    value = b.fmul(b.fpext(b.bitcast(half, ir.HalfType()), F32), const(F32, 2.0 ** (15 - fmt.bias)))
    if fmt.specials == "fn":
        nan = b.icmp_unsigned("==", b.and_(wide, const(i16, 0x7F)), const(i16, 0x7F))
    elif fmt.specials == "fnuz":
        nan = b.icmp_unsigned("==", wide, const(i16, 0x80))
    else:
        return value
    canonical = b.bitcast(const(ir.IntType(32), _CANONICAL_F32_NAN), F32)
    return b.select(nan, canonical, value)


def _max(b, x, y):
    return b.select(b.icmp_signed(">", x, y), x, y)


def encode(
    b: ir.IRBuilder,
    x: ir.Value,
    fmt: FloatFormat,
    rounding: str,
    overflow: str,
    nan_payload: bool = False,
) -> ir.Value:
    """The bits (iN) of f32 / f64 value `x` rounded into `fmt`, as the module docstring says."""
    plain = x.type == F32 and rounding == "rtne" and overflow == IEEE and not nan_payload
    if plain and fmt.kind == "f16" and converts_halves(b.module.triple):
        return f32_to_f16(b, x)
    if plain and fmt.kind == "bf16":
        return _f32_to_bf16(b, x, fmt)
    src = NATIVE_FORMATS["f64" if x.type == F64 else "f32"]
    iw = ir.IntType(src.width)
    sm, dm = src.mant_bits, fmt.mant_bits
    bits = b.bitcast(x, iw)
    mag = b.and_(bits, const(iw, src.magnitude_mask))
    exponent = b.lshr(mag, const(iw, sm))
    fraction = b.and_(mag, const(iw, (1 << sm) - 1))
    is_normal = b.icmp_unsigned("!=", exponent, const(iw, 0))
    significand = b.select(is_normal, b.or_(fraction, const(iw, 1 << sm)), fraction)
    # The destination exponent of the leading bit; below 1 the result is subnormal there and
    # the significand loses one more bit per step (at most sm + 2 steps: all of it rounds away).
    dst_exponent = b.sub(_max(b, exponent, const(iw, 1)), const(iw, src.bias - fmt.bias))
    extra = _max(b, b.sub(const(iw, 1), dst_exponent), const(iw, 0))
    shift = b.add(extra, const(iw, sm - dm))
    shift = b.select(b.icmp_unsigned(">", shift, const(iw, sm + 2)), const(iw, sm + 2), shift)
    kept = b.lshr(significand, shift)
    if rounding == "rtne":
        half_minus_one = b.sub(b.shl(const(iw, 1), b.sub(shift, const(iw, 1))), const(iw, 1))
        odd = b.and_(kept, const(iw, 1))
        kept = b.lshr(b.add(b.add(significand, half_minus_one), odd), shift)
    elif rounding != "rtz":
        raise ValueError(f"rounding must be 'rtne' or 'rtz', got {rounding!r}")
    # A carry out of the mantissa lands in the exponent field, as it should.
    base = b.shl(_max(b, b.sub(dst_exponent, const(iw, 1)), const(iw, 0)), const(iw, dm))
    field = b.add(base, kept)
    out = _overflow(b, field, mag, fmt, src, rounding, overflow)
    out = b.trunc(out, ir.IntType(fmt.width))
    dt = out.type
    negative = b.icmp_signed("<", bits, const(iw, 0))
    if fmt.specials == "fnuz":  # no -0: that pattern is the NaN
        negative = b.and_(negative, b.icmp_unsigned("!=", out, const(dt, 0)))
    out = b.select(negative, b.or_(out, const(dt, fmt.sign_bit)), out)
    is_nan = b.icmp_unsigned(">", mag, const(iw, src.inf))
    return b.select(is_nan, _nan(b, bits, fraction, fmt, src, nan_payload), out)


def _f32_to_bf16(b: ir.IRBuilder, x: ir.Value, fmt: FloatFormat) -> ir.Value:
    """`encode` of f32 into bf16 to nearest even with IEEE overflow, NaN canonical: bf16 is
    f32's top half, over the same exponent range, so adding 0x7FFF plus the kept part's lowest
    bit and shifting rounds every number (subnormals alike; past the largest finite the carry
    reaches inf's pattern, and inf stays inf). Four integer operations, a constant shift."""
    i32 = ir.IntType(32)
    bits = b.bitcast(x, i32)
    odd = b.and_(b.lshr(bits, const(i32, 16)), const(i32, 1))
    rounded = b.lshr(b.add(b.add(bits, const(i32, 0x7FFF)), odd), const(i32, 16))
    is_nan = b.fcmp_unordered("uno", x, x)
    return b.trunc(b.select(is_nan, const(i32, fmt.nan), rounded), ir.IntType(16))


def _overflow(b, field, mag, fmt: FloatFormat, src: FloatFormat, rounding, overflow):
    """`field` with finite overflow and infinities replaced as the overflow rule says."""
    iw = field.type
    largest = const(iw, fmt.max_finite)
    if overflow == NAN:
        too_big, infinite = const(iw, fmt.nan), const(iw, fmt.nan)
    elif overflow == FNUZ:
        too_big, infinite = largest, const(iw, fmt.nan)
    elif overflow == SATFINITE:
        too_big, infinite = largest, largest
    elif overflow == IEEE:
        too_big = const(iw, fmt.inf) if rounding == "rtne" else largest
        infinite = const(iw, fmt.inf)
    else:
        raise ValueError(f"unknown overflow rule {overflow!r}")
    out = b.select(b.icmp_unsigned(">", field, largest), too_big, field)
    return b.select(b.icmp_unsigned("==", mag, const(iw, src.inf)), infinite, out)


def _nan(b, bits, fraction, fmt: FloatFormat, src: FloatFormat, nan_payload: bool):
    dt = ir.IntType(fmt.width)
    if not (nan_payload and fmt.specials == "ieee" and fmt.width > 8):
        return const(dt, fmt.nan)
    iw = bits.type
    quiet = fmt.inf | (1 << (fmt.mant_bits - 1))
    payload = b.lshr(fraction, const(iw, src.mant_bits - fmt.mant_bits))
    sign = b.and_(b.lshr(bits, const(iw, src.width - fmt.width)), const(iw, fmt.sign_bit))
    return b.trunc(b.or_(b.or_(sign, payload), const(iw, quiet)), dt)


def fp16_to_fp8e4b15(b: ir.IRBuilder, half: ir.Value) -> ir.Value:
    """Triton's f16 -> fp8e4b15 on the bits: |x| clamped to 1.75 (0x3f00; NaN and inf too, whose
    magnitudes are larger as integers), rounded half away from zero, the sign copied."""
    i16 = half.type
    mag = b.and_(half, const(i16, 0x7FFF))
    mag = b.select(b.icmp_unsigned(">", mag, const(i16, 0x3F00)), const(i16, 0x3F00), mag)
    rounded = b.lshr(b.add(mag, const(i16, 0x40)), const(i16, 7))
    sign = b.and_(b.lshr(half, const(i16, 8)), const(i16, 0x80))
    return b.trunc(b.or_(rounded, sign), ir.IntType(8))


def int_to_f64(b: ir.IRBuilder, x: ir.Value, signed: bool) -> ir.Value:
    """An f64 from which rounding to any format of at most 26 significant bits gives the same
    result as rounding the integer `x` itself.

    Up to 53 bits the conversion is exact. A larger 64-bit magnitude keeps its bits from 11 up
    and ORs the rest into bit 11 (a sticky bit, exact in f64): its leading bit is at 53 or above,
    so every bit a narrow format keeps, and the one it rounds on, lies above the sticky bit.
    """
    width = x.type.width
    if width < 64:
        return b.sitofp(x, F64) if signed else b.uitofp(x, F64)
    i64 = x.type
    negative = b.icmp_signed("<", x, const(i64, 0)) if signed else None
    mag = b.select(negative, b.neg(x), x) if signed else x  # |INT64_MIN| is 2**63, unsigned
    sticky = b.zext(b.icmp_unsigned("!=", b.and_(mag, const(i64, 0x7FF)), const(i64, 0)), i64)
    high = b.or_(b.lshr(mag, const(i64, 11)), sticky)
    scaled = b.fmul(b.uitofp(high, F64), const(F64, 2048.0))
    big = b.icmp_unsigned(">=", mag, const(i64, 1 << 53))
    value = b.select(big, scaled, b.uitofp(mag, F64))
    return b.select(negative, b.fneg(value), value) if signed else value
