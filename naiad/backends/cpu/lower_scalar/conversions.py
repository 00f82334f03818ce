"""Casts: integer <-> integer, integer <-> float, float <-> float, and bitcasts.

Each follows the reference's conversion (interpreter floats.py, the GPU's `cvt` on Hopper) bit
for bit; float_bits.py does the rounding into narrow formats. In short:

- float -> float: one correctly rounded step (rtne or rtz) with the destination's overflow rule:
  fp8e4nv saturates, fp8e5 saturates to nearest and keeps IEEE overflow toward zero, the fnuz
  formats saturate and map inf to their NaN. NaN becomes the canonical NaN, except that f64 <->
  f32 / f16 / bf16 keep its sign and leading payload bits and bf16 -> f32 is a plain shift. Two
  oddities of the GPU: fp8e5 -> bf16 reads inf and NaN patterns as numbers (2**112 multiply), and
  fp8e4b15 is reached through f16 (round toward zero, clamp to 1.75, round half away).
- int -> float: one rounding of the exact integer, to nearest even.
- float -> int: truncate and saturate at 16 bits at least (an 8-bit result is the low byte of
  the 16-bit one), NaN -> 0, but 0x80...0 from f64 or into 64 bits; -> i1 is `x != 0` (NaN: 1).
"""

from __future__ import annotations

from llvmlite import ir

from ....dialects.arith.attributes import RoundingMode
from ....dialects.tt.attributes import RoundingMode as TTRoundingMode
from ....ir.float_format import FloatFormat
from .float_bits import FNUZ, IEEE, SATFINITE, decode_to_f32, encode, fp16_to_fp8e4b15, int_to_f64
from .registry import intrinsic, lowers, unsupported
from .types import F32, F64, FORMATS, NATIVE_FORMATS, float_kind, int_width, llvm_type

_E4B15 = "f8E4M3B11FNUZ"
# fp8e5 as the GPU's bf16 conversion sees it: its inf and NaN patterns are numbers.
_E5M2_AS_NUMBERS = FloatFormat("f8E5M2", 5, 2, 15, "finite")


def overflow_rule(dst: str, rounding: str) -> str:
    """How a conversion into `dst` treats overflow and inf."""
    if FORMATS[dst].specials == "fnuz":
        return FNUZ
    if dst == "f8E4M3FN" or (dst == "f8E5M2" and rounding == "rtne"):
        return SATFINITE
    return IEEE


def convert_float(b: ir.IRBuilder, x, src: str, dst: str, rounding: str = "rtne"):
    """`x` (storage of float kind `src`) converted to kind `dst` as a cast on the GPU."""
    if src == dst:
        return x
    if src == "f16" and dst == _E4B15:
        return fp16_to_fp8e4b15(b, x)
    if dst == "f64":
        return b.fpext(x if src == "f32" else convert_float(b, x, src, "f32"), F64)
    if src == "f8E5M2" and dst == "bf16":
        return encode(b, decode_to_f32(b, x, _E5M2_AS_NUMBERS), FORMATS[dst], "rtne", IEEE)
    value = x if src in ("f32", "f64") else decode_to_f32(b, x, FORMATS[src])
    if dst == _E4B15:  # through f16 toward zero, whatever the rounding asked
        return fp16_to_fp8e4b15(b, encode(b, value, FORMATS["f16"], "rtz", IEEE))
    if dst == "f32":
        if src != "f64":
            return value  # decoding is exact
        if rounding == "rtne":
            return b.fptrunc(value, F32)  # keeps a NaN's sign and leading payload, as the GPU
        f32 = NATIVE_FORMATS["f32"]
        return b.bitcast(encode(b, value, f32, rounding, IEEE, nan_payload=True), F32)
    rule = overflow_rule(dst, rounding)
    return encode(b, value, FORMATS[dst], rounding, rule, nan_payload=src == "f64")


def int_to_float(b: ir.IRBuilder, x, signed: bool, dst: str):
    """Integer `x` (signed or not) rounded once to float kind `dst`, to nearest even."""
    if dst == "f32":
        return b.sitofp(x, F32) if signed else b.uitofp(x, F32)
    if dst == "f64":
        return b.sitofp(x, F64) if signed else b.uitofp(x, F64)
    value = int_to_f64(b, x, signed)
    if dst == _E4B15:
        return fp16_to_fp8e4b15(b, encode(b, value, FORMATS["f16"], "rtz", IEEE))
    return encode(b, value, FORMATS[dst], "rtne", overflow_rule(dst, "rtne"))


def float_to_int(b: ir.IRBuilder, ctx, x, src: str, width: int, signed: bool):
    """Float `x` (kind `src`) truncated to a `width`-bit integer, saturating as `cvt.rzi`."""
    value = x if src in ("f32", "f64") else decode_to_f32(b, x, FORMATS[src])
    if width == 1:
        return b.fcmp_unordered("!=", value, ir.Constant(value.type, 0.0))
    wide = max(width, 16)
    it = ir.IntType(wide)
    suffix = "f64" if value.type == F64 else "f32"
    kind = "s" if signed else "u"
    sat = intrinsic(ctx.module, f"llvm.fpto{kind}i.sat.i{wide}.{suffix}", it, [value.type])
    out = b.call(sat, [value])
    if src == "f64" or wide == 64:
        is_nan = b.fcmp_unordered("uno", value, value)
        out = b.select(is_nan, ir.Constant(it, 1 << (wide - 1)), out)
    return b.trunc(out, ir.IntType(width)) if width < wide else out


# -- the ops ---------------------------------------------------------------------------------------
@lowers("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui")
def int_to_int(b, op, operands, ctx):
    (x,) = operands
    src, dst = int_width(op.operands[0].type), int_width(op.results[0].type)
    target = ir.IntType(dst)
    if dst == src:
        return x
    if dst < src:
        return b.trunc(x, target)
    if op.name in ("arith.extui", "arith.index_castui"):
        return b.zext(x, target)
    return b.sext(x, target)


@lowers("arith.sitofp", "arith.uitofp")
def int_to_float_op(b, op, operands, ctx):
    return int_to_float(b, operands[0], op.name == "arith.sitofp", float_kind(op.results[0].type))


@lowers("arith.fptosi", "arith.fptoui")
def float_to_int_op(b, op, operands, ctx):
    src = float_kind(op.operands[0].type)
    width = int_width(op.results[0].type)
    return float_to_int(b, ctx, operands[0], src, width, op.name == "arith.fptosi")


_ARITH_ROUNDING = {"to_nearest_even": "rtne", "toward_zero": "rtz"}


@lowers("arith.extf", "arith.truncf", "tt.fp_to_fp")
def float_to_float(b, op, operands, ctx):
    if op.name == "tt.fp_to_fp":
        rounding = "rtne" if op.rounding is None else TTRoundingMode.keyword(op.rounding)
    else:
        mode = getattr(op, "roundingmode", None)
        keyword = "to_nearest_even" if mode is None else RoundingMode.keyword(mode)
        if keyword not in _ARITH_ROUNDING:
            unsupported(op, f"the CPU back end cannot lower '{op.name}' rounding {keyword}")
        rounding = _ARITH_ROUNDING[keyword]
    src, dst = float_kind(op.operands[0].type), float_kind(op.results[0].type)
    return convert_float(b, operands[0], src, dst, rounding)


@lowers("arith.bitcast", "tt.bitcast")
def bitcast(b, op, operands, ctx):
    """The same bits as another type: nothing to do where both are held alike (f16 and i16,
    pointers)."""
    (x,) = operands
    target = llvm_type(op.results[0].type)
    return x if x.type == target else b.bitcast(x, target)
