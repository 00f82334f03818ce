"""`tt.fp_to_fp`: float conversions with a rounding mode, fp8 among them, bit for bit as the
interpreter's model of Triton on Hopper (naiad/runtime/interpreter/floats.py states each rule).

- To fp8e4nv / fp8e5 with rtne: on sm_89+ `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`, two registers
  to an instruction as it converts them (fp16 and bf16 widened to fp32 first, exactly);
  elsewhere the same rounding in integer arithmetic: a magnitude beyond the largest finite
  value, infinities included, saturates; NaN is 0x7f.
- To fp8 with rtz: truncation; fp8e5 keeps infinities (IEEE round-toward-zero from fp32), fp8e4nv
  saturates.
- From fp8e4nv / fp8e5: exact. On sm_89+ fp16 comes from `cvt.rn.f16x2.{e4m3x2,e5m2x2}`, two
  registers to an instruction, and the other widths from that fp16; elsewhere, and for fp8e5 ->
  bf16 (whose all-ones exponent Triton's bit shift treats as a number: inf -> 65536), a
  256-entry table of the results, computed here from the IR's float formats, is read at the
  byte's index.
- fp32 -> fp16 / bf16 with rtz: `cvt.rz.{f16,bf16}.f32`; rtne is LLVM's `fptrunc`; widening is
  `fpext` (exact).

- fp8e4b15 (bias 15, no infinity, no NaN), as Triton's software conversions: to fp16 its bits
  move into place (sign, then the 7 low bits shifted left by 7: the biases agree, subnormals
  included), and the fp16 value is converted to the destination; from fp16 |x| is clamped to
  1.75 as integers (NaN and infinities too, as `min.f16x2` gives), rounded half away from zero
  (+0x40, >> 7) and the sign copied; every other source goes to fp16 by rtz first (fp32 and
  fp64 by `cvt.rz.f16`), and the rounding mode is ignored.

The fnuz formats, which Triton refuses on NVIDIA, are refused here.
"""

from __future__ import annotations

import math

from ....dialects.tt.attributes import RoundingMode
from ....ir.float_format import KERNEL_FORMATS, float_from_bits, float_to_bits
from ....passes.diagnostics import unsupported
from .context import Context, lowers
from .dot_operands import fp8_pair_to_f16x2, unpack32
from .elementwise import map_registers
from .emitter import element_of, float_literal

_FP8 = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}
_E4B15 = "f8E4M3B11FNUZ"  # Triton's fp8e4b15 (KERNEL_FORMATS: bias 15, every pattern finite)
_MAX_FINITE = {"f8E4M3FN": 0x7E, "f8E5M2": 0x7B}
_INF = {"f8E5M2": 0x7C}
_CANONICAL_NAN = {
    "f16": 0x7FFF,
    "bf16": 0x7FFF,
    "f32": 0x7FFFFFFF,
    "f8E4M3FN": 0x7F,
    "f8E5M2": 0x7F,
}


def _kind(t) -> str:
    return element_of(t).kind


def _table_entry(src: str, dst: str, byte: int) -> int:
    """The bits of fp8 pattern `byte` of `src` converted to `dst` (f16, bf16 or f32)."""
    if src == "f8E5M2" and dst == "bf16":  # every exponent is a number in Triton's bit shift
        exponent, mantissa = (byte >> 2) & 0x1F, byte & 3
        scale = exponent - 15 if exponent else -14
        value = math.ldexp((4 if exponent else 0) + mantissa, scale - 2)
        value = -value if byte & 0x80 else value
        return float_to_bits(dst, value)
    value = float_from_bits(src, byte)
    if math.isnan(value):
        return _CANONICAL_NAN[dst]
    return float_to_bits(dst, value)


def _upcast_table(ctx: Context, src: str, dst: str, byte: str) -> str:
    """Read the table of `src` -> `dst` results at `byte` (an i8)."""
    width = {"f16": 16, "bf16": 16, "f32": 32}[dst]
    name = f"@fp8_{src}_to_{dst}"
    entries = ", ".join(f"i{width} {_table_entry(src, dst, b)}" for b in range(256))
    ctx.em.declare(
        name, f"{name} = internal addrspace(1) constant [256 x i{width}] [{entries}], align 16"
    )
    index = ctx.em.op(f"zext i8 {byte} to i32")
    address = ctx.em.op(f"getelementptr inbounds i{width}, ptr addrspace(1) {name}, i32 {index}")
    bits = ctx.em.op(f"load i{width}, ptr addrspace(1) {address}, align {width // 8}")
    return ctx.em.op(f"bitcast i{width} {bits} to {llvm_type_of(dst)}")


def llvm_type_of(kind: str) -> str:
    return {"f16": "half", "bf16": "bfloat", "f32": "float", "f64": "double"}[kind]


def _hardware_upcast(ctx: Context, src: str, byte: str) -> str:
    """fp16 of an fp8e4nv / fp8e5 byte by `cvt.rn.f16x2` (sm_89+)."""
    em = ctx.em
    pair = em.op(f"zext i8 {byte} to i16")
    text = f"cvt.rn.f16x2.{_FP8[src]}x2 $0, $1;"
    both = em.asm("i32", text, "=r,h", [("i16", pair)], False)
    return em.op(f"bitcast i16 {em.op(f'trunc i32 {both} to i16')} to half")


def _from_fp8(ctx: Context, src: str, dst: str, byte: str) -> str:
    if src == "f8E5M2" and dst == "bf16":
        return _upcast_table(ctx, src, dst, byte)
    if ctx.capability >= 89:
        half = _hardware_upcast(ctx, src, byte)
        return _widen(ctx, half, "f16", dst)
    if dst == "f64":
        return ctx.em.op(f"fpext float {_upcast_table(ctx, src, 'f32', byte)} to double")
    return _upcast_table(ctx, src, dst, byte)


def _paired_from_fp8(ctx: Context, op, src: str, dst: str) -> None:
    """The hardware conversion from fp8 (sm_89+) of the registers of `op`'s source two at a
    time, as `cvt.rn.f16x2` converts them (one byte a conversion left half of it unused), then
    widened from f16 exactly."""
    em, values = ctx.em, ctx[op.src]
    out = []
    for i in range(0, len(values), 2):
        pair = values[i : i + 2]
        both = fp8_pair_to_f16x2(em, [pair[0], pair[-1]], src)
        halves = unpack32(em, both, "half", 2)[: len(pair)]
        out += [_widen(ctx, half, "f16", dst) for half in halves]
    ctx[op.result] = out


def _widen(ctx: Context, value: str, src: str, dst: str) -> str:
    """An exact conversion between the wide formats (through f32 when neither is f32)."""
    if src == dst:
        return value
    if src in ("f16", "bf16") and dst in ("f16", "bf16"):
        value, src = ctx.em.op(f"fpext {llvm_type_of(src)} {value} to float"), "f32"
    if _width(dst) > _width(src):
        return ctx.em.op(f"fpext {llvm_type_of(src)} {value} to {llvm_type_of(dst)}")
    return ctx.em.op(f"fptrunc {llvm_type_of(src)} {value} to {llvm_type_of(dst)}")


def _width(kind: str) -> int:
    return {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[kind]


def _software_downcast(ctx: Context, value: str, src: str, dst: str, rtz: bool) -> str:
    """Round a float of `src` (f32 or f64) to fp8 `dst` in integer arithmetic (module doc)."""
    em = ctx.em
    sfmt, dfmt = KERNEL_FORMATS[src], KERNEL_FORMATS[dst]
    width, ftype = sfmt.width, llvm_type_of(src)
    itype = f"i{width}"
    bits = em.op(f"bitcast {ftype} {value} to {itype}")
    magnitude = em.op(f"and {itype} {bits}, {(1 << (width - 1)) - 1}")
    shift = sfmt.mant_bits - dfmt.mant_bits
    # normal results: round the mantissa, then re-bias the exponent
    if rtz:
        rounded = em.op(f"lshr {itype} {magnitude}, {shift}")
    else:
        odd = em.op(f"and {itype} {em.op(f'lshr {itype} {magnitude}, {shift}')}, 1")
        bias = em.op(f"add {itype} {odd}, {(1 << (shift - 1)) - 1}")
        rounded = em.op(f"lshr {itype} {em.op(f'add {itype} {magnitude}, {bias}')}, {shift}")
    normal = em.op(f"sub {itype} {rounded}, {(sfmt.bias - dfmt.bias) << dfmt.mant_bits}")
    # subnormal results: the magnitude in units of the smallest subnormal, rounded
    absolute = em.call(ftype, f"llvm.fabs.{src}", [(ftype, value)])
    scale = float_literal(2.0 ** (dfmt.bias - 1 + dfmt.mant_bits), src)
    units = em.op(f"fmul {ftype} {absolute}, {scale}")
    rounding = "llvm.trunc" if rtz else "llvm.roundeven"
    units = em.call(ftype, f"{rounding}.{src}", [(ftype, units)])
    small = em.op(f"fptoui {ftype} {units} to {itype}")
    min_normal = float_to_bits(src, 2.0 ** (1 - dfmt.bias))
    is_small = em.op(f"icmp ult {itype} {magnitude}, {min_normal}")
    result = em.op(f"select i1 {is_small}, {itype} {small}, {itype} {normal}")
    # overflow: saturate (fp8e5 by rtz keeps infinities)
    largest = _MAX_FINITE[dst]
    too_big = em.op(f"icmp ugt {itype} {result}, {largest}")
    huge = em.op(f"icmp uge {itype} {magnitude}, {float_to_bits(src, math.inf)}")
    too_big = em.op(f"or i1 {too_big}, {huge}")
    result = em.op(f"select i1 {too_big}, {itype} {largest}, {itype} {result}")
    if rtz and dst in _INF:
        is_inf = em.op(f"icmp eq {itype} {magnitude}, {float_to_bits(src, math.inf)}")
        result = em.op(f"select i1 {is_inf}, {itype} {_INF[dst]}, {itype} {result}")
    byte = em.op(f"trunc {itype} {result} to i8")
    sign = em.op(f"trunc {itype} {em.op(f'lshr {itype} {bits}, {width - 8}')} to i8")
    byte = em.op(f"or i8 {byte}, {em.op(f'and i8 {sign}, -128')}")
    is_nan = em.op(f"fcmp uno {ftype} {value}, {value}")
    return em.op(f"select i1 {is_nan}, i8 {_CANONICAL_NAN[dst]}, i8 {byte}")


def _paired_to_fp8(ctx: Context, op, src: str, dst: str) -> None:
    """The hardware rtne conversion to fp8 of the registers of `op`'s source two at a time,
    as `cvt...x2` converts them (the first of a pair into the low byte)."""
    em, values = ctx.em, ctx[op.src]
    if src != "f32":
        values = [_widen(ctx, value, src, "f32") for value in values]
    text = f"cvt.rn.satfinite.{_FP8[dst]}x2.f32 $0, $1, $2;"
    out = []
    for i in range(0, len(values), 2):
        low, high = values[i], values[min(i + 1, len(values) - 1)]
        pair = em.asm("i16", text, "=h,f,f", [("float", high), ("float", low)], False)
        out.append(em.op(f"trunc i16 {pair} to i8"))
        if i + 1 < len(values):
            out.append(em.op(f"trunc i16 {em.op(f'lshr i16 {pair}, 8')} to i8"))
    ctx[op.result] = out


def _to_fp8(ctx: Context, value: str, src: str, dst: str, rtz: bool) -> str:
    if src in ("f16", "bf16"):
        value, src = _widen(ctx, value, src, "f32"), "f32"
    if not rtz and ctx.capability >= 89 and src == "f32":
        text = f"cvt.rn.satfinite.{_FP8[dst]}x2.f32 $0, $1, $1;"
        pair = ctx.em.asm("i16", text, "=h,f", [("float", value)], False)
        return ctx.em.op(f"trunc i16 {pair} to i8")
    return _software_downcast(ctx, value, src, dst, rtz)


def _rtz_narrow(ctx: Context, value: str, src: str, dst: str) -> str:
    """fp32 -> fp16 / bf16 toward zero (`cvt.rz`)."""
    if src != "f32":
        return ctx.em.op(f"fptrunc {llvm_type_of(src)} {value} to {llvm_type_of(dst)}")
    text = f"cvt.rz.{dst}.f32 $0, $1;"
    bits = ctx.em.asm("i16", text, "=h,f", [("float", value)], False)
    return ctx.em.op(f"bitcast i16 {bits} to {llvm_type_of(dst)}")


def _from_e4b15(ctx: Context, byte: str, dst: str) -> str:
    """An fp8e4b15 byte as `dst`: its fp16 by moving bits, then that fp16 converted."""
    em = ctx.em
    wide = em.op(f"zext i8 {byte} to i16")
    magnitude = em.op(f"shl i16 {em.op(f'and i16 {wide}, 127')}, 7")
    sign = em.op(f"shl i16 {em.op(f'and i16 {wide}, 128')}, 8")
    half = em.op(f"bitcast i16 {em.op(f'or i16 {magnitude}, {sign}')} to half")
    if dst in _FP8:
        return _to_fp8(ctx, half, "f16", dst, False)
    return _widen(ctx, half, "f16", dst) if dst != "bf16" else _from_f16_to_bf16(ctx, half)


def _from_f16_to_bf16(ctx: Context, half: str) -> str:
    """fp16 -> bf16 (exact for fp8e4b15's values: 4 significant bits, exponents within)."""
    return ctx.em.op(f"fptrunc float {ctx.em.op(f'fpext half {half} to float')} to bfloat")


def _to_e4b15(ctx: Context, value: str, src: str) -> str:
    """fp8e4b15's byte of `value` (module doc): to fp16 by rtz, clamp, round half away."""
    em = ctx.em
    if src in _FP8:
        value, src = _from_fp8(ctx, src, "f16", value), "f16"
    if src == "bf16":
        value, src = em.op(f"fpext bfloat {value} to float"), "f32"
    if src in ("f32", "f64"):
        text = f"cvt.rz.f16.{src} $0, $1;"
        constraint = "f" if src == "f32" else "d"
        bits = em.asm("i16", text, f"=h,{constraint}", [(llvm_type_of(src), value)], False)
    else:
        bits = em.op(f"bitcast half {value} to i16")
    magnitude = em.call(
        "i16", "llvm.umin.i16", [("i16", em.op(f"and i16 {bits}, 32767")), ("i16", "16128")]
    )
    rounded = em.op(f"lshr i16 {em.op(f'add i16 {magnitude}, 64')}, 7")
    sign = em.op(f"and i16 {em.op(f'lshr i16 {bits}, 8')}, 128")
    return em.op(f"trunc i16 {em.op(f'or i16 {rounded}, {sign}')} to i8")


@lowers("tt.fp_to_fp")
def _fp_to_fp(ctx: Context, op) -> None:
    src, dst = _kind(op.src.type), _kind(op.result.type)
    rtz = op.rounding is not None and RoundingMode.keyword(op.rounding) == "rtz"
    for t, kind in ((op.src.type, src), (op.result.type, dst)):
        if element_of(t).width == 8 and kind not in _FP8 and kind != _E4B15:
            unsupported(op, f"no NVIDIA conversion between {src} and {dst}")

    if dst in _FP8 and src in ("f32", "f16", "bf16") and not rtz and ctx.capability >= 89:
        return _paired_to_fp8(ctx, op, src, dst)
    hardware_upcast = not (src == "f8E5M2" and dst == "bf16")  # else a table (module doc)
    wide = dst in ("f16", "bf16", "f32", "f64")
    if src in _FP8 and wide and hardware_upcast and ctx.capability >= 89:
        return _paired_from_fp8(ctx, op, src, dst)

    def convert(_, value):
        if src == _E4B15:
            return value if dst == _E4B15 else _from_e4b15(ctx, value, dst)
        if dst == _E4B15:
            return _to_e4b15(ctx, value, src)
        if src in _FP8:
            if dst in _FP8:  # fp8 -> fp8: exactly to f32, then one rounding
                return _to_fp8(ctx, _from_fp8(ctx, src, "f32", value), "f32", dst, rtz)
            return _from_fp8(ctx, src, dst, value)
        if dst in _FP8:
            return _to_fp8(ctx, value, src, dst, rtz)
        if _width(dst) < _width(src) and rtz:
            return _rtz_narrow(ctx, value, src, dst)
        if _width(dst) < _width(src):
            return ctx.em.op(f"fptrunc {llvm_type_of(src)} {value} to {llvm_type_of(dst)}")
        return _widen(ctx, value, src, dst)

    map_registers(ctx, op, convert)
