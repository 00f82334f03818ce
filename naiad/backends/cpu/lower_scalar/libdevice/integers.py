"""libdevice's integer functions, float <-> integer conversions and reinterpretations of bits.

Conversions follow PTX `cvt.{rni,rzi,rmi,rpi}`: round to an integer in the symbol's mode, then
saturate to the destination; NaN gives 0 from f32 to a 32-bit integer and the sign-bit pattern
otherwise. The f32 conversions read subnormal arguments as zeros (ftz). Integer -> float is to
nearest here; its directed modes are directed.py's.
"""

from __future__ import annotations

from llvmlite import ir

from ..conversions import int_to_float
from ..float_bits import encode, int_to_f64
from ..floats import call_intrinsic
from ..integers import mulhi
from ..registry import intrinsic
from ..types import F32, F64, I32, I64, NATIVE_FORMATS
from .table import define, flush


def _c(ty, value):
    return ir.Constant(ty, value)


def _bit_intrinsic(b, ctx, stem: str, x, *flags):
    ty = x.type
    fn = intrinsic(ctx.module, f"llvm.{stem}.i{ty.width}", ty, [ty] + [f.type for f in flags])
    return b.call(fn, [x, *flags])


_NOT_POISON = ir.Constant(ir.IntType(1), 0)

define("__nv_clz", "__nv_clzll")(
    lambda b, ctx, op, args: _bit_intrinsic(b, ctx, "ctlz", args[0], _NOT_POISON)
)
define("__nv_popc", "__nv_popcll")(lambda b, ctx, op, args: _bit_intrinsic(b, ctx, "ctpop", *args))
define("__nv_brev", "__nv_brevll")(
    lambda b, ctx, op, args: _bit_intrinsic(b, ctx, "bitreverse", *args)
)
define("__nv_abs", "__nv_llabs")(
    lambda b, ctx, op, args: _bit_intrinsic(b, ctx, "abs", args[0], _NOT_POISON)
)


@define("__nv_ffs", "__nv_ffsll")
def _ffs(b, ctx, op, args):
    """1-based index of the lowest set bit, 0 for 0."""
    (x,) = args
    index = b.add(_bit_intrinsic(b, ctx, "cttz", x, _NOT_POISON), _c(x.type, 1))
    return b.select(b.icmp_unsigned("==", x, _c(x.type, 0)), _c(x.type, 0), index)


define("__nv_mulhi", "__nv_mul64hi")(lambda b, ctx, op, args: mulhi(b, *args, signed=True))
define("__nv_umulhi", "__nv_umul64hi")(lambda b, ctx, op, args: mulhi(b, *args, signed=False))


def _halving_add(signed: bool, round_up: bool):
    """(a + b + round_up) >> 1 without overflow: computed in 64 bits."""

    def fn(b, ctx, op, args):
        extend = b.sext if signed else b.zext
        total = b.add(extend(args[0], I64), extend(args[1], I64))
        if round_up:
            total = b.add(total, _c(I64, 1))
        return b.trunc(b.ashr(total, _c(I64, 1)), args[0].type)

    return fn


define("__nv_hadd")(_halving_add(True, False))
define("__nv_uhadd")(_halving_add(False, False))
define("__nv_rhadd")(_halving_add(True, True))
define("__nv_urhadd")(_halving_add(False, True))


def _sad(signed: bool):
    """|x - y| + z modulo 2**32 (z unsigned)."""

    def fn(b, ctx, op, args):
        x, y, z = args
        extend = b.sext if signed else b.zext
        difference = b.sub(extend(x, I64), extend(y, I64))
        magnitude = _bit_intrinsic(b, ctx, "abs", difference, _NOT_POISON)
        return b.trunc(b.add(magnitude, b.zext(z, I64)), I32)

    return fn


define("__nv_sad")(_sad(True))
define("__nv_usad")(_sad(False))


def _mul24(signed: bool):
    """The low 32 bits of the product of the operands' low 24 bits (sign-extended if signed)."""

    def fn(b, ctx, op, args):
        if signed:
            low = [b.ashr(b.shl(x, _c(I32, 8)), _c(I32, 8)) for x in args]
        else:
            low = [b.and_(x, _c(I32, 0xFFFFFF)) for x in args]
        return b.mul(*low)

    return fn


define("__nv_mul24")(_mul24(True))
define("__nv_umul24")(_mul24(False))


@define("__nv_byte_perm")
def _byte_perm(b, ctx, op, args):
    """Byte n of the result is byte (selector >> 4n) & 7 of the little-endian pair {y:x}."""
    x, y, selector = args
    pair = b.or_(b.shl(b.zext(y, I64), _c(I64, 32)), b.zext(x, I64))
    result = _c(I32, 0)
    for n in range(4):
        pick = b.and_(b.lshr(selector, _c(I32, 4 * n)), _c(I32, 7))
        byte = b.trunc(b.lshr(pair, b.zext(b.shl(pick, _c(I32, 3)), I64)), I32)
        byte = b.and_(byte, _c(I32, 0xFF))
        result = b.or_(result, b.shl(byte, _c(I32, 8 * n)))
    return result


# -- reinterpretations ---------------------------------------------------------------------------
define("__nv_int_as_float", "__nv_uint_as_float")(lambda b, ctx, op, args: b.bitcast(args[0], F32))
define("__nv_float_as_int", "__nv_float_as_uint")(lambda b, ctx, op, args: b.bitcast(args[0], I32))
define("__nv_longlong_as_double")(lambda b, ctx, op, args: b.bitcast(args[0], F64))
define("__nv_double_as_longlong")(lambda b, ctx, op, args: b.bitcast(args[0], I64))


@define("__nv_hiloint2double")
def _hilo(b, ctx, op, args):
    hi, lo = args
    bits = b.or_(b.shl(b.zext(hi, I64), _c(I64, 32)), b.zext(lo, I64))
    return b.bitcast(bits, F64)


define("__nv_double2loint")(lambda b, ctx, op, args: b.trunc(b.bitcast(args[0], I64), I32))
define("__nv_double2hiint")(
    lambda b, ctx, op, args: b.trunc(b.lshr(b.bitcast(args[0], I64), _c(I64, 32)), I32)
)


# -- float <-> integer -----------------------------------------------------------------------------
_TO_INTEGRAL = {"rn": "roundeven", "rz": "trunc", "rd": "floor", "ru": "ceil"}
_DESTINATIONS = {"int": (32, True), "uint": (32, False), "ll": (64, True), "ull": (64, False)}


def _float_to_int(to_integral: str, width: int, signed: bool):
    def fn(b, ctx, op, args):
        x = flush(b, ctx, args[0])
        whole = call_intrinsic(b, ctx, to_integral, x)
        ty = ir.IntType(width)
        suffix = "f64" if x.type == F64 else "f32"
        name = f"llvm.fpto{'s' if signed else 'u'}i.sat.i{width}.{suffix}"
        out = b.call(intrinsic(ctx.module, name, ty, [x.type]), [whole])
        if x.type == F32 and width == 32:
            return out
        is_nan = b.fcmp_unordered("uno", x, x)
        return b.select(is_nan, _c(ty, 1 << (width - 1)), out)

    return fn


for _mode, _intrinsic in _TO_INTEGRAL.items():
    for _dst, (_width, _signed) in _DESTINATIONS.items():
        _fn = _float_to_int(_intrinsic, _width, _signed)
        define(f"__nv_float2{_dst}_{_mode}", f"__nv_double2{_dst}_{_mode}")(_fn)
define("__nv_llrintf", "__nv_llrint")(_float_to_int("roundeven", 64, True))
define("__nv_llroundf", "__nv_llround")(_float_to_int("round", 64, True))


def _int_to_f32_rz(b, x, signed: bool):
    """Toward zero: from an f64 that rounds as the integer does (float_bits.int_to_f64)."""
    value = int_to_f64(b, x, signed)
    return b.bitcast(encode(b, value, NATIVE_FORMATS["f32"], "rtz", "ieee"), F32)


for _src, _signed in (("int", True), ("uint", False), ("ll", True), ("ull", False)):
    define(f"__nv_{_src}2float_rn")(
        lambda b, ctx, op, args, s=_signed: int_to_float(b, args[0], s, "f32")
    )
    define(f"__nv_{_src}2double_rn")(
        lambda b, ctx, op, args, s=_signed: int_to_float(b, args[0], s, "f64")
    )
    define(f"__nv_{_src}2float_rz")(
        lambda b, ctx, op, args, s=_signed: _int_to_f32_rz(b, args[0], s)
    )


define("__nv_double2float_rn")(lambda b, ctx, op, args: flush(b, ctx, b.fptrunc(args[0], F32)))


@define("__nv_double2float_rz")
def _double_to_float_rz(b, ctx, op, args):
    bits = encode(b, args[0], NATIVE_FORMATS["f32"], "rtz", "ieee", nan_payload=True)
    return flush(b, ctx, b.bitcast(bits, F32))
