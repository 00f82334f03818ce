"""The tolerance table: how close each back end's result must be to the reference, per operation.

The reference is the interpreter's answer when a compiled back end ("cpu", "gpu") is checked, and
NumPy's float64 answer rounded to the result dtype when the interpreter itself is checked. Three
kinds of bound:

- exact: bit-identical in the result dtype (-0.0 differs from 0.0; any NaN equals any NaN).
  add sub mul neg abs floordiv mod and or xor invert lshift rshift umulhi floor ceil cmp select
  where cast bitcast fp_convert load store minimum maximum clamp min max argmin argmax sort flip
  xor_sum div_rn sqrt_rn philox atomic_xchg atomic_cas atomic_max atomic_min reshape trans
  broadcast join split gather histogram. A single IEEE operation is correctly rounded on every
  back end, the integer semantics are the GPU's everywhere, and Philox is bit-exact with Triton.
  Float `mod` on the GPU is the exception to "the interpreter is the reference": Naiad emits
  LLVM's frem, as Triton does, and the NVPTX back end expands it to
  fma(-trunc(x / y), y, x) (x where y is infinite), not C's fmod; it is exact against that
  expansion (bit-identical to Triton), which can be far from fmod when x / y is large.
- ulp: at most k units in the last place of the result dtype apart (-0.0 equals 0.0).

      op            interpreter  cpu  gpu   why the GPU needs more
      exp               2         4    78   ex2.approx of x*log2(e) (fp64: libdevice, the cpu row)
      exp2 log log2     2         4     4   approximate PTX instructions / libdevice
      sin cos erf       2         4     4
      sigmoid           2         4    82   1 / (1 + exp(-x)): exp's bound, a division and an add
                                              (fp64: the cpu row, as exp)
      sqrt              1         1     2   tl.sqrt may be sqrt.approx (sqrt_rn is exact)
      rsqrt             2         2     4
      fdiv              1         1     2   div.full.f32 without ieee_rounding
      truediv_fp32    exact     exact   2   fp32 `/` is not correctly rounded on the GPU
      fma               1         1     1   the interpreter has no fused multiply-add in NumPy

- norm: ||actual - expected|| / ||expected|| <= c * eps(dtype) * sqrt(K), 2-norms over all finite
  elements (non-finite ones must match exactly), K the reduction length passed by the test.
  c = 16 for sum, cumsum, dot, atomic_add (the order of additions differs between back ends) and
  softmax; dot_tf32 has c = 16 * 2**13 on every back end, which is tf32's epsilon (2**-10) in
  place of fp32's (2**-23); dot_fp8 (fp8 operands, f32 result) has c = 16 * 2**10, the epsilon
  of the GPU's fp8 accumulator (about 2**-13).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .compare import is_float_dtype, to_numpy

BACKENDS = ("interpreter", "cpu", "gpu")


@dataclass(frozen=True)
class Tolerance:
    """One bound: kind "exact", "ulp" (within `ulp` units) or "norm" (constant `c`)."""

    kind: str
    ulp: int = 0
    c: float = 0.0

    def __post_init__(self):
        if self.kind not in ("exact", "ulp", "norm"):
            raise ValueError(f"unknown tolerance kind {self.kind!r}")


# fmt: off
_EXACT_OPS = (
    "add", "sub", "mul", "neg", "abs", "floordiv", "mod", "and", "or", "xor", "invert", "lshift",
    "rshift", "umulhi", "floor", "ceil", "cmp", "select", "where", "cast", "bitcast", "fp_convert",
    "load", "store", "minimum", "maximum", "clamp", "min", "max", "argmin", "argmax", "sort",
    "flip", "xor_sum", "div_rn", "sqrt_rn", "philox", "atomic_xchg", "atomic_cas", "atomic_max",
    "atomic_min", "reshape", "trans", "broadcast", "join", "split", "gather", "histogram",
)
# fmt: on

# exp on the GPU is ex2.approx.f32(x * log2(e)). A normal fp32 result needs |x * log2(e)| < 128,
# where rounding the product costs up to 2**-18 in the exponent, and log2(e) rounded to fp32 costs
# 128 times its own error; an exponent error d is a relative error d * ln(2) of the result, and
# ex2.approx adds its documented 2**-22. An fp32 ulp is at least 2**-24 of the value.
_LOG2E = math.log2(math.e)
_EXP_GPU_ULP = math.ceil(
    2**24 * (math.log(2) * (2**-18 + 128 * abs(float(np.float32(_LOG2E)) - _LOG2E)) + 2**-22)
)

# The GPU bounds that come from fp32's ex2.approx; an fp64 result is computed by libdevice's
# `__nv_exp`, as accurate as the CPU's, and is held to the cpu bound.
_FP32_APPROXIMATIONS = ("exp", "sigmoid")

# op: (interpreter, cpu, gpu) ulp bounds; None means exact on that back end.
_ULP_OPS = {
    "exp": (2, 4, _EXP_GPU_ULP),
    "exp2": (2, 4, 4),
    "log": (2, 4, 4),
    "log2": (2, 4, 4),
    "sin": (2, 4, 4),
    "cos": (2, 4, 4),
    "erf": (2, 4, 4),
    "sigmoid": (2, 4, _EXP_GPU_ULP + 4),
    "sqrt": (1, 1, 2),
    "rsqrt": (2, 2, 4),
    "fdiv": (1, 1, 2),
    "truediv_fp32": (None, None, 2),
    "fma": (1, 1, 1),
}

_NORM_C = 16.0
_TF32_OVER_FP32 = 2.0**13
# Hopper's tensor cores sum fp8 products in an accumulator of about 13 mantissa bits, not f32's
# 23 (the reason for `max_num_imprecise_acc`): an fp8 dot's f32 result is held to that eps.
# Measured on an H200: 45 to 92 f32 eps x sqrt(K) of the norm at K = 64 and 128.
_FP8_ACCUMULATOR_OVER_FP32 = 2.0**10
_NORM_OPS = {
    "sum": _NORM_C,
    "cumsum": _NORM_C,
    "dot": _NORM_C,
    "atomic_add": _NORM_C,
    "softmax": _NORM_C,
    "dot_tf32": _NORM_C * _TF32_OVER_FP32,
    "dot_fp8": _NORM_C * _FP8_ACCUMULATOR_OVER_FP32,
}


def _build_table() -> dict[str, dict[str, Tolerance]]:
    table = {op: dict.fromkeys(BACKENDS, Tolerance("exact")) for op in _EXACT_OPS}
    for op, bounds in _ULP_OPS.items():
        table[op] = {
            backend: Tolerance("exact") if k is None else Tolerance("ulp", ulp=k)
            for backend, k in zip(BACKENDS, bounds)
        }
    for op, c in _NORM_OPS.items():
        table[op] = dict.fromkeys(BACKENDS, Tolerance("norm", c=c))
    return table


TOLERANCES: dict[str, dict[str, Tolerance]] = _build_table()

# Triton's dtype names (str(tl.float32) == "fp32") that NumPy does not know.
_TRITON_NAMES = {
    "int1": np.dtype(bool),
    "fp16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "fp32": np.dtype(np.float32),
    "fp64": np.dtype(np.float64),
    "fp8e4nv": np.dtype(ml_dtypes.float8_e4m3fn),
    "fp8e5": np.dtype(ml_dtypes.float8_e5m2),
    "fp8e4b8": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "fp8e5b16": np.dtype(ml_dtypes.float8_e5m2fnuz),
}


def as_numpy_dtype(dtype) -> np.dtype:
    """Resolve a NumPy/ml_dtypes dtype, a Triton name ("bf16", tl.float32) or a torch dtype."""
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, type) and issubclass(dtype, np.generic):
        return np.dtype(dtype)
    name = str(dtype).removeprefix("torch.")
    return _TRITON_NAMES[name] if name in _TRITON_NAMES else np.dtype(name)


_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _ordered(x: np.ndarray) -> np.ndarray:
    """Map float bit patterns to int64 so that adjacent floats are adjacent integers.

    IEEE floats are sign-magnitude: negating the magnitude of negative patterns gives two's
    complement order, with -0.0 and +0.0 both at 0.
    """
    bits = x.view(_SIGNED[x.dtype.itemsize]).astype(np.int64)
    magnitude = bits & ((1 << (8 * x.dtype.itemsize - 1)) - 1)
    return np.where(bits < 0, -magnitude, bits)


def ulp_distance(a, b) -> np.ndarray:
    """Elementwise number of representable values between `a` and `b` (same float dtype).

    Works for fp64/fp32/fp16/bf16 (and fp8). NaN against NaN is 0; NaN against a number is the
    largest uint64, so any bound fails.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or not is_float_dtype(a.dtype):
        raise TypeError(
            f"ulp_distance needs two arrays of one float dtype, got {a.dtype}, {b.dtype}"
        )
    oa, ob = _ordered(a), _ordered(b)
    # The true gap is below 2**64, so unsigned wrap-around subtraction gives it exactly even for
    # fp64, where the signed difference can overflow.
    ua, ub = oa.view(np.uint64), ob.view(np.uint64)
    dist = np.where(oa >= ob, ua - ub, ub - ua)
    nan_a, nan_b = np.isnan(a.astype(np.float64)), np.isnan(b.astype(np.float64))
    dist = np.where(nan_a | nan_b, np.iinfo(np.uint64).max, dist)
    return np.where(nan_a & nan_b, np.uint64(0), dist).astype(np.uint64)


def check(op: str, actual, expected, backend: str, dtype, k: int | None = None) -> None:
    """Assert that `actual` meets the table's bound for `op` on `backend` against `expected`.

    Both sides are first cast to the result `dtype`. `k` is the reduction length, needed by the
    norm-wise bounds of reductions and dots.

    Raises:
        AssertionError: the bound is not met; the message names the worst element.
        KeyError: `op` or `backend` is not in the table.
        ValueError: a norm bound without `k`.
    """
    if op not in TOLERANCES:
        raise KeyError(f"no tolerance for op {op!r}; known: {', '.join(sorted(TOLERANCES))}")
    if backend not in BACKENDS:
        raise KeyError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    dtype = as_numpy_dtype(dtype)
    if backend == "gpu" and op in _FP32_APPROXIMATIONS and dtype == np.float64:
        backend = "cpu"
    tol = TOLERANCES[op][backend]
    a, e = to_numpy(actual).astype(dtype), to_numpy(expected).astype(dtype)
    where = f"check({op!r}, backend={backend!r}, dtype={dtype})"
    if a.shape != e.shape:
        raise AssertionError(f"{where}: shapes differ: actual {a.shape}, expected {e.shape}")
    if tol.kind == "exact":
        _check_exact(a, e, where)
    elif tol.kind == "ulp":
        _check_ulp(a, e, tol.ulp, where)
    else:
        if k is None:
            raise ValueError(f"{where}: a norm-wise bound needs the reduction length k")
        _check_norm(a, e, tol.c, k, where)


def _fail(what: str, a, e, bad, where: str):
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    raise AssertionError(
        f"{where}: {int(bad.sum())} of {bad.size} elements {what}; first at index {first}: "
        f"actual {a[first]}, expected {e[first]}"
    )


def _check_exact(a, e, where):
    if is_float_dtype(a.dtype):
        unsigned = _UNSIGNED[a.dtype.itemsize]
        nan_a, nan_e = np.isnan(a.astype(np.float64)), np.isnan(e.astype(np.float64))
        bad = (a.view(unsigned) != e.view(unsigned)) & ~(nan_a & nan_e)
    else:
        bad = a != e
    if bad.any():
        _fail("are not bit-identical", a, e, bad, where)


def _check_ulp(a, e, bound, where):
    if not is_float_dtype(a.dtype):
        raise TypeError(f"{where}: an ulp bound needs a float dtype")
    dist = ulp_distance(a, e)
    bad = dist > bound
    if bad.any():
        worst = int(dist.max())
        _fail(f"are more than {bound} ulp apart (worst {worst})", a, e, bad, where)


def _check_norm(a, e, c, k, where):
    eps = float(ml_dtypes.finfo(a.dtype).eps)
    a, e = a.astype(np.float64), e.astype(np.float64)
    finite = np.isfinite(a) & np.isfinite(e)
    same_special = (a == e) | (np.isnan(a) & np.isnan(e))
    bad = ~finite & ~same_special
    if bad.any():
        _fail("are non-finite in only one of the two", a, e, bad, where)
    error = float(np.linalg.norm(a[finite] - e[finite]))
    bound = c * eps * float(np.sqrt(k)) * float(np.linalg.norm(e[finite]))
    if not error <= bound:
        raise AssertionError(
            f"{where}: ||actual - expected|| = {error:g} exceeds "
            f"{c:g} * eps * sqrt({k}) * ||expected|| = {bound:g}"
        )
