"""Integer arithmetic, with the GPU's answers where LLVM's are undefined, and no trap anywhere.

- Division and remainder guard the divisor with selects (no branch, so loops vectorize): by 0,
  a signed quotient is -1 for x >= 0 and 1 for x < 0, an unsigned one all ones, and a remainder
  is x; INT_MIN / -1 is INT_MIN with remainder 0.
- A shift by the bit width or more gives 0 (`<<`, logical `>>`) or the sign (arithmetic `>>`),
  reading the amount unsigned, as PTX's clamped shifts.
- `+ - *` wrap (no nsw / nuw flags, whatever the op carries: overflow is defined for kernels).
"""

from __future__ import annotations

from llvmlite import ir

from .registry import intrinsic, lowers, unsupported
from .types import int_width


def _c(ty, value):
    return ir.Constant(ty, value)


@lowers("arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori")
def wrapping(b, op, operands, ctx):
    a, c = operands
    return {
        "arith.addi": b.add,
        "arith.subi": b.sub,
        "arith.muli": b.mul,
        "arith.andi": b.and_,
        "arith.ori": b.or_,
        "arith.xori": b.xor,
    }[op.name](a, c)


def _signed_guard(b, a, d):
    """(divisor made safe, divisor is 0, the INT_MIN / -1 case)."""
    ty = a.type
    int_min = _c(ty, 1 << (ty.width - 1))
    zero = b.icmp_unsigned("==", d, _c(ty, 0))
    overflow = b.and_(b.icmp_unsigned("==", a, int_min), b.icmp_unsigned("==", d, _c(ty, -1)))
    safe = b.select(b.or_(zero, overflow), _c(ty, 1), d)
    return safe, zero, overflow


def divsi(b, a, d):
    safe, zero, _ = _signed_guard(b, a, d)  # INT_MIN / 1 is the INT_MIN / -1 answer
    return b.select(zero, _c(a.type, -1), b.sdiv(a, safe))


def remsi(b, a, d):
    safe, zero, _ = _signed_guard(b, a, d)  # INT_MIN % 1 is 0, the INT_MIN % -1 answer
    return b.select(zero, a, b.srem(a, safe))


def divui(b, a, d):
    ty = a.type
    zero = b.icmp_unsigned("==", d, _c(ty, 0))
    safe = b.select(zero, _c(ty, 1), d)
    return b.select(zero, _c(ty, -1), b.udiv(a, safe))


def remui(b, a, d):
    ty = a.type
    zero = b.icmp_unsigned("==", d, _c(ty, 0))
    return b.select(zero, a, b.urem(a, b.select(zero, _c(ty, 1), d)))


_DIVISIONS = {
    "arith.divsi": divsi,
    "arith.remsi": remsi,
    "arith.divui": divui,
    "arith.remui": remui,
}


@lowers(*_DIVISIONS)
def division(b, op, operands, ctx):
    return _DIVISIONS[op.name](b, *operands)


@lowers("arith.ceildivsi", "arith.ceildivui", "arith.floordivsi")
def rounded_division(b, op, operands, ctx):
    """The truncating quotient moved by one where the remainder is not 0 and the exact
    quotient lies on that side (the guarded quotient and remainder, as the reference)."""
    a, d = operands
    ty = a.type
    zero = _c(ty, 0)
    if op.name == "arith.ceildivui":
        inexact = b.icmp_unsigned("!=", remui(b, a, d), zero)
        return b.add(divui(b, a, d), b.zext(inexact, ty))
    inexact = b.icmp_unsigned("!=", remsi(b, a, d), zero)
    same_sign = b.icmp_unsigned("==", b.icmp_signed("<", a, zero), b.icmp_signed("<", d, zero))
    quotient = divsi(b, a, d)
    if op.name == "arith.ceildivsi":
        return b.add(quotient, b.zext(b.and_(inexact, same_sign), ty))
    return b.sub(quotient, b.zext(b.and_(inexact, b.not_(same_sign)), ty))


@lowers("arith.shli", "arith.shrsi", "arith.shrui")
def shift(b, op, operands, ctx):
    a, amount = operands
    ty = a.type
    big = b.icmp_unsigned(">=", amount, _c(ty, ty.width))
    safe = b.select(big, _c(ty, 0), amount)
    if op.name == "arith.shli":
        return b.select(big, _c(ty, 0), b.shl(a, safe))
    if op.name == "arith.shrui":
        return b.select(big, _c(ty, 0), b.lshr(a, safe))
    # An arithmetic shift by width - 1 is the sign fill that a larger amount asks for.
    return b.ashr(a, b.select(big, _c(ty, ty.width - 1), amount))


_MIN_MAX = {
    "arith.maxsi": "smax",
    "arith.minsi": "smin",
    "arith.maxui": "umax",
    "arith.minui": "umin",
}


@lowers(*_MIN_MAX)
def min_max(b, op, operands, ctx):
    ty = operands[0].type
    fn = intrinsic(ctx.module, f"llvm.{_MIN_MAX[op.name]}.i{ty.width}", ty, [ty, ty])
    return b.call(fn, operands)


def mulhi(b, a, c, signed: bool):
    """The high half of the double-width product."""
    ty = a.type
    wide = ir.IntType(2 * ty.width)
    extend = b.sext if signed else b.zext
    product = b.mul(extend(a, wide), extend(c, wide))
    return b.trunc(b.lshr(product, _c(wide, ty.width)), ty)


@lowers("tt.mulhiui")
def mulhiui(b, op, operands, ctx):
    if int_width(op.results[0].type) not in (32, 64):
        unsupported(op, "'tt.mulhiui' is defined on 32- and 64-bit integers")
    return mulhi(b, *operands, signed=False)


@lowers("math.absi")
def absi(b, op, operands, ctx):
    """|x|, wrapping: abs(INT_MIN) is INT_MIN (the intrinsic's flag says it is not poison)."""
    (x,) = operands
    fn = intrinsic(ctx.module, f"llvm.abs.i{x.type.width}", x.type, [x.type, ir.IntType(1)])
    return b.call(fn, [x, _c(ir.IntType(1), 0)])


@lowers("math.ctlz", "math.cttz")
def count_zeros(b, op, operands, ctx):
    """Leading / trailing zeros; the width for 0 (the intrinsic's flag makes 0 defined)."""
    (x,) = operands
    name = f"llvm.{op.name[len('math.') :]}.i{x.type.width}"
    fn = intrinsic(ctx.module, name, x.type, [x.type, ir.IntType(1)])
    return b.call(fn, [x, _c(ir.IntType(1), 0)])


@lowers("math.ctpop")
def ctpop(b, op, operands, ctx):
    (x,) = operands
    return b.call(intrinsic(ctx.module, f"llvm.ctpop.i{x.type.width}", x.type, [x.type]), [x])


@lowers("math.ipowi")
def ipowi(b, op, operands, ctx):
    """base ** exponent wrapping around, by squaring over every bit of the exponent (unrolled:
    no loop, no branch). A negative exponent gives 1 / base**-e truncated: 1 for base 1,
    +-1 for base -1 by the exponent's parity, else 0 (as MLIR folds it)."""
    base, exponent = operands
    ty = base.type
    if ty.width < 8:  # i1 is seen signed (true is -1): compute in i8, keep the low bit
        wide = ir.IntType(8)
        result = _ipowi(b, b.sext(base, wide), b.sext(exponent, wide))
        return b.trunc(result, ty)
    return _ipowi(b, base, exponent)


def _ipowi(b, base, exponent):
    ty = base.type
    one, zero = _c(ty, 1), _c(ty, 0)
    result, power = one, base
    for bit in range(ty.width - 1):  # the sign bit only matters for negative exponents
        set_ = b.icmp_unsigned("!=", b.and_(exponent, _c(ty, 1 << bit)), zero)
        result = b.select(set_, b.mul(result, power), result)
        power = b.mul(power, power)
    odd = b.icmp_unsigned("!=", b.and_(exponent, one), zero)
    minus_one = b.select(odd, _c(ty, -1), one)
    negative = b.select(
        b.icmp_unsigned("==", base, one),
        one,
        b.select(b.icmp_unsigned("==", base, _c(ty, -1)), minus_one, zero),
    )
    return b.select(b.icmp_signed("<", exponent, zero), negative, result)
