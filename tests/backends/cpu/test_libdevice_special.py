"""libdevice's special functions on the CPU (lower_scalar/libdevice/special.py, specialerf.py)
against float64 references of mpmath and NumPy, on random arguments of each function's domain
and its special values (zeros, infinities, NaN).

fp32 results are the fp64 computation rounded once, so they must be within 1 ulp of the exact
value rounded to fp32; fp64 ones within a few ulps (Bessel functions: of their local amplitude,
as relative errors grow next to their zeros on every implementation). The default tier checks
fp32; `-m full` adds fp64.
"""

import math

import mpmath
import numpy as np
import pytest
from scalar_jit import ScalarKernels, make_op

from naiad.ir import BoolAttr, FloatType, IntegerType, StringAttr
from naiad.testing.tolerance import ulp_distance

mpmath.mp.prec = 80
_INT = IntegerType(32)
N = 96


def _f(fn):
    return lambda *xs: float(fn(*(mpmath.mpf(float(x)) for x in xs)))


def _erfinv(y):
    if abs(y) >= 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    return float(mpmath.erfinv(mpmath.mpf(float(y))))


def _erfcinv(z):
    if not 0 < z < 2:
        return {0.0: math.inf, 2.0: -math.inf}.get(float(z), math.nan)
    return float(mpmath.findroot(lambda t: mpmath.erfc(t) - z, _erfinv(1 - z) or 0.0))


def _norm(*xs):
    return float(mpmath.sqrt(sum(mpmath.mpf(float(x)) ** 2 for x in xs)))


# stem -> (reference on float64 arguments, argument sampler, ulps for fp64, bessel-like)
def _uniform(lo, hi):
    return lambda rng, n: rng.uniform(lo, hi, n)


def _ints(lo, hi):
    return lambda rng, n: rng.integers(lo, hi, n).astype(np.int32)


_CASES = {
    "exp10": (_f(lambda x: mpmath.power(10, x)), [_uniform(-30, 30)], 2),
    "hypot": (_f(lambda x, y: mpmath.sqrt(x * x + y * y)), [_uniform(-1e3, 1e3)] * 2, 2),
    "rhypot": (_f(lambda x, y: 1 / mpmath.sqrt(x * x + y * y)), [_uniform(-1e3, 1e3)] * 2, 3),
    "norm3d": (_norm, [_uniform(-1e3, 1e3)] * 3, 3),
    "norm4d": (_norm, [_uniform(-1e3, 1e3)] * 4, 3),
    "rnorm3d": (lambda *xs: 1 / _norm(*xs), [_uniform(-1e3, 1e3)] * 3, 4),
    "rnorm4d": (lambda *xs: 1 / _norm(*xs), [_uniform(-1e3, 1e3)] * 4, 4),
    "rcbrt": (_f(lambda x: 1 / mpmath.cbrt(x)), [_uniform(-1e3, 1e3)], 4),
    "sinpi": (_f(lambda x: mpmath.sinpi(x)), [_uniform(-100, 100)], 2),
    "cospi": (_f(lambda x: mpmath.cospi(x)), [_uniform(-100, 100)], 2),
    "remainder": (lambda x, y: math.remainder(x, y), [_uniform(-1e4, 1e4), _uniform(-50, 50)], 0),
    "lgamma": (_f(lambda x: mpmath.log(abs(mpmath.gamma(x)))), [_uniform(0.1, 40)], 4),
    "tgamma": (_f(mpmath.gamma), [_uniform(-5.5, 30)], 6),
    "erfcx": (_f(lambda x: mpmath.exp(x * x) * mpmath.erfc(x)), [_uniform(-5, 40)], 6),
    "erfinv": (_erfinv, [_uniform(-0.999, 0.999)], 6),
    "erfcinv": (_erfcinv, [_uniform(0.001, 1.999)], 6),
    "normcdf": (_f(mpmath.ncdf), [_uniform(-30, 10)], 6),
    "normcdfinv": (lambda p: -math.sqrt(2) * _erfcinv(2 * p), [_uniform(0.001, 0.999)], 6),
    "cyl_bessel_i0": (_f(lambda x: mpmath.besseli(0, x)), [_uniform(-60, 60)], 16),
    "cyl_bessel_i1": (_f(lambda x: mpmath.besseli(1, x)), [_uniform(-60, 60)], 16),
}
_BESSEL = {
    "j0": (_f(lambda x: mpmath.besselj(0, x)), [_uniform(0, 60)]),
    "j1": (_f(lambda x: mpmath.besselj(1, x)), [_uniform(0, 60)]),
    "y0": (_f(lambda x: mpmath.bessely(0, x)), [_uniform(0.1, 60)]),
    "y1": (_f(lambda x: mpmath.bessely(1, x)), [_uniform(0.1, 60)]),
    "jn": (lambda n, x: float(mpmath.besselj(int(n), float(x))), [_ints(0, 6), _uniform(0, 40)]),
    "yn": (lambda n, x: float(mpmath.bessely(int(n), float(x))), [_ints(0, 6), _uniform(0.5, 40)]),
}
_EXACT_IN_ARGUMENTS = {  # results the fp64 computation gives exactly
    "ldexp": (lambda x, n: math.ldexp(x, int(n)), [_uniform(-1e3, 1e3), _ints(-200, 200)]),
    "scalbn": (lambda x, n: math.ldexp(x, int(n)), [_uniform(-1e3, 1e3), _ints(-200, 200)]),
    "powi": (lambda x, n: float(mpmath.mpf(float(x)) ** int(n)), [_uniform(-3, 3), _ints(-20, 20)]),
}
_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])


def _symbol(stem: str, kind: str) -> str:
    return f"__nv_{stem}{'f' if kind == 'f32' else ''}"


def _op(symbol: str, samplers, kind: str):
    float_type = FloatType(kind)
    operands = [_INT if _is_int(s) else float_type for s in samplers]
    attributes = {
        "libname": StringAttr("libdevice"),
        "libpath": StringAttr(""),
        "symbol": StringAttr(symbol),
        "pure": BoolAttr(1),
    }
    return make_op("tt.extern_elementwise", operands, [float_type], attributes)


def _is_int(sampler) -> bool:
    return sampler(np.random.default_rng(0), 1).dtype == np.int32


def _inputs(samplers, kind, rng):
    dtype = np.float32 if kind == "f32" else np.float64
    arrays = []
    for sampler in samplers:
        values = sampler(rng, N)
        if values.dtype != np.int32:
            values = values.astype(dtype)
            if len(samplers) == 1:
                values[: len(_SPECIALS)] = _SPECIALS
        arrays.append(values)
    return arrays


def _run(stems_and_cases, kind):
    rng = np.random.default_rng(16)
    kernels = ScalarKernels()
    planned = []
    for stem, (reference, samplers, *rest) in stems_and_cases.items():
        op = _op(_symbol(stem, kind), samplers, kind)
        planned.append((stem, reference, rest, kernels.add(op), _inputs(samplers, kind, rng)))
    kernels.compile()
    for stem, reference, rest, name, inputs in planned:
        got = kernels.run(name, inputs)
        with np.errstate(all="ignore"):  # references beyond fp32 become its infinities
            want = np.array([_safe(reference, *xs) for xs in zip(*inputs)]).astype(got.dtype)
        yield stem, got, want, rest, inputs


def _safe(reference, *xs):
    try:
        return reference(*xs)
    except (ValueError, OverflowError, ZeroDivisionError):
        return math.nan
    except Exception:  # mpmath's own errors at poles and infinities
        return math.nan


def _check(kind, cases, bound):
    for stem, got, want, rest, inputs in _run(cases, kind):
        known = np.isfinite(want)
        distance = ulp_distance(got[known], want[known])
        limit = 1 if kind == "f32" else bound(rest)
        bad = distance > limit
        shown = [x[known][bad][:3] for x in inputs]
        assert not bad.any(), (stem, kind, shown, got[known][bad][:3], want[known][bad][:3])


def _kinds():
    return ["f32", pytest.param("f64", marks=pytest.mark.full)]


@pytest.mark.parametrize("kind", _kinds())
def test_special_functions_match_mpmath(kind):
    _check(kind, _CASES, lambda rest: rest[0])


@pytest.mark.parametrize("kind", _kinds())
def test_exact_special_functions_match_exactly(kind):
    _check(kind, _EXACT_IN_ARGUMENTS, lambda rest: 0)


@pytest.mark.parametrize("kind", _kinds())
def test_bessel_functions_match_mpmath_near_their_amplitude(kind):
    for stem, got, want, _, inputs in _run(_BESSEL, kind):
        x = inputs[-1].astype(np.float64)
        amplitude = np.maximum(np.abs(want), np.sqrt(2 / (np.pi * np.maximum(x, 1.0))))
        with np.errstate(invalid="ignore", over="ignore"):
            error = np.abs(got.astype(np.float64) - want.astype(np.float64)) / amplitude
        known = np.isfinite(want) & (np.abs(want.astype(np.float64)) < 1e300)
        eps = np.finfo(got.dtype).eps
        assert (error[known] <= 16 * eps).all(), (stem, kind, x[known][error[known] > 16 * eps][:3])
