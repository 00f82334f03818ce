"""Math functions against Triton's interpreter: the one-operand functions (fp32 / fp64 only), fma
(one rounding on the GPU), div_rn, fdiv, umulhi, cdiv; minimum, maximum and clamp with their NaN
rules and signed zeros; where."""

import math
from fractions import Fraction

import numpy as np
import pytest

from .gpu_model import (
    exact,
    gpu_convert,
    gpu_float_binary,
    gpu_int_divide,
    literal_type,
    scalar_constant,
    wrap,
)
from .harness import (
    DTYPES,
    FP8,
    NUMPY,
    PYTESTMARK,
    WIDTH,
    Mismatches,
    N,
    both,
    compare,
    cross,
    is_float,
    is_int,
    launch,
    tensor_of,
    values_of,
)
from .kernel_sources import MATH_1

pytestmark = PYTESTMARK


@pytest.mark.parametrize("fn", MATH_1)
def test_math_unary(kernels, fn):
    """fp32/fp64 only (others refused, as `_check_dtype`), abs for every type; NumPy in both."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES + FP8:
        x = values_of(a)
        t, n = both(kernels, f"math_{fn}", tensor_of(x, a), N=N)
        reason = gpu = None
        if fn == "abs" and a in FP8:  # EXPECTED["fp8"]: the interpreter clears the sign bit too
            reason, gpu = "fp8", lambda slot, dtype: np.abs(x)
        compare(f"{fn}({a})", t, n, mism, gpu, reason)
    mism.check()


def round_exact(value: Fraction, dtype: str) -> float:
    """The float `dtype` nearest to the exact `value` (ties to even), as a Python float."""
    np_type = NUMPY[dtype].type
    guess = np_type(float(value))  # float(Fraction) is correctly rounded; then at most one off
    if not np.isfinite(guess):
        return float(guess)
    near = [np.nextafter(guess, np_type(-np.inf)), guess, np.nextafter(guess, np_type(np.inf))]
    near = [c for c in near if np.isfinite(c)]
    best = min(
        near,
        key=lambda c: (
            abs(Fraction(float(c)) - value),
            int(np.array(c).view(f"uint{WIDTH[dtype]}")) & 1,
        ),
    )
    return float(best)


def gpu_fma(x, y, z, dtype):
    """fma.rn: x * y + z rounded once from the exact value (NaN / inf as the IEEE operation)."""
    out = []
    for a, b, c in zip(*(np.asarray(v).astype(np.float64) for v in (x, y, z))):
        if all(map(math.isfinite, (a, b, c))):
            e = Fraction(a) * Fraction(b) + Fraction(c)
            if e == 0:  # the sign of an exact zero sum: IEEE's, from the rounded operations
                out.append(float(np.float64(a) * np.float64(b) + np.float64(c)))
            else:
                out.append(round_exact(e, dtype))
        else:
            out.append(float(a * b + c))
    return np.array(out).astype(NUMPY[dtype])


def gpu_mulhi(x, y, dtype):
    """Triton's umulhi is tt.mulhiui for every type: the high half of the product of the bit
    patterns read as unsigned (mul.hi.u32 / u64), stored in `dtype`."""
    width = WIDTH[dtype]
    mask = (1 << width) - 1
    out = [((a & mask) * (b & mask)) >> width for a, b in zip(exact(x, dtype), exact(y, dtype))]
    return np.array([wrap(v, dtype) for v in out], dtype=object).astype(NUMPY[dtype])


def test_math_binary(kernels):
    """fma (single rounding on the GPU), div_rn, fdiv, umulhi, cdiv over the dtype matrix."""
    mism = Mismatches()
    for a in DTYPES:
        for b in DTYPES:
            x, y = cross(a, b)
            for fn in ("div_rn", "fdiv", "umulhi"):
                t, n = both(kernels, f"math_{fn}", tensor_of(x, a), tensor_of(y, b), N=256)
                reason = gpu = results = None
                if fn == "fdiv" and a != b and is_float(a) and is_float(b):
                    # EXPECTED["verifier"]: fdiv does not promote; arith.divf needs one type.
                    if n.error is None:
                        mism.add(f"fdiv({a}, {b})", "Naiad computed it; compiled Triton refuses")
                    continue
                if fn == "fdiv" and a == b == "bf16":
                    reason = "bf16"
                    gpu = lambda slot, dtype, x=x, y=y: gpu_float_binary(
                        "truediv", x, "bf16", y, "bf16", "bf16"
                    )
                if fn == "umulhi" and t.error is None and t.results[0][0] == "int32":
                    # EXPECTED["umulhi"]: the interpreter sign-extends int32 before multiplying
                    reason = "umulhi"
                    gpu = lambda slot, dtype, x=x, y=y: gpu_mulhi(
                        x.astype(np.int32), y.astype(np.int32), "int32"
                    )
                if (
                    fn == "umulhi"
                    and "int64" in (a, b)
                    and is_int(a)
                    and is_int(b)
                    and WIDTH[a] >= 32
                    and WIDTH[b] >= 32
                ):
                    # EXPECTED["umulhi"]: the interpreter's 64-bit umulhi crashes on negatives
                    res = "uint64" if "uint64" in (a, b) else "int64"
                    reason, results = "umulhi", [(res, (256,))]
                    gpu = lambda slot, dtype, res=res, x=x, y=y, a=a, b=b: gpu_mulhi(
                        x.astype(NUMPY[res]), y.astype(NUMPY[res]), res
                    )
                compare(f"{fn}({a}, {b})", t, n, mism, gpu, reason, results)
        x, y = cross(a, a)
        z = np.roll(y, 7)
        t, n = both(kernels, "math_fma", tensor_of(x, a), tensor_of(y, a), tensor_of(z, a), N=256)
        reason = gpu = None
        if is_int(a):  # EXPECTED["verifier"]: math.fma on integers fails IR verification
            if n.error is None:
                mism.add(
                    f"fma({a})", "Naiad computed it; compiled Triton refuses math.fma on integers"
                )
            continue
        if a in ("fp16", "fp32", "fp64"):
            reason, gpu = "fma", lambda slot, dtype: gpu_fma(x, y, z, a)
        elif a == "bf16":  # fma.rn.bf16: one rounding of the exact value
            reason = "bf16"
            gpu = lambda slot, dtype: gpu_fma(x, y, z, "bf16")
        compare(f"fma({a})", t, n, mism, gpu, reason)
        for d in (3, -3, 1, 0):
            x = values_of(a, 16)
            t, n = both(kernels, "math_cdiv", tensor_of(x, a), N=16, D=d)
            reason, gpu = None, None
            if t.error is None and is_int(t.results[0][0]):  # (x + (d - 1)) // d: by zero too
                res = t.results[0][0]
                xs = x.astype(NUMPY[res]) + NUMPY[res].type(d - 1)
                reason = "idiv0"
                gpu = lambda slot, dtype, xs=xs, res=res, d=d: gpu_int_divide(
                    "floordiv", xs, np.full(16, d).astype(NUMPY[res]), res
                )
            compare(f"cdiv({a}, {d})", t, n, mism, gpu, reason)
    mism.check()


# -------------------------------------------------------------------------------------------------
# minimum, maximum, clamp (NaN), where
# -------------------------------------------------------------------------------------------------
def gpu_extremum(which, x, y, propagate, comp):
    """min/max in float type `comp` (bf16 promotes to fp32): NaN per `propagate`, -0 < +0."""
    xs, ys = x.astype(np.float64), y.astype(np.float64)
    pick = np.where(xs < ys, xs, ys) if which == "min" else np.where(xs > ys, xs, ys)
    tie = xs == ys
    zero_pick = (
        (np.signbit(xs) | np.signbit(ys)) if which == "min" else (np.signbit(xs) & np.signbit(ys))
    )
    pick = np.where(tie, np.where(zero_pick, -np.abs(xs), np.abs(xs)), pick)
    nan = np.isnan(xs) | np.isnan(ys)
    other = np.where(np.isnan(xs), ys, xs)
    pick = np.where(nan, np.nan if propagate else other, pick)
    return pick.astype(NUMPY[comp])


@pytest.mark.parametrize("fn", ["minimum", "maximum"])
def test_minimum_maximum(kernels, fn):
    """Tensors: promotion as binary operators, bf16 computed in fp32 (result fp32), NaN rules."""
    mism = Mismatches()
    nan_modes = {"NONE": 0, "ALL": 1}
    for a in DTYPES:
        for b in DTYPES:
            x, y = cross(a, b)
            for mode in nan_modes:
                outcomes = []
                for module in kernels:
                    outcomes.append(
                        launch(
                            module,
                            f"ext_{fn}",
                            (tensor_of(x, a), tensor_of(y, b)),
                            dict(N=256, NAN=getattr(module.tl.PropagateNan, mode)),
                        )
                    )
                t, n = outcomes
                reason = gpu = None
                if t.error is None and is_float(t.results[0][0]):
                    comp = t.results[0][0]
                    reason = "bf16" if "bf16" in (a, b) else "signed_zero"
                    gpu = lambda slot, dtype, comp=comp, mode=mode, x=x, y=y, a=a, b=b: (
                        gpu_extremum(
                            fn[:3],
                            gpu_convert(x, a, comp),
                            gpu_convert(y, b, comp),
                            mode == "ALL",
                            comp,
                        )
                    )
                compare(f"{fn}({a}, {b}, {mode})", t, n, mism, gpu, reason)
    mism.check()


@pytest.mark.parametrize("fn", ["minimum", "maximum"])
def test_minimum_maximum_python_scalar(kernels, fn):
    """`tl.minimum(x, 0.5)`: Triton makes the scalar a tensor first, so it takes part in
    promotion (fp16 with 0.5 is fp32, int8 with 1000 is int32)."""
    mism = Mismatches()
    for a in DTYPES:
        x = values_of(a, 16)
        for s in (0, -1, 1000, 2**40, 0.5, -0.0, math.nan, True):
            t, n = both(kernels, f"ext_{fn}_s", tensor_of(x, a), N=16, S=s)
            reason = gpu = None
            if t.error is None and is_float(t.results[0][0]):
                comp = t.results[0][0]
                s_type = literal_type(s)
                s_vals = np.broadcast_to(
                    gpu_convert(scalar_constant(s, s_type), s_type, comp), (16,)
                )
                reason = "bf16" if a == "bf16" else "signed_zero"
                gpu = lambda slot, dtype, comp=comp, s_vals=s_vals: gpu_extremum(
                    fn[:3], gpu_convert(x, a, comp), s_vals, False, comp
                )
            compare(f"{fn}({a}, {s!r})", t, n, mism, gpu, reason)
    mism.check()


def test_clamp(kernels):
    mism = Mismatches()
    for a in DTYPES:
        x = values_of(a)
        lo = np.roll(values_of(a), 3)
        hi = np.roll(values_of(a), 11)
        for mode in ("NONE", "ALL"):
            outcomes = []
            for module in kernels:
                outcomes.append(
                    launch(
                        module,
                        "ext_clamp",
                        tuple(tensor_of(v, a) for v in (x, lo, hi)),
                        dict(N=N, NAN=getattr(module.tl.PropagateNan, mode)),
                    )
                )
            t, n = outcomes
            reason = gpu = None
            if a == "bf16" and t.error is None:
                reason = "bf16"
                gpu = lambda slot, dtype, mode=mode: _gpu_clamp(x, lo, hi, mode)
            compare(f"clamp({a}, {mode})", t, n, mism, gpu, reason)
        for lo_s, hi_s in ((-1, 1), (0.25, 100), (-0.0, 0.0), (0, 2**40)):
            t, n = both(
                kernels, "ext_clamp_s", tensor_of(values_of(a, 16), a), N=16, LO=lo_s, HI=hi_s
            )
            reason = gpu = None
            if a == "bf16" and t.error is None:
                reason = "bf16"
                xs = values_of(a, 16)
                gpu = lambda slot, dtype, lo_s=lo_s, hi_s=hi_s: _gpu_clamp(
                    xs,
                    np.full(16, float(scalar_constant(lo_s, literal_type(lo_s))[0])),
                    np.full(16, float(scalar_constant(hi_s, literal_type(hi_s))[0])),
                    "NONE",
                )
            compare(f"clamp({a}, {lo_s!r}, {hi_s!r})", t, n, mism, gpu, reason)
    mism.check()


def _gpu_clamp(x, lo, hi, mode):
    """clamp in fp32 (bf16 operands are promoted): max then min, NaN per mode (of x only)."""
    xs, los, his = (np.asarray(v).astype(np.float32) for v in (x, lo, hi))
    if mode == "ALL":
        return np.minimum(np.maximum(xs, los), his)
    return np.fmin(np.fmax(xs, los), his)


def test_where(kernels):
    """tl.where: the condition (int1, or cast to int1 from another type), x and y promoted as a
    binary operator with Python-scalar rules (x, y are not made tensors first)."""
    mism = Mismatches()
    for c in ("int1", "int32", "fp32"):
        cond = np.resize(values_of(c), 256)
        for a in DTYPES:
            for b in DTYPES:
                x, y = cross(a, b)
                t, n = both(
                    kernels,
                    "sel_where",
                    tensor_of(cond, c),
                    tensor_of(x, a),
                    tensor_of(y, b),
                    N=256,
                )
                reason = gpu = None
                if t.error is None and "bf16" in (a, b) and t.results[0][0] != "bf16":
                    comp = t.results[0][0]
                    truth = gpu_convert(cond, c, "int1")
                    reason = "bf16"
                    gpu = lambda slot, dtype, comp=comp, truth=truth, x=x, y=y, a=a, b=b: np.where(
                        truth, gpu_convert(x, a, comp), gpu_convert(y, b, comp)
                    )
                compare(f"where({c}, {a}, {b})", t, n, mism, gpu, reason)
            if c != "int1":
                continue
            for s in (0, -1, 300, 2**40, 0.5, -0.0, True):
                t, n = both(
                    kernels,
                    "sel_where_s",
                    tensor_of(cond[:16], c),
                    tensor_of(values_of(a, 16), a),
                    N=16,
                    S=s,
                )
                reason = gpu = None
                if t.error is not None and "get_bf16" in str(t.error):
                    xs = values_of(a, 16)
                    reason, results = "get_bf16", [("bf16", (16,))]
                    gpu = lambda slot, dtype, s=s, xs=xs: np.where(
                        cond[:16], xs, scalar_constant(s, "bf16")
                    )
                    compare(f"where(c, {a}, {s!r})", t, n, mism, gpu, reason, results)
                    continue
                compare(f"where(c, {a}, {s!r})", t, n, mism)
        if c == "int1":
            for s1, s2 in ((1, 2.5), (1, -1), (2**40, 1), (True, 3), (-0.0, 0.0)):
                compare(
                    f"where(c, {s1!r}, {s2!r})",
                    *both(kernels, "sel_where_ss", tensor_of(cond[:16], c), N=16, A=s1, B=s2),
                    mism,
                )
    mism.check()
