"""The CPU math library, compiled for the host and run on NumPy arrays (jit_helpers).

Accuracy: the largest error in ulps against a reference more precise than the result (NumPy's
float64 functions for f32; NumPy's long double, that is x87 extended on x86-64, or mpmath for
erf and erfc, for f64), over seeded random and structured inputs, must stay within each
function's stated bound. Special values (infinities, NaN, signed zeros, poles, overflow and
underflow) must match libm bit for bit. And the loop around a function must be vectorized.
"""

from __future__ import annotations

import math
import re

import llvmlite.binding as llvm
import numpy as np
import pytest
from jit_helpers import compiled, map_module, optimize
from llvmlite import ir

from naiad.backends.cpu.mathlib import INTRINSICS, NAMES, math_function
from naiad.backends.cpu.target import host_target

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
EXTENDED = np.finfo(np.longdouble).nmant >= 63
BINARY = ("atan2", "pow")


def _erf_reference(name: str):
    """erf/erfc: math's double version for f32, mpmath (30 digits) for long double arrays (the
    f64 cases skip where mpmath, which comes with sympy, is missing)."""

    def reference(x):
        if x.dtype == np.float64:
            return np.vectorize(getattr(math, name))(x)
        mpmath = pytest.importorskip("mpmath")
        # Past |x| = 40, erf is ±1 and erfc 0 or 2 in every float type (and mpmath overflows).
        clamped = np.clip(x, -40, 40)
        function = getattr(mpmath, name)
        with mpmath.workdps(30):
            return np.array([np.longdouble(mpmath.nstr(function(float(v)), 25)) for v in clamped])

    return reference


# name: (f64 reference on float64 / long double arrays, f32 bound, f64 bound) in ulps. f32 exp
# and exp2 are measured over every input in test_mathlib_exp.py.
CASES = {
    "exp": (np.exp, 1.02, 1),
    "exp2": (np.exp2, 0.9, 1),
    "expm1": (np.expm1, 1, 1),
    "log": (np.log, 1, 1),
    "log2": (np.log2, 1, 1),
    "log10": (np.log10, 1, 1),
    "log1p": (np.log1p, 1, 1),
    "sin": (np.sin, 1, 1),
    "cos": (np.cos, 1, 1),
    "tan": (np.tan, 1, 1),
    "asin": (np.arcsin, 1, 1),
    "acos": (np.arccos, 1, 1),
    "atan": (np.arctan, 1, 1),
    "atan2": (np.arctan2, 1, 1),
    "sinh": (np.sinh, 2, 2),
    "cosh": (np.cosh, 2, 2),
    "tanh": (np.tanh, 2, 2),
    "asinh": (np.arcsinh, 2, 2),
    "acosh": (np.arccosh, 3, 3),
    "atanh": (np.arctanh, 2, 2),
    "erf": (_erf_reference("erf"), 2, 2),
    "erfc": (_erf_reference("erfc"), 4, 4),
    "cbrt": (np.cbrt, 1, 1),
    "pow": (np.power, 1, 1),
    "rsqrt": (lambda x: 1 / np.sqrt(x), 2, 2),
}


def _log_uniform(rng, lo: float, hi: float, n: int, signed: bool = False):
    x = np.exp(rng.uniform(math.log(lo), math.log(hi), n))
    return x * rng.choice([-1.0, 1.0], n) if signed else x


def _near_half_pi_multiples(rng, n):
    return rng.integers(-6366, 6366, n) * (np.pi / 2)


def inputs(name: str, dtype, n: int, rng) -> list[np.ndarray]:
    """Random inputs over the function's domain (log-uniform where it spans binades), with the
    regions that are hard for it (subnormals, reduction boundaries, near poles) included."""
    big = 88.0 if dtype == F32 else 709.0
    tiny = float(np.finfo(dtype).smallest_subnormal)
    u = rng.uniform
    by_name = {
        "exp": [u(-big - 16, big + 1, n), u(-1, 1, n)],
        "exp2": [u(-155, 130, n) if dtype == F32 else u(-1080, 1030, n), u(-1, 1, n)],
        "expm1": [u(-40, big + 1, n), u(-1, 1, n), _log_uniform(rng, 1e-30, 1, n, True)],
        "log": [_log_uniform(rng, tiny, 1e300, n), u(0.5, 2, n)],
        "log1p": [
            _log_uniform(rng, 1e-30, 1e30, n),
            -_log_uniform(rng, 1e-30, 1, n),
            -1 + _log_uniform(rng, 1e-30, 1, n),
            u(-1, 1, n),
        ],
        "sin": [u(-1e4, 1e4, n), u(-4, 4, n), _near_half_pi_multiples(rng, n)],
        "asin": [u(-1, 1, n), 1 - _log_uniform(rng, 1e-30, 1, n), _log_uniform(rng, 1e-30, 1, n)],
        "atan": [u(-4, 4, n), _log_uniform(rng, 1e-30, 1e30, n, True)],
        "sinh": [u(-3, 3, n), u(-big - 2, big + 2, n), _log_uniform(rng, 1e-20, 1, n, True)],
        "asinh": [u(-3, 3, n), _log_uniform(rng, 1e-30, 1e30, n, True)],
        "acosh": [1 + _log_uniform(rng, 1e-30, 2, n), _log_uniform(rng, 1, 1e30, n)],
        "atanh": [u(-1, 1, n), 1 - _log_uniform(rng, 1e-30, 1, n), _log_uniform(rng, 1e-30, 1, n)],
        "erf": [u(-5, 5, n), u(-1.1, 1.1, n), _log_uniform(rng, 1e-30, 6, n, True)],
        "erfc": [u(-5, 5, n), u(0, 28 if dtype == F64 else 10.5, n), u(0.3, 1.2, n)],
        "cbrt": [u(-10, 10, n), _log_uniform(rng, tiny, 1e300, n, True)],
        "rsqrt": [_log_uniform(rng, tiny, 1e300, n)],
    }
    for alias, same in {"log2": "log", "log10": "log", "cos": "sin", "tan": "sin",
                        "acos": "asin", "cosh": "sinh", "tanh": "sinh"}.items():  # fmt: skip
        by_name[alias] = by_name[same]
    if name == "atan2":
        y = np.concatenate([_log_uniform(rng, 1e-30, 1e30, n, True), u(-1, 1, n)])
        x = np.concatenate([_log_uniform(rng, 1e-30, 1e30, n, True), u(-1, 1, n)])
        return [y.astype(dtype), x.astype(dtype)]
    if name == "pow":
        scale = 60 if dtype == F32 else 600
        x = np.concatenate([_log_uniform(rng, 1e-9, 1e9, n), u(0, 2, n), u(-3, 3, n)])
        y = np.concatenate([u(-scale, scale, n), u(-30, 30, n), rng.integers(-40, 40, n)])
        return [x.astype(dtype), y.astype(dtype)]
    extra = structured(dtype)
    if name in ("sin", "cos", "tan"):
        extra = extra[np.abs(extra) <= 1e4]  # the domain of their bound
    with np.errstate(over="ignore"):
        return [np.concatenate([*by_name[name], extra]).astype(dtype)]


def structured(dtype) -> np.ndarray:
    """Every power of two of the type (and its neighbours) with both signs, and quarter
    integers up to 100: exact cases, binade edges, overflow and underflow thresholds."""
    info = np.finfo(dtype)
    powers = np.ldexp(
        np.ones(1, dtype), np.arange(int(np.log2(info.smallest_subnormal)), info.maxexp)
    )
    edges = np.concatenate([powers, np.nextafter(powers, 0), np.nextafter(powers, np.inf)])
    return np.concatenate([edges, -edges, np.arange(-400, 401) / 4]).astype(dtype)


def ulp_errors(actual: np.ndarray, reference: np.ndarray, dtype) -> np.ndarray:
    """|actual - reference| in units of the last place of `reference` in `dtype` (subnormal
    spacing below the normal range); 0 where both are the same infinity or both NaN."""
    info = np.finfo(dtype)
    ref = np.asarray(reference)
    _, exponent = np.frexp(np.abs(ref))
    exponent = np.maximum(exponent.astype(np.int64) - 1, int(np.log2(info.smallest_normal)))
    ulp = np.ldexp(np.ones_like(ref), (exponent - info.nmant).astype(np.int32))
    with np.errstate(invalid="ignore", over="ignore"):
        errors = np.abs(actual.astype(ref.dtype) - ref) / ulp
        rounded = ref.astype(dtype)
    same_infinity = np.isinf(rounded) & (actual == rounded)
    both_nan = np.isnan(ref) & np.isnan(actual)
    return np.where(same_infinity | both_nan, 0.0, errors)


def max_error(name: str, dtype, n: int, seed: int) -> tuple[float, list]:
    rng = np.random.default_rng(seed)
    arguments = inputs(name, dtype, n, rng)
    function, *_ = CASES[name]
    actual = compiled(name, dtype.name, len(arguments))(*arguments)
    wide = np.float64 if dtype == F32 else np.longdouble
    with np.errstate(all="ignore"):
        reference = function(*(a.astype(wide) for a in arguments))
    errors = ulp_errors(actual, np.asarray(reference, wide), dtype)
    worst = int(np.argmax(errors))
    return float(errors[worst]), [a[worst] for a in arguments]


def _check_accuracy(name: str, dtype, n: int, seed: int):
    if dtype == F64 and not EXTENDED:
        pytest.skip("the f64 reference needs an extended long double")
    if name in ("erf", "erfc") and dtype == F64:
        n //= 20  # mpmath is the reference there
    _, bound32, bound64 = CASES[name]
    bound = bound32 if dtype == F32 else bound64
    error, where = max_error(name, dtype, n, seed)
    assert error <= bound, f"{name}[{dtype}]: {error:.3f} ulp at {where} (bound {bound})"


@pytest.mark.parametrize("dtype", [F32, F64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_accuracy_within_bound(name, dtype):
    _check_accuracy(name, dtype, 50_000, seed=len(name))


@pytest.mark.full
@pytest.mark.parametrize("dtype", [F32, F64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_accuracy_within_bound_large_sweep(name, dtype):
    _check_accuracy(name, dtype, 400_000, seed=1000 + len(name))


def test_sin_cos_stay_bounded_beyond_the_accurate_domain():
    """Past |x| = 1e4 the reduction loses accuracy, but the values stay in [-1, 1]."""
    rng = np.random.default_rng(7)
    for dtype, top in ((F32, 38), (F64, 307)):
        x = _log_uniform(rng, 1e4, 10.0**top, 50_000, signed=True).astype(dtype)
        for name in ("sin", "cos"):
            y = compiled(name, dtype.name)(x)
            assert np.all(np.abs(y) <= 1), name


INF, NAN = math.inf, math.nan
SPECIAL = {  # name: [(arguments, expected)], exact (sign of zero and NaN included)
    "exp": [(NAN, NAN), (INF, INF), (-INF, 0.0), (0.0, 1.0), (-0.0, 1.0), (1e4, INF),
            (-1e4, 0.0)],
    "exp2": [(NAN, NAN), (INF, INF), (-INF, 0.0), (10.0, 1024.0), (-3.0, 0.125), (2e3, INF)],
    "expm1": [(NAN, NAN), (INF, INF), (-INF, -1.0), (0.0, 0.0), (-0.0, -0.0), (1e4, INF)],
    "log": [(NAN, NAN), (0.0, -INF), (-0.0, -INF), (-1.0, NAN), (INF, INF), (-INF, NAN),
            (1.0, 0.0)],
    "log2": [(0.0, -INF), (-2.0, NAN), (INF, INF), (8.0, 3.0), (0.25, -2.0), (1.0, 0.0)],
    "log10": [(0.0, -INF), (-2.0, NAN), (INF, INF), (1.0, 0.0)],
    "log1p": [(-1.0, -INF), (-2.0, NAN), (0.0, 0.0), (-0.0, -0.0), (INF, INF), (NAN, NAN)],
    "sin": [(0.0, 0.0), (-0.0, -0.0), (INF, NAN), (-INF, NAN), (NAN, NAN)],
    "cos": [(0.0, 1.0), (-0.0, 1.0), (INF, NAN), (NAN, NAN)],
    "tan": [(0.0, 0.0), (-0.0, -0.0), (-INF, NAN), (NAN, NAN)],
    "asin": [(0.0, 0.0), (-0.0, -0.0), (1.5, NAN), (-INF, NAN), (NAN, NAN)],
    "acos": [(1.0, 0.0), (2.0, NAN), (NAN, NAN)],
    "atan": [(0.0, 0.0), (-0.0, -0.0), (INF, math.pi / 2), (-INF, -math.pi / 2), (NAN, NAN)],
    "sinh": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -INF), (1e4, INF), (NAN, NAN)],
    "cosh": [(0.0, 1.0), (-INF, INF), (1e4, INF), (NAN, NAN)],
    "tanh": [(0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, -1.0), (50.0, 1.0), (NAN, NAN)],
    "asinh": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -INF), (NAN, NAN)],
    "acosh": [(1.0, 0.0), (0.5, NAN), (-1.0, NAN), (INF, INF), (NAN, NAN)],
    "atanh": [(0.0, 0.0), (-0.0, -0.0), (1.0, INF), (-1.0, -INF), (2.0, NAN), (NAN, NAN)],
    "erf": [(0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, -1.0), (7.0, 1.0), (NAN, NAN)],
    "erfc": [(0.0, 1.0), (INF, 0.0), (-INF, 2.0), (30.0, 0.0), (NAN, NAN)],
    "cbrt": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -INF), (27.0, 3.0), (-8.0, -2.0),
             (NAN, NAN)],
    "rsqrt": [(0.0, INF), (-0.0, -INF), (INF, 0.0), (-1.0, NAN), (4.0, 0.5)],
    "atan2": [((0.0, 0.0), 0.0), ((-0.0, 0.0), -0.0), ((0.0, -0.0), math.pi),
              ((-0.0, -0.0), -math.pi), ((0.0, -1.0), math.pi), ((-0.0, -1.0), -math.pi),
              ((1.0, 0.0), math.pi / 2), ((-1.0, -0.0), -math.pi / 2),
              ((INF, INF), math.pi / 4), ((-INF, -INF), -3 * math.pi / 4),
              ((1.0, INF), 0.0), ((-1.0, -INF), -math.pi), ((INF, 5.0), math.pi / 2),
              ((NAN, 1.0), NAN), ((1.0, NAN), NAN)],
    "pow": [((NAN, 0.0), 1.0), ((1.0, NAN), 1.0), ((-1.0, INF), 1.0), ((-1.0, -INF), 1.0),
            ((2.0, NAN), NAN), ((NAN, 2.0), NAN), ((-2.0, 0.5), NAN), ((-2.0, 3.0), -8.0),
            ((-2.0, 2.0), 4.0), ((0.0, -1.0), INF), ((-0.0, -1.0), -INF), ((-0.0, -2.0), INF),
            ((-0.0, 3.0), -0.0), ((-0.0, 2.5), 0.0), ((0.0, -INF), INF), ((0.5, INF), 0.0),
            ((0.5, -INF), INF), ((2.0, INF), INF), ((2.0, -INF), 0.0), ((-INF, -3.0), -0.0),
            ((-INF, -2.0), 0.0), ((-INF, 3.0), -INF), ((-INF, 0.5), INF), ((INF, -0.5), 0.0),
            ((INF, 2.0), INF), ((10.0, 400.0), INF), ((10.0, -400.0), 0.0), ((4.0, 0.5), 2.0)],
}  # fmt: skip


@pytest.mark.parametrize("dtype", [F32, F64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_values_as_libm(name, dtype):
    cases = SPECIAL[name]
    arity = 2 if name in BINARY else 1
    columns = [np.array([c[0][i] if arity == 2 else c[0] for c in cases], dtype)
               for i in range(arity)]  # fmt: skip
    expected = np.array([c[1] for c in cases], dtype)
    with np.errstate(over="ignore"):
        actual = compiled(name, dtype.name, arity)(*columns)
    same = (actual == expected) & (np.signbit(actual) == np.signbit(expected))
    same |= np.isnan(actual) & np.isnan(expected)
    if name in ("atan", "atan2"):  # pi/2 and friends are rounded constants: NumPy's rounding
        reference = (np.arctan if name == "atan" else np.arctan2)(*columns)
        same = (actual == reference) & (np.signbit(actual) == np.signbit(reference))
        same |= np.isnan(actual) & np.isnan(reference)
    bad = [
        (tuple(col[i] for col in columns), actual[i], expected[i]) for i in np.flatnonzero(~same)
    ]
    assert not bad, f"{name}[{dtype}]: (inputs, got, expected) {bad}"


def test_subnormal_inputs_and_results():
    """Subnormal inputs of log, cbrt, rsqrt and subnormal results of exp are accurate."""
    for dtype in (F32, F64):
        tiny = np.finfo(dtype).smallest_subnormal
        x = (tiny * np.array([1, 3, 1000, 2**20])).astype(dtype)
        wide = x.astype(np.float64 if dtype == F32 else np.longdouble)
        for name, function in (("log", np.log), ("cbrt", np.cbrt), ("log2", np.log2)):
            got = compiled(name, dtype.name)(x)
            assert np.max(ulp_errors(got, function(wide), dtype)) <= 1, name
        low = np.log(np.finfo(dtype).smallest_normal) - np.array([0.5, 3.0, 10.0])
        got = compiled("exp", dtype.name)(low.astype(dtype))
        assert np.max(ulp_errors(got, np.exp(low.astype(dtype).astype(wide.dtype)), dtype)) <= 1


# -- the library as an API ---------------------------------------------------------------------


def test_definitions_are_emitted_once_and_inline():
    module = ir.Module()
    first = math_function(module, "exp", ir.FloatType())
    assert math_function(module, "exp", ir.FloatType()) is first
    assert math_function(module, "exp", ir.DoubleType()) is not first
    assert first.linkage == "linkonce_odr" and "alwaysinline" in first.attributes
    with pytest.raises(KeyError):
        math_function(module, "gamma", ir.FloatType())
    with pytest.raises(TypeError):
        math_function(module, "exp", ir.HalfType())


def test_intrinsics_table_names_llvm_intrinsics():
    """Each entry is an intrinsic LLVM knows: called on constants, O3 folds the call away (a
    name LLVM does not know would stay an external call)."""
    for name, intrinsic in INTRINSICS.items():
        module = ir.Module()
        ty = ir.FloatType()
        arity = {"copysign": 2, "fma": 3}.get(name, 1)
        callee = ir.Function(module, ir.FunctionType(ty, [ty] * arity), f"{intrinsic}.f32")
        function = ir.Function(module, ir.FunctionType(ty, []), "folded")
        builder = ir.IRBuilder(function.append_basic_block())
        builder.ret(builder.call(callee, [ty(v) for v in (2.5, -3.0, 0.25)[:arity]]))
        assert "call float" not in str(optimize(module)), name


# -- vectorization ---------------------------------------------------------------------------


def _machine(triple: str, cpu: str, features: str):
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=3)


@pytest.mark.parametrize("dtype", [F32, F64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(NAMES))
def test_loop_is_vectorized_for_avx2(name, dtype):
    """Every function, inlined into a loop, is widened to full AVX2 vectors (8 x f32, 4 x f64;
    f32 pow computes in f64, so its loop is 4 x f64 wide)."""
    lanes = "<4 x double>" if dtype == F64 or name == "pow" else "<8 x float>"
    machine = _machine("x86_64-unknown-linux-gnu", "haswell", "")
    arity = 2 if name in BINARY else 1
    optimized = str(optimize(map_module(name, dtype, arity, machine), machine))
    body = optimized[optimized.index("define void @map") :]
    assert lanes in body
    assert "call float @naiad" not in body and "call double @naiad" not in body


def test_host_loop_uses_the_widest_vectors():
    if "+avx2" not in host_target().features.split(","):
        pytest.skip("the host has no AVX2")
    optimized = str(compiled("exp", "float32").module)
    widths = [int(w) for w in re.findall(r"<(\d+) x float>", optimized)]
    assert max(widths) >= 8


def test_aarch64_neon_code_is_four_wide():
    machine = _machine("aarch64-unknown-linux-gnu", "generic", "+neon")
    assembly = machine.emit_assembly(optimize(map_module("exp", F32, 1, machine), machine))
    assert re.search(r"\bfmla\s+v\d+\.4s", assembly)
