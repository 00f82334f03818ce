"""Which CUDA libdevice symbol each `libdevice` function calls, chosen by its argument dtypes.

One `Function` per name of Triton's `triton.language.extra.libdevice` (198 names), with Triton's
exact dtype tuples: `tanh` accepts (fp32) -> `__nv_tanhf` and (fp64) -> `__nv_tanh` and nothing
else, so an fp16 argument is an error there and here (cast to fp32 first). Some return types are
Triton's even where the C function's are not: `float2uint_rn`, `double2uint_rn` and
`float_as_uint` return int32, `float2ull_rn` and `double2ull_rn` return int64 (the bits of the
unsigned result); `isnan`, `isinf`, `finitef` and `isfinited` are cast to int1 after the call,
as Triton 3.6 does (`signbit` stays int32).
`fast_tanhf` is in Triton 3.6's list of names but not in its CUDA module; here it calls
`__nv_fast_tanhf`, which libdevice has.

Rounding suffixes: `_rn` to nearest even, `_rz` toward zero, `_rd` down, `_ru` up.
"""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("rn", "rz", "rd", "ru")
_MODE_WORDS = {"rn": "to nearest even", "rz": "toward zero", "rd": "down", "ru": "up"}


@dataclass(frozen=True)
class Function:
    """A libdevice function: its name, what it computes, and its accepted signatures.

    `signatures` holds `(argument dtype names, symbol, result dtype name)` triples; `to_bool`
    casts the int32 result to int1 (Triton's `isnan` and `isinf`).
    """

    name: str
    summary: str
    signatures: tuple
    to_bool: bool = False

    @property
    def arity(self) -> int:
        return len(self.signatures[0][0])


def _floats(stem: str, arity: int = 1) -> tuple:
    """The C math pattern: `__nv_{stem}f` on fp32 and `__nv_{stem}` on fp64."""
    return (
        (("fp32",) * arity, f"__nv_{stem}f", "fp32"),
        (("fp64",) * arity, f"__nv_{stem}", "fp64"),
    )


def _rounded(op: str, arity: int, mode: str) -> tuple:
    """The rounded-arithmetic pattern: `__nv_f{op}_{mode}` on fp32, `__nv_d{op}_{mode}` on fp64."""
    return (
        (("fp32",) * arity, f"__nv_f{op}_{mode}", "fp32"),
        (("fp64",) * arity, f"__nv_d{op}_{mode}", "fp64"),
    )


def _one(args: str, symbol: str, result: str) -> tuple:
    """A single signature; `args` is a comma-separated list of dtype names."""
    return ((tuple(args.split(",")), symbol, result),)


def _per_mode(name: str, summary: str, signatures) -> list:
    """The four rounding-mode variants of `name`; `signatures(mode)` gives each one's table."""
    return [
        Function(f"{name}_{mode}", f"{summary}, rounded {_MODE_WORDS[mode]}.", signatures(mode))
        for mode in MODES
    ]


def _conversions(name: str, src: str, dst: str, result: str, what: str) -> list:
    return _per_mode(name, what, lambda mode: _one(src, f"__nv_{name}_{mode}", result))


def _fast(stem: str, what: str, arity: int = 1) -> Function:
    symbol = f"__nv_fast_{stem}"
    return Function(
        f"fast_{stem}",
        f"{what} (an approximation on the GPU).",
        _one(",".join(["fp32"] * arity), symbol, "fp32"),
    )


_INTEGER = [
    Function(
        "clz",
        "Number of leading zero bits.",
        _one("int32", "__nv_clz", "int32") + _one("int64", "__nv_clzll", "int32"),
    ),
    Function(
        "popc",
        "Number of set bits.",
        _one("int32", "__nv_popc", "int32") + _one("int64", "__nv_popcll", "int32"),
    ),
    Function(
        "byte_perm",
        "Bytes of the 8-byte value {arg1:arg0} picked by the nibbles of arg2.",
        _one("int32,int32,int32", "__nv_byte_perm", "int32"),
    ),
    Function(
        "mulhi",
        "High half of the double-width product.",
        _one("int32,int32", "__nv_mulhi", "int32")
        + _one("uint32,uint32", "__nv_umulhi", "uint32")
        + _one("int64,int64", "__nv_mul64hi", "int64")
        + _one("uint64,uint64", "__nv_umul64hi", "uint64"),
    ),
    Function(
        "mul24",
        "Low 32 bits of the product of the low 24 bits of each operand.",
        _one("int32,int32", "__nv_mul24", "int32") + _one("uint32,uint32", "__nv_umul24", "uint32"),
    ),
    Function(
        "brev",
        "The bits in reverse order.",
        _one("int32", "__nv_brev", "int32") + _one("int64", "__nv_brevll", "int64"),
    ),
    Function(
        "sad",
        "|arg0 - arg1| + arg2.",
        _one("int32,int32,uint32", "__nv_sad", "int32")
        + _one("uint32,uint32,uint32", "__nv_usad", "uint32"),
    ),
    Function(
        "abs",
        "Absolute value (INT_MIN stays INT_MIN).",
        _one("int32", "__nv_abs", "int32")
        + _one("int64", "__nv_llabs", "int64")
        + _one("fp32", "__nv_fabsf", "fp32")
        + _one("fp64", "__nv_fabs", "fp64"),
    ),
    Function(
        "hadd",
        "(arg0 + arg1) >> 1 without overflow.",
        _one("int32,int32", "__nv_hadd", "int32") + _one("uint32,uint32", "__nv_uhadd", "uint32"),
    ),
    Function(
        "rhadd",
        "(arg0 + arg1 + 1) >> 1 without overflow.",
        _one("int32,int32", "__nv_rhadd", "int32") + _one("uint32,uint32", "__nv_urhadd", "uint32"),
    ),
    Function(
        "ffs",
        "1-based position of the lowest set bit; 0 when none is set.",
        _one("int32", "__nv_ffs", "int32") + _one("int64", "__nv_ffsll", "int32"),
    ),
]

_ROUNDED = [
    *_per_mode(
        "fma",
        "arg0 * arg1 + arg2 with one rounding",
        lambda mode: (
            (("fp32",) * 3, f"__nv_fmaf_{mode}", "fp32"),
            (("fp64",) * 3, f"__nv_fma_{mode}", "fp64"),
        ),
    ),
    *_per_mode("div", "arg0 / arg1", lambda mode: _rounded("div", 2, mode)),
    *_per_mode("rcp", "1 / arg0", lambda mode: _rounded("rcp", 1, mode)),
    *_per_mode("sqrt", "Square root", lambda mode: _rounded("sqrt", 1, mode)),
    *_per_mode("add", "arg0 + arg1", lambda mode: _rounded("add", 2, mode)),
    *_per_mode("mul", "arg0 * arg1", lambda mode: _rounded("mul", 2, mode)),
    *_per_mode("sub", "arg0 - arg1", lambda mode: _rounded("sub", 2, mode)),
    Function(
        "rsqrt_rn",
        "1 / sqrt(arg0), rounded to nearest even.",
        _one("fp32", "__nv_frsqrt_rn", "fp32"),
    ),
]

_CONVERSIONS = [
    *_conversions("double2float", "fp64", "fp32", "fp32", "fp64 to fp32"),
    *_conversions("double2int", "fp64", "int32", "int32", "fp64 to int32, saturating"),
    *_conversions("double2uint", "fp64", "uint32", "int32", "fp64 to uint32 bits, saturating"),
    Function(
        "int2double_rn", "int32 to fp64 (exact).", _one("int32", "__nv_int2double_rn", "fp64")
    ),
    Function(
        "uint2double_rn", "uint32 to fp64 (exact).", _one("uint32", "__nv_uint2double_rn", "fp64")
    ),
    *_conversions("float2int", "fp32", "int32", "int32", "fp32 to int32, saturating"),
    *_conversions("float2uint", "fp32", "uint32", "int32", "fp32 to uint32 bits, saturating"),
    *_conversions("int2float", "int32", "fp32", "fp32", "int32 to fp32"),
    *_conversions("uint2float", "uint32", "fp32", "fp32", "uint32 to fp32"),
    Function(
        "hiloint2double",
        "The fp64 whose high and low 32 bits are arg0 and arg1.",
        _one("int32,int32", "__nv_hiloint2double", "fp64"),
    ),
    Function(
        "double2loint", "The low 32 bits of an fp64.", _one("fp64", "__nv_double2loint", "int32")
    ),
    Function(
        "double2hiint", "The high 32 bits of an fp64.", _one("fp64", "__nv_double2hiint", "int32")
    ),
    *_conversions("float2ll", "fp32", "int64", "int64", "fp32 to int64, saturating"),
    *_conversions("float2ull", "fp32", "uint64", "int64", "fp32 to uint64 bits, saturating"),
    *_conversions("double2ll", "fp64", "int64", "int64", "fp64 to int64, saturating"),
    *_conversions("double2ull", "fp64", "uint64", "int64", "fp64 to uint64 bits, saturating"),
    *_conversions("ll2float", "int64", "fp32", "fp32", "int64 to fp32"),
    *_conversions("ull2float", "uint64", "fp32", "fp32", "uint64 to fp32"),
    *_conversions("ll2double", "int64", "fp64", "fp64", "int64 to fp64"),
    *_conversions("ull2double", "uint64", "fp64", "fp64", "uint64 to fp64"),
    Function(
        "int_as_float", "The int32 bits read as fp32.", _one("int32", "__nv_int_as_float", "fp32")
    ),
    Function(
        "float_as_int", "The fp32 bits read as int32.", _one("fp32", "__nv_float_as_int", "int32")
    ),
    Function(
        "uint_as_float",
        "The uint32 bits read as fp32.",
        _one("uint32", "__nv_uint_as_float", "fp32"),
    ),
    Function(
        "float_as_uint",
        "The fp32 bits read as int32 (Triton's result type).",
        _one("fp32", "__nv_float_as_uint", "int32"),
    ),
    Function(
        "longlong_as_double",
        "The int64 bits read as fp64.",
        _one("int64", "__nv_longlong_as_double", "fp64"),
    ),
    Function(
        "double_as_longlong",
        "The fp64 bits read as int64.",
        _one("fp64", "__nv_double_as_longlong", "int64"),
    ),
    Function(
        "llrint",
        "Round to nearest even, to int64 (saturating).",
        _one("fp32", "__nv_llrintf", "int64") + _one("fp64", "__nv_llrint", "int64"),
    ),
    Function(
        "llround",
        "Round half away from zero, to int64 (saturating).",
        _one("fp32", "__nv_llroundf", "int64") + _one("fp64", "__nv_llround", "int64"),
    ),
]

_FAST = [
    _fast("sinf", "Sine"),
    _fast("cosf", "Cosine"),
    _fast("log2f", "Base-2 logarithm"),
    _fast("logf", "Natural logarithm"),
    _fast("expf", "e**x"),
    _fast("tanhf", "Hyperbolic tangent"),
    _fast("tanf", "Tangent"),
    _fast("exp10f", "10**x"),
    _fast("log10f", "Base-10 logarithm"),
    _fast("powf", "arg0 ** arg1", arity=2),
    Function(
        "fast_dividef",
        "arg0 / arg1 (an approximation on the GPU).",
        _one("fp32,fp32", "__nv_fast_fdividef", "fp32"),
    ),
]

_CLASSIFY = [
    Function(
        "isnan",
        "Whether the value is a NaN (int1).",
        _one("fp32", "__nv_isnanf", "int32") + _one("fp64", "__nv_isnand", "int32"),
        to_bool=True,
    ),
    Function(
        "isinf",
        "Whether the value is infinite (int1).",
        _one("fp32", "__nv_isinff", "int32") + _one("fp64", "__nv_isinfd", "int32"),
        to_bool=True,
    ),
    Function(
        "signbit",
        "1 if the sign bit is set (zeros and NaNs included), else 0.",
        _one("fp32", "__nv_signbitf", "int32") + _one("fp64", "__nv_signbitd", "int32"),
    ),
    Function(
        "finitef",
        "Whether the fp32 value is finite (int1).",
        _one("fp32", "__nv_finitef", "int32"),
        to_bool=True,
    ),
    Function(
        "isfinited",
        "Whether the fp64 value is finite (int1).",
        _one("fp64", "__nv_isfinited", "int32"),
        to_bool=True,
    ),
]

# name, summary and arity of the functions that follow the C pattern (`tanhf` / `tanh`).
_C_MATH = [
    ("floor", "Largest integer not above the value.", 1),
    ("rsqrt", "1 / sqrt(arg0) (an approximation on the GPU).", 1),
    ("ceil", "Smallest integer not below the value.", 1),
    ("trunc", "The integer part, rounding toward zero.", 1),
    ("exp2", "2 ** arg0.", 1),
    ("sqrt", "Square root.", 1),
    ("rint", "Round to nearest, ties to even.", 1),
    ("nearbyint", "Round to nearest, ties to even.", 1),
    ("copysign", "|arg0| with the sign of arg1.", 2),
    ("nextafter", "The next representable value after arg0 toward arg1.", 2),
    ("sin", "Sine.", 1),
    ("cos", "Cosine.", 1),
    ("sinpi", "sin(pi * arg0), without the rounding of pi * arg0.", 1),
    ("cospi", "cos(pi * arg0), without the rounding of pi * arg0.", 1),
    ("tan", "Tangent.", 1),
    ("log2", "Base-2 logarithm.", 1),
    ("exp", "e ** arg0.", 1),
    ("exp10", "10 ** arg0.", 1),
    ("cosh", "Hyperbolic cosine.", 1),
    ("sinh", "Hyperbolic sine.", 1),
    ("tanh", "Hyperbolic tangent.", 1),
    ("atan2", "The angle of the point (arg1, arg0), in (-pi, pi].", 2),
    ("atan", "Arc tangent.", 1),
    ("asin", "Arc sine.", 1),
    ("acos", "Arc cosine.", 1),
    ("log", "Natural logarithm.", 1),
    ("log10", "Base-10 logarithm.", 1),
    ("log1p", "log(1 + arg0), accurate near zero.", 1),
    ("acosh", "Inverse hyperbolic cosine.", 1),
    ("asinh", "Inverse hyperbolic sine.", 1),
    ("atanh", "Inverse hyperbolic tangent.", 1),
    ("expm1", "exp(arg0) - 1, accurate near zero.", 1),
    ("hypot", "sqrt(arg0**2 + arg1**2) without overflow.", 2),
    ("rhypot", "1 / hypot(arg0, arg1).", 2),
    ("norm3d", "The Euclidean norm of three values.", 3),
    ("rnorm3d", "1 / norm3d.", 3),
    ("norm4d", "The Euclidean norm of four values.", 4),
    ("rnorm4d", "1 / norm4d.", 4),
    ("cbrt", "Cube root.", 1),
    ("rcbrt", "1 / cbrt(arg0).", 1),
    ("j0", "Bessel function of the first kind, order 0.", 1),
    ("j1", "Bessel function of the first kind, order 1.", 1),
    ("y0", "Bessel function of the second kind, order 0.", 1),
    ("y1", "Bessel function of the second kind, order 1.", 1),
    ("cyl_bessel_i0", "Modified Bessel function of the first kind, order 0.", 1),
    ("cyl_bessel_i1", "Modified Bessel function of the first kind, order 1.", 1),
    ("erf", "The error function.", 1),
    ("erfinv", "The inverse error function.", 1),
    ("erfc", "1 - erf(arg0), accurate for large arguments.", 1),
    ("erfcx", "exp(arg0**2) * erfc(arg0), the scaled complementary error function.", 1),
    ("erfcinv", "The inverse of erfc.", 1),
    ("normcdfinv", "The inverse of the standard normal distribution function.", 1),
    ("normcdf", "The standard normal distribution function.", 1),
    ("lgamma", "log|Gamma(arg0)|.", 1),
    ("fmod", "arg0 - n * arg1 with n = trunc(arg0 / arg1), exact.", 2),
    ("remainder", "arg0 - n * arg1 with n = arg0 / arg1 rounded to nearest even, exact.", 2),
    ("fma", "arg0 * arg1 + arg2 with one rounding.", 3),
    ("tgamma", "The Gamma function.", 1),
    ("round", "Round to nearest, ties away from zero.", 1),
    ("fdim", "arg0 - arg1 if arg0 > arg1, else +0.", 2),
    ("logb", "The exponent of the value, as a float.", 1),
]

_SPECIAL_SIGNATURES = [
    Function(
        "rcp64h",
        "1 / arg0 from the high 32 bits of arg0 (a coarse approximation).",
        _one("fp64", "__nv_rcp64h", "fp64"),
    ),
    Function("saturatef", "Clamp to [0, 1]; NaN gives 0.", _one("fp32", "__nv_saturatef", "fp32")),
    Function(
        "yn",
        "Bessel function of the second kind of integer order arg0, at arg1.",
        _one("int32,fp32", "__nv_ynf", "fp32") + _one("int32,fp64", "__nv_yn", "fp64"),
    ),
    Function(
        "jn",
        "Bessel function of the first kind of integer order arg0, at arg1.",
        _one("int32,fp32", "__nv_jnf", "fp32") + _one("int32,fp64", "__nv_jn", "fp64"),
    ),
    Function(
        "ldexp",
        "arg0 * 2 ** arg1.",
        _one("fp32,int32", "__nv_ldexpf", "fp32") + _one("fp64,int32", "__nv_ldexp", "fp64"),
    ),
    Function(
        "scalbn",
        "arg0 * 2 ** arg1.",
        _one("fp32,int32", "__nv_scalbnf", "fp32") + _one("fp64,int32", "__nv_scalbn", "fp64"),
    ),
    Function(
        "pow",
        "arg0 ** arg1; an int32 exponent selects the integer-power routine.",
        _one("fp32,int32", "__nv_powif", "fp32")
        + _one("fp64,int32", "__nv_powi", "fp64")
        + _floats("pow", 2),
    ),
    Function(
        "ilogb",
        "The exponent of the value, as int32 (INT_MIN for 0 and NaN).",
        _one("fp32", "__nv_ilogbf", "int32") + _one("fp64", "__nv_ilogb", "int32"),
    ),
]

FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        _INTEGER
        + _ROUNDED
        + _CONVERSIONS
        + _FAST
        + _CLASSIFY
        + _SPECIAL_SIGNATURES
        + [Function(name, summary, _floats(name, arity)) for name, summary, arity in _C_MATH]
    )
}
