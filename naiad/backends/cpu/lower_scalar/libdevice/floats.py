"""libdevice's float functions: the C math library, rounding to integers, rn arithmetic, fma,
classification."""

from __future__ import annotations

from llvmlite import ir

from ..floats import call_intrinsic
from ..math_ops import call_math
from ..registry import intrinsic
from ..types import F32, F64, I32, I64
from .table import SYMBOLS, both, define, flushing

# -- the C math library ----------------------------------------------------------------------------
# Stems whose f32 / f64 symbols are the math library's function of the same name.
_MATH = (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh",
    "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2", "pow", "erf",
    "erfc", "cbrt",
)  # fmt: skip
_FAST = ("sinf", "cosf", "log2f", "logf", "expf", "tanhf", "tanf", "log10f", "powf")


def _calls(stem: str):
    """The implementation that is LLVM intrinsic `llvm.<stem>` on the arguments."""
    return lambda b, ctx, op, args: call_intrinsic(b, ctx, stem, *args)


def _math(name: str):
    """The implementation that is the math library's `name`."""
    return lambda b, ctx, op, args: call_math(b, ctx, name, args, op)


for _stem in _MATH:
    define(*both(_stem))(_math(_stem))
for _fast in _FAST:
    SYMBOLS[f"__nv_fast_{_fast}"] = SYMBOLS[f"__nv_{_fast}"]
for _stem, _intrinsic in {"trunc": "trunc", "rint": "roundeven", "nearbyint": "roundeven"}.items():
    define(*both(_stem))(_calls(_intrinsic))
for _stem in ("round", "fabs", "copysign", "sqrt"):
    define(*both(_stem))(_calls(_stem))
for _stem in ("floor", "ceil"):
    define(f"__nv_{_stem}")(_calls(_stem))
    define(f"__nv_{_stem}f")(flushing(_calls(_stem)))
define(*both("fmod"))(lambda b, ctx, op, args: b.frem(*args))


@define(*both("rsqrt"))
def _rsqrt(b, ctx, op, args):
    """1 / sqrt(x) computed in f64 and rounded once (the reference's fp32 path)."""
    (x,) = args
    wide = x if x.type == F64 else b.fpext(x, F64)
    value = b.fdiv(ir.Constant(F64, 1.0), call_intrinsic(b, ctx, "sqrt", wide))
    return value if x.type == F64 else b.fptrunc(value, F32)


@define("__nv_saturatef")
@flushing
def _saturate(b, ctx, op, args):
    """Clamp to [0, 1] by comparisons (so -0 stays -0), NaN to 0."""
    (x,) = args
    zero, one = ir.Constant(F32, 0.0), ir.Constant(F32, 1.0)
    low = b.select(b.fcmp_ordered("<", x, zero), zero, x)
    clipped = b.select(b.fcmp_ordered(">", low, one), one, low)
    return b.select(b.fcmp_unordered("uno", x, x), zero, clipped)


# -- correctly rounded arithmetic (to nearest; the f32 forms flush) --------------------------------
_ROUNDED = {"add": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv"}
for _op, _method in _ROUNDED.items():
    _fn = lambda b, ctx, op, args, m=_method: getattr(b, m)(*args)  # noqa: E731
    define(f"__nv_d{_op}_rn")(_fn)
    define(f"__nv_f{_op}_rn")(flushing(_fn))
define("__nv_fast_fdividef")(flushing(lambda b, ctx, op, args: b.fdiv(*args)))


def _rcp(b, ctx, op, args):
    return b.fdiv(ir.Constant(args[0].type, 1.0), args[0])


define("__nv_drcp_rn")(_rcp)
define("__nv_frcp_rn")(flushing(_rcp))
define("__nv_dsqrt_rn")(_calls("sqrt"))
define("__nv_fsqrt_rn")(flushing(_calls("sqrt")))
define("__nv_fma", "__nv_fma_rn")(_calls("fma"))
define("__nv_fmaf", "__nv_fmaf_rn")(flushing(_calls("fma")))


# -- classification (int32 0 / 1) ----------------------------------------------------------------
define("__nv_isnanf", "__nv_isnand")(lambda b, ctx, op, args: b.fcmp_unordered("uno", *args * 2))


def _is_inf(b, ctx, x):
    return b.fcmp_ordered(
        "==", call_intrinsic(b, ctx, "fabs", x), ir.Constant(x.type, float("inf"))
    )


define("__nv_isinff", "__nv_isinfd")(lambda b, ctx, op, args: _is_inf(b, ctx, args[0]))
define("__nv_finitef", "__nv_isfinited")(
    lambda b, ctx, op, args: b.fcmp_ordered(
        "<", call_intrinsic(b, ctx, "fabs", args[0]), ir.Constant(args[0].type, float("inf"))
    )
)


@define("__nv_signbitf", "__nv_signbitd")
def _signbit(b, ctx, op, args):
    bits = b.bitcast(args[0], I64 if args[0].type == F64 else I32)
    return b.icmp_signed("<", bits, ir.Constant(bits.type, 0))


# -- exact functions of the bits -------------------------------------------------------------------
@define(*both("fdim"))
def _fdim(b, ctx, op, args):
    """x - y where x > y, else +0; NaN if either is."""
    x, y = args
    difference = b.select(b.fcmp_ordered(">", x, y), b.fsub(x, y), ir.Constant(x.type, 0.0))
    return b.select(b.fcmp_unordered("uno", x, y), b.fadd(x, y), difference)


@define(*both("nextafter"))
def _nextafter(b, ctx, op, args):
    """The neighbour of x toward y, in x's own precision (y itself when equal; NaN stays)."""
    x, y = args
    it = I64 if x.type == F64 else I32
    bits = b.bitcast(x, it)
    up = b.fcmp_ordered("<", x, y)
    negative = b.icmp_signed("<", bits, ir.Constant(it, 0))
    step = b.select(b.xor(up, negative), ir.Constant(it, 1), ir.Constant(it, -1))
    smallest = b.select(up, ir.Constant(it, 1), ir.Constant(it, 1 | (1 << (it.width - 1))))
    is_zero = b.fcmp_ordered("==", x, ir.Constant(x.type, 0.0))
    moved = b.bitcast(b.select(is_zero, smallest, b.add(bits, step)), x.type)
    result = b.select(b.fcmp_ordered("==", x, y), y, moved)
    return b.select(b.fcmp_unordered("uno", x, y), b.fadd(x, y), result)


def _exponent(b, ctx, x):
    """floor(log2 |x|) of a finite nonzero x as an i32, subnormals included (from the bits)."""
    it = I64 if x.type == F64 else I32
    mantissa, bias = (52, 1023) if x.type == F64 else (23, 127)
    magnitude = b.and_(b.bitcast(x, it), ir.Constant(it, (1 << (it.width - 1)) - 1))
    field = b.lshr(magnitude, ir.Constant(it, mantissa))
    lead = b.call(
        intrinsic(ctx.module, f"llvm.ctlz.i{it.width}", it, [it, ir.IntType(1)]),
        [magnitude, ir.Constant(ir.IntType(1), 0)],
    )
    # A subnormal's leading bit sits (width - 1 - lead) places up, below the mantissa's top.
    subnormal = b.sub(ir.Constant(it, it.width - 1 - mantissa + 1 - bias), lead)
    normal = b.sub(field, ir.Constant(it, bias))
    exponent = b.select(b.icmp_unsigned("==", field, ir.Constant(it, 0)), subnormal, normal)
    return b.trunc(exponent, I32) if it == I64 else exponent


@define("__nv_ilogb")
def _ilogb(b, ctx, op, args):
    """The exponent as int32; INT_MIN for 0 and NaN, INT_MAX for inf (f32: subnormals are 0)."""
    (x,) = args
    zero_or_nan = b.fcmp_unordered("==", x, ir.Constant(x.type, 0.0))
    infinite = b.fcmp_ordered(
        "==", call_intrinsic(b, ctx, "fabs", x), ir.Constant(x.type, float("inf"))
    )
    exponent = b.select(infinite, ir.Constant(I32, 2**31 - 1), _exponent(b, ctx, x))
    return b.select(zero_or_nan, ir.Constant(I32, -(2**31)), exponent)


define("__nv_ilogbf")(flushing(_ilogb))


@define(*both("logb"))
def _logb(b, ctx, op, args):
    """The exponent as a float; -inf for 0, inf for inf, NaN for NaN."""
    (x,) = args
    exponent = b.sitofp(_exponent(b, ctx, x), x.type)
    magnitude = call_intrinsic(b, ctx, "fabs", x)
    infinite = b.fcmp_ordered("==", magnitude, ir.Constant(x.type, float("inf")))
    result = b.select(infinite, magnitude, exponent)
    result = b.select(
        b.fcmp_ordered("==", x, ir.Constant(x.type, 0.0)),
        ir.Constant(x.type, float("-inf")),
        result,
    )
    return b.select(b.fcmp_unordered("uno", x, x), x, result)
