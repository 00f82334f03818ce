"""Every `tl.extra.libdevice` function and signature, run in the interpreter inside a real kernel.

Each (function, dtype signature) pair loads seeded random inputs from its domain, calls the
function and stores the result. References are computed independently: `math` in fp64, exact
rationals for rounded arithmetic and conversions, Python integers for bit functions, bisection
for the inverse error functions and Bessel's integrals (Gauss-Legendre) for Bessel functions.
Rounded, integer, bit and classification functions must match bit for bit, including the GPU's
flush of fp32 subnormals in the rounded arithmetic (Triton builds libdevice with FTZ).
"""

from __future__ import annotations

import inspect
import math
import struct
import zlib
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.language.extra import libdevice
from naiad.language.extra.libdevice_signatures import FUNCTIONS, MODES

N = 64
_NP = {
    "fp16": np.float16,
    "fp32": np.float32,
    "fp64": np.float64,
    "int32": np.int32,
    "int64": np.int64,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "int1": np.bool_,
}


@naiad.jit
def _call1(fn: tl.constexpr, a, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, fn(tl.load(a + offs)))


@naiad.jit
def _call2(fn: tl.constexpr, a, b, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, fn(tl.load(a + offs), tl.load(b + offs)))


@naiad.jit
def _call3(fn: tl.constexpr, a, b, c, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, fn(tl.load(a + offs), tl.load(b + offs), tl.load(c + offs)))


@naiad.jit
def _call4(fn: tl.constexpr, a, b, c, d, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = fn(tl.load(a + offs), tl.load(b + offs), tl.load(c + offs), tl.load(d + offs))
    tl.store(out + offs, x)


def run(name: str, args: list, result: str) -> np.ndarray:
    """libdevice.`name`(*args) in a kernel; the output starts poisoned. Arguments are padded to
    a power of two (repeating their last value), as `tl.arange` needs."""
    n = len(args[0])
    size = 1 << (n - 1).bit_length()
    args = [np.concatenate([a, np.repeat(a[-1:], size - n)]) for a in args]
    out = np.full(size * np.dtype(_NP[result]).itemsize, 0x5A, np.uint8)
    out = out.view(_NP[result]) if result != "int1" else (out & 1).view(np.bool_)
    kernel = (_call1, _call2, _call3, _call4)[len(args) - 1]
    kernel[(1,)](getattr(libdevice, name), *args, out, N=size)
    return out[:n]


# -- input domains: (rng, numpy dtype) -> N values -----------------------------------------------
def uniform(lo, hi):
    return lambda rng, dt: rng.uniform(lo, hi, N).astype(dt)


def magnitudes(lo_exp, hi_exp, signed=True):
    """Log-uniform magnitudes 10**lo_exp .. 10**hi_exp, with random signs."""

    def draw(rng, dt):
        x = 10.0 ** rng.uniform(lo_exp, hi_exp, N)
        return (x * rng.choice([-1.0, 1.0], N) if signed else x).astype(dt)

    return draw


def extreme(rng, dt):
    """Magnitudes whose products and quotients overflow and underflow the dtype."""
    return magnitudes(-36, 36)(rng, dt) if dt == np.float32 else magnitudes(-300, 300)(rng, dt)


def integers(lo, hi):
    return lambda rng, dt: rng.integers(lo, hi, N, endpoint=True).astype(dt)


def halves(rng, dt):
    """Exact halves (the ties of rounding) mixed with other values."""
    ties = rng.integers(-40, 40, N) / 2
    return np.where(rng.random(N) < 0.5, ties, rng.uniform(-9, 9, N)).astype(dt)


def any_bits(rng, dt):
    """Full-range integers shifted right by random amounts, so every bit length occurs."""
    info = np.iinfo(dt)
    unsigned = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)
    unsigned = unsigned.view(f"uint{8 * np.dtype(dt).itemsize}")
    shifted = unsigned >> rng.integers(0, 8 * unsigned.itemsize, N).astype(unsigned.dtype)
    return np.where(rng.random(N) < 0.3, unsigned, shifted).view(dt)


def by_kind(integer_domain, float_domain):
    return lambda rng, dt: (float_domain if np.dtype(dt).kind == "f" else integer_domain)(rng, dt)


def specials(rng, dt):
    picks = np.array([np.nan, np.inf, -np.inf, -1.5, 2.5, 1e-30, -3e30, -0.0])
    return np.where(rng.random(N) < 0.5, rng.choice(picks, N), rng.uniform(-5, 5, N)).astype(dt)


def saturating(limit):
    """Values inside and beyond (-limit, limit), with NaN and infinities."""

    def draw(rng, dt):
        x = rng.uniform(-1.3, 1.3, N) * limit
        x[:3] = [np.nan, np.inf, -np.inf]
        return x.astype(dt)

    return draw


# -- references -----------------------------------------------------------------------------------
def each(fn, otype=np.float64):
    """fn applied per element to Python numbers."""

    def ref(*args):
        scalars = [a.astype(object) if a.dtype.kind in "iu" else a.astype(np.float64) for a in args]
        return np.vectorize(fn, otypes=[otype])(*scalars)

    return ref


def round_exact(q: Fraction, dtype, mode: str) -> float:
    """The rational q rounded to fp32 / fp64 in `mode`, on integers (subnormals, overflow)."""
    if q == 0:
        return 0.0
    mant, emin, emax = (23, -126, 127) if dtype == np.float32 else (52, -1022, 1023)
    negative, a = q < 0, abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    e = max(e - (Fraction(2) ** e > a), emin)
    ulp = Fraction(2) ** (e - mant)
    m, rest = divmod(a, ulp)
    up = {
        "rz": False,
        "rd": negative and rest > 0,
        "ru": not negative and rest > 0,
        "rn": rest > ulp / 2 or (rest == ulp / 2 and m % 2 == 1),
    }[mode]
    value = (m + up) * ulp
    if value >= Fraction(2) ** (emax + 1):
        to_inf = mode == "rn" or (mode == "ru" and not negative) or (mode == "rd" and negative)
        value = math.inf if to_inf else (2 - Fraction(2) ** -mant) * Fraction(2) ** emax
    return -float(value) if negative else float(value)


def _fraction(x):
    return Fraction(int(x)) if isinstance(x, int) else Fraction(float(x))


def flush32(x):
    """fp32 subnormals as signed zeros: Triton's libdevice runs its fp32 arithmetic with FTZ."""
    if np.asarray(x).dtype != np.float32:
        return x
    return np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), x), x)


def rounded(exact, mode, ftz=True):
    """`exact(*Fractions)` rounded to the result type in `mode` (needs `out`); with `ftz`, fp32
    subnormal arguments and results are flushed to zero."""

    def ref(*args, out):
        args = [flush32(a) if ftz else a for a in args]
        values = each(lambda *xs: round_exact(exact(*map(_fraction, xs)), out, mode))(*args)
        return flush32(values.astype(out)) if ftz else values

    return ref


def _sqrt_fraction(x: Fraction) -> Fraction:
    with localcontext() as context:
        context.prec = 80
        return Fraction(Decimal(x.numerator).sqrt() / Decimal(x.denominator).sqrt())


def to_int(rounding, lo, hi):
    """Round, saturate to [lo, hi]; NaN gives 0 from fp32 to 32 bits, else the sign-bit pattern."""
    if rounding in MODES:
        rounding = {"rn": round, "rz": math.trunc, "rd": math.floor, "ru": math.ceil}[rounding]
    bits = (hi - lo).bit_length()

    def ref(x):
        nan = 0 if x.dtype == np.float32 and bits == 32 else 1 << (bits - 1)

        def one(v):
            if math.isnan(v):
                return nan
            return hi if v == math.inf else lo if v == -math.inf else min(max(rounding(v), lo), hi)

        return each(one, object)(flush32(x))

    return ref


def inverse(fn, lo, hi):
    """The y in [lo, hi] with fn(y) = x for monotonic fn, by bisection to the last bit."""
    increasing = fn(hi) > fn(lo)

    def one(x):
        a, b = lo, hi
        while a < (mid := (a + b) / 2) < b:
            a, b = (mid, b) if (fn(mid) < x) == increasing else (a, mid)
        return mid

    return each(one)


_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(300)
_THETA, _TAIL = (_NODES + 1) * np.pi / 2, (_NODES + 1) * 4


def _on_0_pi(values):
    """(1/pi) * the integral over [0, pi] of values sampled at _THETA."""
    return (_WEIGHTS[:, None] * values).sum(axis=0) / 2


def bessel_j(n, x):
    return _on_0_pi(np.cos(n * _THETA[:, None] - x * np.sin(_THETA[:, None])))


def bessel_y(n, x):
    t, n = _TAIL[:, None], n.astype(np.float64)
    tail = (np.exp(n * t) + (-1.0) ** n * np.exp(-n * t)) * np.exp(-x * np.sinh(t))
    tail_integral = 4 * (_WEIGHTS[:, None] * tail).sum(axis=0) / np.pi
    return _on_0_pi(np.sin(x * np.sin(_THETA[:, None]) - n * _THETA[:, None])) - tail_integral


def bessel_i(n, x):
    return _on_0_pi(np.exp(x * np.cos(_THETA[:, None])) * np.cos(n * _THETA[:, None]))


def _signed(v: int, bits: int) -> int:
    v %= 1 << bits
    return v - (1 << bits) if v >> (bits - 1) else v


def bitwise(fn):
    """fn(value as an unsigned integer, width) per element."""

    def ref(x):
        bits = 8 * x.dtype.itemsize
        return each(lambda v: fn(v % (1 << bits), bits), object)(x)

    return ref


def integer_op(fn):
    """fn(*Python integers, width, signed) per element."""

    def ref(*args):
        bits, signed = 8 * args[0].dtype.itemsize, args[0].dtype.kind == "i"
        return each(lambda *vs: fn(*vs, bits, signed), object)(*args)

    return ref


def reinterpret(src, dst, index=0):
    return each(lambda v: struct.unpack(dst, struct.pack(src, v))[index], object)


def _byte_perm(x, y, s, bits, signed):
    source = ((y % 2**32) << 32 | (x % 2**32)).to_bytes(8, "little")
    return int.from_bytes(bytes(source[(s >> 4 * i) & 7] for i in range(4)), "little")


def _mul24(a, b, bits, signed):
    low = [v & 0xFFFFFF for v in (a, b)]
    return math.prod(_signed(v, 24) for v in low) if signed else math.prod(low)


def _half_away(x):
    return math.copysign(math.floor(abs(x) + 0.5), x)


def _half_even(x):
    return math.copysign(round(x), x)


def _next_toward(x, y, out):
    step = Fraction(1, 2**1200) * (1 if y > x else -1)
    return x if x == y else round_exact(Fraction(x) + step, out, "ru" if y > x else "rd")


@dataclass(frozen=True)
class Spec:
    """Domains per argument, a reference, and (ulps fp32, ulps fp64) allowed; None: bit-exact."""

    domains: tuple
    reference: object
    ulps: tuple | None = (1, 2)
    atol: float = 0.0


def _math(fn, domain, ulps=(1, 2), arity=1, atol=0.0):
    return Spec((domain,) * arity, each(fn), ulps, atol)


def _exact(domains, reference):
    return Spec(domains, reference, None)


def _with_out(fn):
    """A reference that needs the result dtype."""
    fn.needs_out = True
    return fn


ANY, POS, WIDE = uniform(-10, 10), uniform(0.05, 10), magnitudes(-30, 30)
UNSIGNED_WIDE = magnitudes(-30, 30, signed=False)
BESSEL_ULPS = (2, 4096)

SPECS = {
    "floor": _exact((ANY,), np.floor),
    "ceil": _exact((ANY,), np.ceil),
    "trunc": _exact((ANY,), np.trunc),
    "rint": _exact((halves,), each(_half_even)),
    "nearbyint": _exact((halves,), each(_half_even)),
    "round": _exact((halves,), each(_half_away)),
    "exp2": _math(lambda x: 2.0**x, ANY),
    "exp": _math(math.exp, ANY),
    "exp10": _math(lambda x: 10.0**x, ANY),
    "expm1": _math(math.expm1, ANY),
    "log": _math(math.log, POS),
    "log2": _math(math.log2, POS),
    "log10": _math(math.log10, POS),
    "log1p": _math(math.log1p, uniform(-0.9, 10)),
    "sin": _math(math.sin, ANY),
    "cos": _math(math.cos, ANY),
    "tan": _math(math.tan, ANY),
    "sinpi": _math(lambda x: math.sin(math.pi * math.fmod(x, 2)), ANY, atol=2e-15),
    "cospi": _math(lambda x: math.cos(math.pi * math.fmod(x, 2)), ANY, atol=2e-15),
    "sinh": _math(math.sinh, ANY),
    "cosh": _math(math.cosh, ANY),
    "tanh": _math(math.tanh, ANY),
    "asin": _math(math.asin, uniform(-1, 1)),
    "acos": _math(math.acos, uniform(-1, 1)),
    "atan": _math(math.atan, ANY),
    "asinh": _math(math.asinh, ANY),
    "acosh": _math(math.acosh, uniform(1, 10)),
    "atanh": _math(math.atanh, uniform(-1, 1)),
    "atan2": _math(math.atan2, ANY, arity=2),
    "sqrt": _math(math.sqrt, POS, ulps=(0, 0)),
    "rsqrt": _math(lambda x: 1 / math.sqrt(x), POS),
    "cbrt": _math(math.cbrt, ANY),
    "rcbrt": _math(lambda x: 1 / math.cbrt(x), ANY),
    "hypot": _math(math.hypot, WIDE, arity=2),
    "rhypot": _math(lambda *v: 1 / math.hypot(*v), WIDE, arity=2),
    "norm3d": _math(math.hypot, WIDE, (1, 4), arity=3),
    "rnorm3d": _math(lambda *v: 1 / math.hypot(*v), WIDE, (1, 4), arity=3),
    "norm4d": _math(math.hypot, WIDE, (1, 4), arity=4),
    "rnorm4d": _math(lambda *v: 1 / math.hypot(*v), WIDE, (1, 4), arity=4),
    "copysign": _exact((ANY, ANY), each(math.copysign)),
    "nextafter": _exact(
        (ANY, ANY), _with_out(lambda x, y, out: each(lambda a, b: _next_toward(a, b, out))(x, y))
    ),
    "fmod": _exact((WIDE, magnitudes(-3, 3)), each(math.fmod)),
    "remainder": _exact((WIDE, magnitudes(-3, 3)), each(math.remainder)),
    "fdim": _exact((ANY, ANY), _with_out(rounded(lambda x, y: max(x - y, 0), "rn", ftz=False))),
    "ldexp": _exact((ANY, integers(-60, 60)), each(math.ldexp)),
    "scalbn": _exact((ANY, integers(-60, 60)), each(math.ldexp)),
    "pow": Spec((POS, ANY), each(math.pow)),
    "ilogb": _exact((WIDE,), each(lambda x: math.frexp(x)[1] - 1, object)),
    "logb": _exact((WIDE,), each(lambda x: float(math.frexp(x)[1] - 1))),
    "erf": _math(math.erf, ANY),
    "erfc": _math(math.erfc, uniform(-5, 20)),
    "lgamma": _math(math.lgamma, uniform(0.05, 30)),
    "tgamma": _math(math.gamma, uniform(-4.9, 20), (1, 4)),
    "saturatef": _exact((uniform(-0.5, 1.5),), lambda x: np.clip(x, 0, 1)),
    "rcp64h": Spec((WIDE,), lambda x: 1 / x, (0, 2**34)),
    "erfcx": _math(lambda x: math.exp(x * x) * math.erfc(x), uniform(-3, 8), (1, 256)),
    "erfinv": Spec((uniform(-1, 1),), inverse(math.erf, -7.0, 7.0), (1, 8)),
    "erfcinv": Spec(
        (uniform(0, 2),),
        lambda z: np.where(  # near z = 1, 1 - z is exact
            np.abs(1 - z) < 0.5,
            inverse(math.erf, -7.0, 7.0)(1.0 - z.astype(np.float64)),
            inverse(math.erfc, -7.0, 7.0)(z),
        ),
        (1, 8),
    ),
    "normcdf": _math(lambda x: math.erfc(-x / math.sqrt(2)) / 2, uniform(-8, 8), (1, 64)),
    "normcdfinv": Spec(
        (uniform(0, 1),), inverse(lambda y: math.erfc(-y / math.sqrt(2)) / 2, -40.0, 40.0), (1, 64)
    ),
    "j0": Spec((uniform(0.5, 40),), lambda x: bessel_j(0, x), BESSEL_ULPS, 1e-13),
    "j1": Spec((uniform(0.5, 40),), lambda x: bessel_j(1, x), BESSEL_ULPS, 1e-13),
    "y0": Spec((uniform(0.5, 40),), lambda x: bessel_y(np.zeros(1), x), BESSEL_ULPS, 1e-13),
    "y1": Spec((uniform(0.5, 40),), lambda x: bessel_y(np.ones(1), x), BESSEL_ULPS, 1e-13),
    "jn": Spec((integers(0, 12), uniform(0.5, 40)), bessel_j, BESSEL_ULPS, 1e-13),
    "yn": Spec((integers(0, 12), uniform(0.5, 40)), bessel_y, BESSEL_ULPS, 1e-13),
    "cyl_bessel_i0": Spec((uniform(-20, 40),), lambda x: bessel_i(0, x), (1, 1024)),
    "cyl_bessel_i1": Spec((uniform(-20, 40),), lambda x: bessel_i(1, x), (1, 1024)),
    "isnan": _exact((specials,), np.isnan),
    "isinf": _exact((specials,), np.isinf),
    "signbit": _exact((specials,), np.signbit),
    "finitef": _exact((specials,), np.isfinite),
    "isfinited": _exact((specials,), np.isfinite),
    "abs": _exact(
        (by_kind(any_bits, WIDE),),
        lambda x: np.abs(x) if x.dtype.kind == "f" else each(abs, object)(x),
    ),
    "clz": _exact((any_bits,), bitwise(lambda v, bits: bits - v.bit_length())),
    "popc": _exact((any_bits,), bitwise(lambda v, bits: v.bit_count())),
    "brev": _exact((any_bits,), bitwise(lambda v, bits: int(f"{v:0{bits}b}"[::-1], 2))),
    "ffs": _exact((any_bits,), bitwise(lambda v, bits: (v & -v).bit_length())),
    "byte_perm": _exact((any_bits,) * 3, integer_op(_byte_perm)),
    "mulhi": _exact((any_bits,) * 2, integer_op(lambda a, b, bits, signed: a * b >> bits)),
    "mul24": _exact((any_bits,) * 2, integer_op(_mul24)),
    "sad": _exact((any_bits,) * 3, each(lambda x, y, z: abs(x - y) + z, object)),
    "hadd": _exact((any_bits,) * 2, each(lambda a, b: (a + b) >> 1, object)),
    "rhadd": _exact((any_bits,) * 2, each(lambda a, b: (a + b + 1) >> 1, object)),
    "hiloint2double": _exact(
        (any_bits,) * 2,
        each(lambda hi, lo: struct.unpack("<d", struct.pack("<Ii", lo % 2**32, hi))[0]),
    ),
    "double2loint": _exact((WIDE,), reinterpret("<d", "<ii", 0)),
    "double2hiint": _exact((WIDE,), reinterpret("<d", "<ii", 1)),
    "int_as_float": _exact((any_bits,), reinterpret("<i", "<f")),
    "uint_as_float": _exact((any_bits,), reinterpret("<I", "<f")),
    "float_as_int": _exact((WIDE,), reinterpret("<f", "<i")),
    "float_as_uint": _exact((WIDE,), reinterpret("<f", "<I")),
    "longlong_as_double": _exact((any_bits,), reinterpret("<q", "<d")),
    "double_as_longlong": _exact((WIDE,), reinterpret("<d", "<q")),
    "int2double_rn": _exact((any_bits,), lambda x: x.astype(np.float64)),
    "uint2double_rn": _exact((any_bits,), lambda x: x.astype(np.float64)),
    "llrint": _exact((saturating(2.0**63),), to_int("rn", -(2**63), 2**63 - 1)),
    "llround": _exact((saturating(2.0**63),), to_int(_half_away, -(2**63), 2**63 - 1)),
    "fast_dividef": _exact((WIDE, WIDE), _with_out(rounded(lambda a, b: a / b, "rn"))),
    "fast_powf": Spec((POS, ANY), each(math.pow)),
    "rsqrt_rn": _exact((UNSIGNED_WIDE,), _with_out(rounded(lambda a: 1 / _sqrt_fraction(a), "rn"))),
    "fma": _exact((extreme,) * 3, _with_out(rounded(lambda a, b, c: a * b + c, "rn"))),
}

SPECS.update(
    {
        f"fast_{stem}": _math(fn, POS)
        for stem, fn in (
            ("sinf", math.sin),
            ("cosf", math.cos),
            ("log2f", math.log2),
            ("logf", math.log),
            ("expf", math.exp),
            ("tanhf", math.tanh),
            ("tanf", math.tan),
            ("exp10f", lambda x: 10.0**x),
            ("log10f", math.log10),
        )
    }
)

_INTEGER_RANGES = {
    "int": (-(2**31), 2**31 - 1),
    "uint": (0, 2**32 - 1),
    "ll": (-(2**63), 2**63 - 1),
    "ull": (0, 2**64 - 1),
}
_ROUNDED_OPS = {
    "add": (lambda a, b: a + b, 2),
    "sub": (lambda a, b: a - b, 2),
    "mul": (lambda a, b: a * b, 2),
    "div": (lambda a, b: a / b, 2),
    "fma": (lambda a, b, c: a * b + c, 3),
    "rcp": (lambda a: 1 / a, 1),
}
for mode in MODES:
    for op, (exact, arity) in _ROUNDED_OPS.items():
        SPECS[f"{op}_{mode}"] = _exact((extreme,) * arity, _with_out(rounded(exact, mode)))
    SPECS[f"sqrt_{mode}"] = _exact((UNSIGNED_WIDE,), _with_out(rounded(_sqrt_fraction, mode)))
    SPECS[f"double2float_{mode}"] = _exact(
        (magnitudes(-50, 50),), _with_out(rounded(Fraction, mode))
    )
    for src in ("float", "double"):
        for dst, (lo, hi) in _INTEGER_RANGES.items():
            SPECS[f"{src}2{dst}_{mode}"] = _exact((saturating(float(hi)),), to_int(mode, lo, hi))
    for src in _INTEGER_RANGES:
        for dst in ("float", "double"):
            if f"{src}2{dst}_{mode}" in FUNCTIONS:
                SPECS[f"{src}2{dst}_{mode}"] = _exact(
                    (any_bits,), _with_out(rounded(Fraction, mode))
                )


# -- the table-driven test ------------------------------------------------------------------------
CASES = [
    (name, index)
    for name, function in FUNCTIONS.items()
    for index in range(len(function.signatures))
]


def expected_values(spec: Spec, args: list, result: str) -> np.ndarray:
    out = _NP[result]
    if getattr(spec.reference, "needs_out", False):
        values = spec.reference(*args, out=out)
    else:
        values = spec.reference(*args)
    if np.dtype(out).kind in "iu":  # Python integers, wrapped to the result's width as C does
        bits = 8 * np.dtype(out).itemsize
        wrap = _signed if np.dtype(out).kind == "i" else (lambda v, bits: v % (1 << bits))
        return np.array([wrap(int(v), bits) for v in np.ravel(values)], dtype=out)
    return np.asarray(values).astype(out)


def assert_matches(got, expected, spec: Spec, context: str):
    if expected.dtype.kind != "f":
        bad = got != expected
    elif spec.ulps is None:
        same_nan = np.isnan(got) & np.isnan(expected)
        bad = ~same_nan & ((got != expected) | (np.signbit(got) != np.signbit(expected)))
    else:
        ulps = spec.ulps[0 if expected.dtype == np.float32 else 1]
        allowed = ulps * np.spacing(np.abs(expected)).astype(np.float64) + spec.atol
        error = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        bad = ~((error <= allowed) | (got == expected) | (np.isnan(got) & np.isnan(expected)))
    if bad.any():
        i = int(np.argmax(bad))
        pytest.fail(
            f"{context}: {int(bad.sum())} of {len(got)} differ; first at {i}: "
            f"got {got[i]!r}, expected {expected[i]!r}"
        )


@pytest.mark.parametrize(
    "name, index", CASES, ids=[FUNCTIONS[n].signatures[i][1] for n, i in CASES]
)
def test_function_matches_reference(name, index):
    function = FUNCTIONS[name]
    arg_types, symbol, result = function.signatures[index]
    result = "int1" if function.to_bool else result
    spec = SPECS[name]
    rng = np.random.default_rng(zlib.crc32(symbol.encode()))
    args = [domain(rng, _NP[t]) for domain, t in zip(spec.domains, arg_types)]
    got = run(name, args, result)
    assert_matches(
        got, expected_values(spec, args, result), spec, f"libdevice.{name} {arg_types} ({symbol})"
    )


def test_every_triton_name_is_a_builtin_with_tritons_signature():
    assert len(FUNCTIONS) == 198 and set(SPECS) == set(FUNCTIONS)
    for name, function in FUNCTIONS.items():
        fn = getattr(libdevice, name)
        params = ", ".join(f"arg{i}" for i in range(function.arity))
        assert str(inspect.signature(fn)) == f"({params}, _semantic=None)"
        assert fn.__name__ == name
        assert all(symbol in fn.__doc__ for _, symbol, _ in function.signatures)


# -- special values, flush to zero, known values and errors ---------------------------------------
INT32_MIN, INT32_MAX, INT64_MIN = -(2**31), 2**31 - 1, -(2**63)
NAN, INF = math.nan, math.inf
FP32_MAX = float(np.finfo(np.float32).max)

EDGES = [
    ("add_rd", "fp32", [[1.0, -0.0, 0.0], [-1.0, -0.0, -0.0]], [-0.0, -0.0, -0.0]),
    ("add_rn", "fp64", [[1.0, -0.0, 0.0], [-1.0, -0.0, -0.0]], [0.0, -0.0, 0.0]),
    ("mul_rz", "fp32", [[3e38, -3e38], [10.0, 10.0]], [FP32_MAX, -FP32_MAX]),
    ("mul_ru", "fp64", [[1e300, -1e300], [1e10, 1e10]], [INF, -1.7976931348623157e308]),
    ("div_rd", "fp32", [[1.0, -1.0, 0.0], [0.0, 0.0, 0.0]], [INF, -INF, NAN]),
    ("sqrt_ru", "fp64", [[-1.0, INF, -0.0]], [NAN, INF, -0.0]),
    (
        "fma_rd",
        "fp64",
        [[2.0, INF, 1e300], [3.0, 1.0, 1e300], [-6.0, -INF, -INF]],
        [-0.0, NAN, -INF],
    ),
    (
        "float2int_rn",
        "fp32",
        [[NAN, INF, -INF, 3e9, -3e9, 2.5, -2.5]],
        [0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 2, -2],
    ),
    ("double2uint_rz", "fp64", [[-5.0, 5e9, NAN, 4294967295.9]], [0, -1, INT32_MIN, -1]),
    ("double2int_rn", "fp64", [[NAN, 2.5]], [INT32_MIN, 2]),
    ("float2uint_rn", "fp32", [[NAN, -1.0]], [0, 0]),
    ("float2ll_rz", "fp32", [[NAN, -INF]], [INT64_MIN, INT64_MIN]),
    ("llrint", "fp64", [[NAN, 2.5]], [INT64_MIN, 2]),
    ("float2ull_ru", "fp32", [[-0.5, 1.5, 1e30]], [0, 2, -1]),
    ("double2ll_rd", "fp64", [[-0.5, 1e19, -1e19]], [-1, 2**63 - 1, INT64_MIN]),
    ("ilogb", "fp32", [[0.0, INF, NAN, 1e-40]], [INT32_MIN, INT32_MAX, INT32_MIN, INT32_MIN]),
    ("ilogb", "fp64", [[1e-320, INF]], [-1064, INT32_MAX]),
    ("logb", "fp64", [[0.0, -INF, NAN, 5e-324]], [-INF, INF, NAN, -1074.0]),
    ("saturatef", "fp32", [[NAN, -INF, INF]], [0.0, 0.0, 1.0]),
    ("j0", "fp64", [[0.0, INF, -INF]], [1.0, 0.0, 0.0]),
    ("y0", "fp64", [[0.0, -1.0, INF]], [-INF, NAN, 0.0]),
    ("yn", "int32", [[-1, 2, 3000], [1.0, 0.0, 1.0]], [NAN, -INF, -INF]),
    ("jn", "int32", [[-1, 3000, 0], [1.0, 1.0, 0.0]], [NAN, 0.0, 1.0]),
    ("cyl_bessel_i0", "fp64", [[-INF, 0.0]], [INF, 1.0]),
    ("cyl_bessel_i1", "fp32", [[-INF, -0.0]], [-INF, -0.0]),
    ("erfinv", "fp64", [[1.0, -1.0, 1.5, -0.0]], [INF, -INF, NAN, -0.0]),
    ("erfcinv", "fp64", [[0.0, 2.0, 1.0, -1.0]], [INF, -INF, 0.0, NAN]),
    ("normcdfinv", "fp64", [[0.0, 1.0]], [-INF, INF]),
    ("tgamma", "fp64", [[-1.0, -0.0, 200.0]], [NAN, -INF, INF]),
    ("lgamma", "fp32", [[-2.0, 1.0]], [INF, 0.0]),
    ("remainder", "fp64", [[5.0, 7.0, -5.0, INF], [2.0, 2.0, 2.0, 1.0]], [1.0, -1.0, -1.0, NAN]),
    ("sinpi", "fp64", [[1.0, -2.0, 0.5, 1e300]], [0.0, -0.0, 1.0, 0.0]),
    ("cospi", "fp32", [[0.5, 1.0, 1.5]], [0.0, -1.0, 0.0]),
]

# Flush to zero: fp32 subnormal arguments and results of these are signed zeros (never in fp64).
FTZ = [
    ("mul_rn", "fp32", [[1e-20, -1e-20], [1e-20, 1e-20]], [0.0, -0.0]),
    ("mul_rn", "fp64", [[1e-200], [1e-120]], [1e-200 * 1e-120]),
    ("add_ru", "fp32", [[1.5e-38, 1e-40], [-1.4e-38, 1.0]], [0.0, 1.0]),
    ("fma_rn", "fp32", [[1e-20], [-1e-20], [0.0]], [-0.0]),
    ("double2float_ru", "fp64", [[1e-40, -1e-40]], [0.0, -0.0]),
    ("float2int_rd", "fp32", [[-1e-40, -1.5]], [0, -2]),
    ("floor", "fp32", [[-1e-40]], [-0.0]),
    ("sqrt_rn", "fp32", [[1e-40]], [0.0]),
    ("saturatef", "fp32", [[1e-40]], [0.0]),
]


@pytest.mark.parametrize(
    "name, dtype, inputs, expected", EDGES + FTZ, ids=[e[0] for e in EDGES + FTZ]
)
def test_special_values(name, dtype, inputs, expected):
    function = FUNCTIONS[name]
    signature = next(s for s in function.signatures if s[0][0] == dtype)
    args = [np.array(values, dtype=_NP[t]) for values, t in zip(inputs, signature[0])]
    got = run(name, args, signature[2])
    expected = np.array(expected, dtype=_NP[signature[2]])
    assert_matches(got, expected, Spec((), None, None), f"libdevice.{name}")


# Values from tables (Abramowitz and Stegun), within 2 ulps.
KNOWN = [
    ("j0", [1.0, -1.0], [0.7651976865579666, 0.7651976865579666]),
    ("j1", [1.0, -1.0], [0.4400505857449335, -0.4400505857449335]),
    ("y0", [1.0, 0.8935769662791675], [0.08825696421567696, 0.0]),
    ("y1", [1.0], [-0.7812128213002887]),
    ("cyl_bessel_i0", [1.0, -1.0], [1.2660658777520084, 1.2660658777520084]),
    ("cyl_bessel_i1", [1.0, -1.0], [0.565159103992485, -0.565159103992485]),
    ("erfinv", [0.5], [0.4769362762044699]),
    ("normcdfinv", [0.975, 0.025], [1.959963984540054, -1.959963984540054]),
]


@pytest.mark.parametrize("name, inputs, expected", KNOWN, ids=[k[0] for k in KNOWN])
def test_known_values(name, inputs, expected):
    got = run(name, [np.array(inputs)], "fp64")
    assert_matches(got, np.array(expected), Spec((), None, (0, 2), atol=1e-16), name)


INTEGER_EDGES = [
    ("clz", [0, -1, 1], [32, 0, 31]),
    ("ffs", [0, INT32_MIN, 12], [0, 32, 3]),
    ("popc", [0, -1, INT32_MIN], [0, 32, 1]),
    ("brev", [1, 0, -1], [INT32_MIN, 0, -1]),
    ("abs", [INT32_MIN, -7, 7], [INT32_MIN, 7, 7]),
]


@pytest.mark.parametrize("name, inputs, expected", INTEGER_EDGES, ids=[e[0] for e in INTEGER_EDGES])
def test_integer_special_values(name, inputs, expected):
    got = run(name, [np.array(inputs, dtype=np.int32)], "int32")
    assert got.tolist() == expected


@naiad.jit
def _tanh_kernel(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs)))


def test_fp16_is_rejected_naming_the_accepted_types():
    x = np.linspace(0.1, 1, 16).astype(np.float16)
    with pytest.raises(Exception, match=r"tanh takes \(fp32\), \(fp64\); got \(fp16\)"):
        _tanh_kernel[(1,)](x, np.empty_like(x), N=16)


@naiad.jit
def _two_argument_tanh(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, libdevice.tanh(x, x))


def test_wrong_number_of_arguments_names_the_function():
    with pytest.raises(Exception, match=r"libdevice.tanh\(\): too many positional arguments"):
        _two_argument_tanh[(1,)](np.ones(16, np.float32), N=16)


def test_outside_a_kernel_asks_for_jit():
    with pytest.raises(ValueError, match=r"Did you forget to add @naiad\.jit"):
        libdevice.tanh(1.0)
