"""libdevice's arithmetic and conversions rounded down, up or toward zero (`_rd`, `_ru`, `_rz`).

A CPU rounds to nearest unless its control register is changed, which no vectorizable code may
do; so each operation is computed to nearest and then stepped one ulp where the sign of
(exact - nearest) says the mode wants the other neighbour. That sign is obtained exactly:

- fp32 + - * fma: in fp64, the product being exact and TwoSum giving the sum's error; the pair is
  rounded to odd and then to fp32 (fp64 has more than 24 + 2 bits), and the sign is that of
  (hi - fp32 result) + lo, whose first difference is exact.
- fp32 / and sqrt: in fp64 rounded to fp32 (correctly rounded: 53 >= 2 * 24 + 2); the residual
  a - q * b or a - q * q has the sign of the error.
- fp64 +: TwoSum's error. * / sqrt: the residual by a fused multiply-add, a * b - p, a - q * b,
  a - s * s, with the operands scaled by 2^110 where the residual would fall below the
  subnormals (a rounding of a nonzero value keeps its sign unless it underflows to zero).
- fp64 fma: a * b + c - r as an expansion of four doubles (TwoProd, then TwoSum growth), whose
  sign is that of its largest nonzero term.
- integer -> float: the difference of the integer and the result converted back, in integers.

An overflow to infinity from finite operands has a residual of the infinity's opposite sign,
so rounding down from +inf gives the largest finite value, as IEEE 754 does; invalid and
infinite operands give NaN residuals and are left alone. An exact zero sum rounded down is -0
(unless both addends are +0). The fp32 forms flush subnormals as the GPU does (ftz.py of the
interpreter's libdevice, whose rounding.py is the reference these match bit for bit).
"""

from __future__ import annotations

from llvmlite import ir

from ..floats import call_intrinsic
from ..types import F32, F64, I32, I64
from .table import SYMBOLS, flushing

MODES = ("rd", "ru", "rz")
_SCALE_BELOW = 2.0**-900
_SCALE = 2.0**110


def _c(ty, value):
    return ir.Constant(ty, value)


def _int_type(x):
    return I64 if x.type == F64 else I32


def _neighbour(b, x, up):
    """The next float after x toward +inf (`up`, an i1) or -inf; x finite or infinite."""
    it = _int_type(x)
    bits = b.bitcast(x, it)
    positive = b.icmp_signed(">=", bits, _c(it, 0))
    is_zero = b.fcmp_ordered("==", x, _c(x.type, 0.0))
    grow = b.icmp_unsigned("==", positive, up)  # the magnitude grows
    moved = b.select(grow, b.add(bits, _c(it, 1)), b.sub(bits, _c(it, 1)))
    smallest = b.select(up, _c(it, 1), _c(it, 1 | (1 << (it.width - 1))))
    return b.bitcast(b.select(is_zero, smallest, moved), x.type)


def round_directed(b, nearest, above, below, mode: str):
    """The result in `mode` given the nearest value and whether the exact result lies above
    or below it (i1 values; neither where it is exact or not to be touched)."""
    if mode == "rd":
        return b.select(below, _neighbour(b, nearest, _c(ir.IntType(1), 0)), nearest)
    if mode == "ru":
        return b.select(above, _neighbour(b, nearest, _c(ir.IntType(1), 1)), nearest)
    zero = _c(nearest.type, 0.0)
    inward = b.or_(
        b.and_(below, b.fcmp_ordered(">", nearest, zero)),
        b.and_(above, b.fcmp_ordered("<", nearest, zero)),
    )
    toward_zero = b.bitcast(
        b.sub(b.bitcast(nearest, _int_type(nearest)), _c(_int_type(nearest), 1)), nearest.type
    )
    return b.select(inward, toward_zero, nearest)


def _by_sign(b, nearest, residual, mode: str):
    """round_directed with the sign of a float residual (NaN: left alone)."""
    zero = _c(residual.type, 0.0)
    above = b.fcmp_ordered(">", residual, zero)
    below = b.fcmp_ordered("<", residual, zero)
    return round_directed(b, nearest, above, below, mode)


def two_sum(b, x, y):
    """(s, e): s = fl(x + y) and s + e == x + y exactly (for finite s)."""
    s = b.fadd(x, y)
    bb = b.fsub(s, x)
    e = b.fadd(b.fsub(x, b.fsub(s, bb)), b.fsub(y, bb))
    return s, e


# -- fp32: an exact pair of doubles rounded once ---------------------------------------------------
def _pair_to_f32(b, ctx, hi, lo, mode):
    """The exact value hi + lo (|lo| <= ulp(hi) / 2) rounded to fp32 in `mode`."""
    bits = b.bitcast(hi, I64)
    even = b.icmp_unsigned("==", b.and_(bits, _c(I64, 1)), _c(I64, 0))
    sticky = b.and_(b.fcmp_unordered("!=", lo, _c(F64, 0.0)), even)
    sticky = b.and_(sticky, b.fcmp_ordered("==", lo, lo))
    up = b.fcmp_ordered(">", lo, _c(F64, 0.0))
    odd = b.select(sticky, _neighbour(b, hi, up), hi)
    nearest = b.fptrunc(odd, F32)
    residual = b.fadd(b.fsub(hi, b.fpext(nearest, F64)), lo)
    finite = b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", hi), _c(F64, float("inf")))
    residual = b.select(finite, residual, _c(F64, 0.0))
    return _by_sign(b, nearest, residual, mode)


def _zero_sum_sign(b, result, x, y, mode):
    """An exact zero sum x + y rounded down is -0 unless both addends are +0."""
    if mode != "rd":
        return result
    it = _int_type(x)
    both_plus_zero = b.icmp_unsigned("==", b.or_(b.bitcast(x, it), b.bitcast(y, it)), _c(it, 0))
    zero_sum = b.fcmp_ordered("==", b.fadd(x, y), _c(x.type, 0.0))
    negative_zero = _c(result.type, -0.0)
    return b.select(b.and_(zero_sum, b.not_(both_plus_zero)), negative_zero, result)


def _f32_add(b, ctx, x, y, mode):
    x, y = b.fpext(x, F64), b.fpext(y, F64)
    s, e = two_sum(b, x, y)
    return _zero_sum_sign(b, _pair_to_f32(b, ctx, s, e, mode), x, y, mode)


def _f32_mul(b, ctx, x, y, mode):
    return _pair_to_f32(b, ctx, b.fmul(b.fpext(x, F64), b.fpext(y, F64)), _c(F64, 0.0), mode)


def _f32_fma(b, ctx, x, y, z, mode):
    product, addend = b.fmul(b.fpext(x, F64), b.fpext(y, F64)), b.fpext(z, F64)
    s, e = two_sum(b, product, addend)
    return _zero_sum_sign(b, _pair_to_f32(b, ctx, s, e, mode), product, addend, mode)


def _f32_div(b, ctx, x, y, mode):
    x, y = b.fpext(x, F64), b.fpext(y, F64)
    q = b.fptrunc(b.fdiv(x, y), F32)
    residual = b.fsub(x, b.fmul(b.fpext(q, F64), y))
    residual = b.fmul(residual, call_intrinsic(b, ctx, "copysign", _c(F64, 1.0), y))
    valid = b.and_(_finite(b, ctx, x), _finite(b, ctx, y))
    valid = b.and_(valid, b.fcmp_ordered("!=", y, _c(F64, 0.0)))
    return _by_sign(b, q, b.select(valid, residual, _c(F64, 0.0)), mode)


def _f32_sqrt(b, ctx, x, mode):
    x = b.fpext(x, F64)
    q = b.fptrunc(call_intrinsic(b, ctx, "sqrt", x), F32)
    q64 = b.fpext(q, F64)
    residual = b.fsub(x, b.fmul(q64, q64))
    valid = b.and_(_finite(b, ctx, x), b.fcmp_ordered(">", x, _c(F64, 0.0)))
    return _by_sign(b, q, b.select(valid, residual, _c(F64, 0.0)), mode)


def _finite(b, ctx, x):
    return b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", x), _c(x.type, float("inf")))


# -- fp64: residuals by fused multiply-adds --------------------------------------------------------
def _scale_if_small(b, ctx, small_of, *values):
    """2^110 where |small_of| < 2^-900 (a residual there could underflow), else 1."""
    small = b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", small_of), _c(F64, _SCALE_BELOW))
    return b.select(small, _c(F64, _SCALE), _c(F64, 1.0))


def _f64_add(b, ctx, x, y, mode):
    s, e = two_sum(b, x, y)
    overflow = b.and_(b.not_(_finite(b, ctx, s)), b.and_(_finite(b, ctx, x), _finite(b, ctx, y)))
    e = b.select(_finite(b, ctx, s), e, _c(F64, 0.0))
    e = b.select(overflow, b.fneg(s), e)
    return _zero_sum_sign(b, _by_sign(b, s, e, mode), x, y, mode)


def _f64_mul(b, ctx, x, y, mode):
    p = b.fmul(x, y)
    scale = _scale_if_small(b, ctx, p)
    scaled = b.fmul(x, scale)
    residual = call_intrinsic(b, ctx, "fma", scaled, y, b.fneg(b.fmul(p, scale)))
    residual = _underflowed_product(b, ctx, b.fmul(scaled, y), x, y, residual)
    return _by_sign(b, p, residual, mode)


def _underflowed_product(b, ctx, product, x, y, sign):
    """`sign`, or the sign of x * y where that product (scaled) is still a zero of nonzero
    finite factors: the exact result is then the product alone, below every double."""
    lost = b.and_(
        b.fcmp_ordered("==", product, _c(F64, 0.0)),
        b.and_(b.fcmp_unordered("!=", x, _c(F64, 0.0)), b.fcmp_unordered("!=", y, _c(F64, 0.0))),
    )
    lost = b.and_(lost, _all_finite(b, ctx, x, y))
    return b.select(lost, call_intrinsic(b, ctx, "copysign", _c(F64, 1.0), product), sign)


def _f64_div(b, ctx, x, y, mode):
    q = b.fdiv(x, y)
    small = b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", q), _c(F64, _SCALE_BELOW))
    small = b.or_(
        small, b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", x), _c(F64, _SCALE_BELOW))
    )
    scale = b.select(small, _c(F64, _SCALE), _c(F64, 1.0))
    residual = call_intrinsic(b, ctx, "fma", b.fneg(b.fmul(q, scale)), y, b.fmul(x, scale))
    residual = b.fmul(residual, call_intrinsic(b, ctx, "copysign", _c(F64, 1.0), y))
    valid = b.fcmp_ordered("!=", y, _c(F64, 0.0))
    return _by_sign(b, q, b.select(valid, residual, _c(F64, 0.0)), mode)


def _f64_sqrt(b, ctx, x, mode):
    s = call_intrinsic(b, ctx, "sqrt", x)
    small = b.fcmp_ordered("<", x, _c(F64, _SCALE_BELOW))
    scale = b.select(small, _c(F64, _SCALE), _c(F64, 1.0))
    root_scale = b.select(small, _c(F64, 2.0**55), _c(F64, 1.0))
    scaled = b.fmul(s, root_scale)
    residual = call_intrinsic(b, ctx, "fma", b.fneg(scaled), scaled, b.fmul(x, scale))
    valid = b.and_(_finite(b, ctx, x), b.fcmp_ordered(">", x, _c(F64, 0.0)))
    return _by_sign(b, s, b.select(valid, residual, _c(F64, 0.0)), mode)


def _f64_fma(b, ctx, x, y, z, mode):
    r = call_intrinsic(b, ctx, "fma", x, y, z)
    largest = call_intrinsic(
        b, ctx, "maxnum", call_intrinsic(b, ctx, "fabs", r), call_intrinsic(b, ctx, "fabs", z)
    )
    scale = _scale_if_small(b, ctx, largest)
    xs, zs, rs = b.fmul(x, scale), b.fmul(z, scale), b.fmul(r, scale)
    p = b.fmul(xs, y)
    terms = [call_intrinsic(b, ctx, "fma", xs, y, b.fneg(p)), p]  # increasing magnitude
    for addend in (zs, b.fneg(rs)):
        grown, carry = [], addend
        for term in terms:
            carry, low = two_sum(b, carry, term)
            grown.append(low)
        terms = [*grown, carry]
    sign = _c(F64, 0.0)
    for term in terms:  # the largest nonzero term decides
        sign = b.select(b.fcmp_unordered("!=", term, _c(F64, 0.0)), term, sign)
    overflow = b.and_(b.not_(_finite(b, ctx, r)), _all_finite(b, ctx, x, y, z))
    sign = b.select(overflow, b.fneg(r), sign)
    sign = _underflowed_product(b, ctx, p, x, y, sign)
    sign = b.select(_all_finite(b, ctx, x, y, z), sign, _c(F64, 0.0))
    result = _by_sign(b, r, sign, mode)
    if mode != "rd":
        return result
    return _fma_zero_rounded_down(b, ctx, result, x, y, z, sign)


def _fma_zero_rounded_down(b, ctx, result, x, y, z, sign):
    """An exact zero x * y + z rounded down: z when x * y and z are zeros of one sign, else -0."""
    exact_zero = b.and_(
        b.fcmp_ordered("==", result, _c(F64, 0.0)), b.fcmp_ordered("==", sign, _c(F64, 0.0))
    )
    product = b.fmul(x, y)
    zeros = b.and_(
        b.fcmp_ordered("==", product, _c(F64, 0.0)), b.fcmp_ordered("==", z, _c(F64, 0.0))
    )
    same_sign = b.icmp_unsigned(
        "==", b.lshr(b.bitcast(product, I64), _c(I64, 63)), b.lshr(b.bitcast(z, I64), _c(I64, 63))
    )
    zero = b.select(b.and_(zeros, same_sign), z, _c(F64, -0.0))
    return b.select(exact_zero, zero, result)


def _all_finite(b, ctx, *values):
    flag = _finite(b, ctx, values[0])
    for value in values[1:]:
        flag = b.and_(flag, _finite(b, ctx, value))
    return flag


# -- integer -> float ------------------------------------------------------------------------------
def int_to_float(b, x, target, signed: bool, mode: str):
    """Integer x (i32 or i64) converted to `target` in `mode`, by the sign of x minus the
    nearest result converted back (in 64-bit integers: the difference is small)."""
    nearest = b.sitofp(x, target) if signed else b.uitofp(x, target)
    wide = (b.sext(x, I64) if signed else b.zext(x, I64)) if x.type.width < 64 else x
    top = 2.0**63 if signed else 2.0**64
    back = b.fptosi(nearest, I64) if signed else b.fptoui(nearest, I64)
    beyond = b.fcmp_ordered(">=", nearest, _c(target, top))  # x < nearest, which has no i64
    difference = b.sub(wide, back)
    above = b.and_(b.not_(beyond), b.icmp_signed(">", difference, _c(I64, 0)))
    below = b.or_(beyond, b.icmp_signed("<", difference, _c(I64, 0)))
    return round_directed(b, nearest, above, below, mode)


def _double_to_float(b, ctx, x, mode):
    nearest = b.fptrunc(x, F32)
    residual = b.fsub(x, b.fpext(nearest, F64))
    return _by_sign(b, nearest, b.select(_finite(b, ctx, x), residual, _c(F64, 0.0)), mode)


def _register() -> None:
    f32 = {"add": _f32_add, "mul": _f32_mul, "div": _f32_div}
    f64 = {"add": _f64_add, "mul": _f64_mul, "div": _f64_div}
    for mode in MODES:
        for prefix, table, wrap in (("f", f32, flushing), ("d", f64, lambda fn: fn)):
            for name, fn in table.items():
                SYMBOLS[f"__nv_{prefix}{name}_{mode}"] = wrap(
                    lambda b, ctx, op, a, fn=fn, m=mode: fn(b, ctx, *a, m)
                )
            SYMBOLS[f"__nv_{prefix}sub_{mode}"] = wrap(
                lambda b, ctx, op, a, fn=table["add"], m=mode: fn(b, ctx, a[0], b.fneg(a[1]), m)
            )
            SYMBOLS[f"__nv_{prefix}rcp_{mode}"] = wrap(
                lambda b, ctx, op, a, fn=table["div"], m=mode: fn(
                    b, ctx, _c(a[0].type, 1.0), a[0], m
                )
            )
        SYMBOLS[f"__nv_fsqrt_{mode}"] = flushing(
            lambda b, ctx, op, a, m=mode: _f32_sqrt(b, ctx, *a, m)
        )
        SYMBOLS[f"__nv_dsqrt_{mode}"] = lambda b, ctx, op, a, m=mode: _f64_sqrt(b, ctx, *a, m)
        SYMBOLS[f"__nv_fmaf_{mode}"] = flushing(
            lambda b, ctx, op, a, m=mode: _f32_fma(b, ctx, *a, m)
        )
        SYMBOLS[f"__nv_fma_{mode}"] = lambda b, ctx, op, a, m=mode: _f64_fma(b, ctx, *a, m)
        SYMBOLS[f"__nv_ll2double_{mode}"] = lambda b, ctx, op, a, m=mode: int_to_float(
            b, a[0], F64, True, m
        )
        SYMBOLS[f"__nv_ull2double_{mode}"] = lambda b, ctx, op, a, m=mode: int_to_float(
            b, a[0], F64, False, m
        )
    for mode in ("rd", "ru"):
        SYMBOLS[f"__nv_double2float_{mode}"] = flushing(
            lambda b, ctx, op, a, m=mode: _double_to_float(b, ctx, a[0], m)
        )
        for stem, signed in (("int", True), ("uint", False), ("ll", True), ("ull", False)):
            SYMBOLS[f"__nv_{stem}2float_{mode}"] = lambda b, ctx, op, a, s=signed, m=mode: (
                int_to_float(b, a[0], F32, s, m)
            )


_register()
