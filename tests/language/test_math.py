"""Elementwise math: tl.math's functions, fma, umulhi, div_rn / sqrt_rn, fdiv, minimum / maximum,
clamp, where, and the standard library's sigmoid, softmax and cdiv.

Floats are checked against float64 references rounded to the result dtype, within the tolerance
table's bound for the interpreter (exact for floor, ceil, abs, min/max, clamp, where, div_rn,
sqrt_rn, umulhi; a few ulp for the transcendental functions; norm-wise for softmax).
"""

import fractions
import math

import numpy as np
import pytest
from dtype_tables import INTEGRAL_DTYPES, bitwidth, int_range, is_float, np_dtype, tl_dtype
from exact_arithmetic import c_div, convert, pyints, round_float, wrap
from helpers import assert_exact, kernel_error, table_backend
from inputs import numpy_random, poisoned, specials
from promotion import literal_dtype, promoted

import naiad
import naiad.language as tl
from naiad.testing import check

N = 64


# -------------------------------------------------------------------------------------------------
# exp exp2 log log2 sin cos sqrt rsqrt erf floor ceil
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _unary_math_kernel(x_ptr, z_ptr, N: tl.constexpr, FN: tl.constexpr, METHOD: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    # METHOD: the tensor-member spelling, `x.exp()`
    if FN == "exp":
        z = x.exp() if METHOD else tl.exp(x)
    elif FN == "exp2":
        z = x.exp2() if METHOD else tl.exp2(x)
    elif FN == "log":
        z = x.log() if METHOD else tl.log(x)
    elif FN == "log2":
        z = x.log2() if METHOD else tl.log2(x)
    elif FN == "sin":
        z = x.sin() if METHOD else tl.sin(x)
    elif FN == "cos":
        z = x.cos() if METHOD else tl.cos(x)
    elif FN == "sqrt":
        z = x.sqrt() if METHOD else tl.sqrt(x)
    elif FN == "rsqrt":
        z = x.rsqrt() if METHOD else tl.rsqrt(x)
    elif FN == "erf":
        z = x.erf() if METHOD else tl.erf(x)
    elif FN == "floor":
        z = x.floor() if METHOD else tl.floor(x)
    elif FN == "ceil":
        z = x.ceil() if METHOD else tl.math.ceil(x)
    elif FN == "abs":
        z = x.abs() if METHOD else tl.abs(x)
    elif FN == "sqrt_rn":
        z = x.sqrt_rn() if METHOD else tl.sqrt_rn(x)
    else:
        tl.static_assert(False, "unknown function")
    tl.static_assert(z.dtype == x.dtype, "math keeps the dtype")
    tl.store(z_ptr + offs, z)


# function: (float64 reference, input range)
UNARY = {
    "exp": (math.exp, (-80.0, 80.0)),
    "exp2": (lambda v: 2.0**v, (-120.0, 120.0)),
    "log": (math.log, (1e-6, 1e6)),
    "log2": (math.log2, (1e-6, 1e6)),
    "sin": (math.sin, (-100.0, 100.0)),
    "cos": (math.cos, (-100.0, 100.0)),
    "sqrt": (math.sqrt, (1e-6, 1e6)),
    "rsqrt": (lambda v: 1.0 / math.sqrt(v), (1e-6, 1e6)),
    "erf": (math.erf, (-4.0, 4.0)),
    "floor": (lambda v: math.copysign(math.floor(v), v), (-100.0, 100.0)),
    "ceil": (lambda v: math.copysign(math.ceil(v), v), (-100.0, 100.0)),  # ceil(-0.3) is -0.0
}


def _unary_inputs(fn, dtype, gen):
    lo, hi = UNARY[fn][1]
    if lo > 0:  # log-uniform over a positive range
        x = np.exp(gen.uniform(np.log(lo), np.log(hi), N))
    else:
        x = gen.uniform(lo, hi, N)
    x = np.where(x == 0, 0.5, x)
    return x.astype(np_dtype(dtype))


@pytest.mark.parametrize("method", (False, True))
@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("fn", UNARY)
def test_unary_math(fn, dtype, method, gen):
    x = _unary_inputs(fn, dtype, gen)
    z = poisoned(N, dtype)
    _unary_math_kernel[(1,)](x, z, N=N, FN=fn, METHOD=method)
    reference = np.array([UNARY[fn][0](float(v)) for v in x], np.float64)
    expected = reference if dtype == "float64" else round_float(reference, dtype)
    check(fn, z, expected, table_backend(), np_dtype(dtype))


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_unary_math_special_values(dtype):
    x = np.array([np.inf, -np.inf, np.nan, -1.0, 1.0, 2.0, 0.5, 4.0], np_dtype(dtype))
    for fn, expected in [
        (
            "exp",
            [np.inf, 0.0, np.nan, math.exp(-1), math.e, math.exp(2), math.exp(0.5), math.exp(4)],
        ),
        ("log", [np.inf, np.nan, np.nan, np.nan, 0.0, math.log(2), math.log(0.5), math.log(4)]),
        ("sqrt", [np.inf, np.nan, np.nan, np.nan, 1.0, math.sqrt(2), math.sqrt(0.5), 2.0]),
        ("floor", [np.inf, -np.inf, np.nan, -1.0, 1.0, 2.0, 0.0, 4.0]),
        ("ceil", [np.inf, -np.inf, np.nan, -1.0, 1.0, 2.0, 1.0, 4.0]),
    ]:
        z = poisoned(8, dtype)
        _unary_math_kernel[(1,)](x, z, N=8, FN=fn, METHOD=False)
        check(
            fn,
            z,
            np.array(expected, np.float64).astype(np_dtype(dtype)),
            table_backend(),
            np_dtype(dtype),
        )


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "int32", "uint8"))
@pytest.mark.parametrize("fn", UNARY)
def test_unary_math_needs_fp32_or_fp64(fn, dtype):
    x = np.ones(4, np_dtype(dtype))
    name = {"float16": "fp16", "bfloat16": "bf16"}.get(dtype, dtype)
    with kernel_error(rf"Expected dtype \['fp32', 'fp64'\] but got {name}"):
        _unary_math_kernel[(1,)](x, poisoned(4, dtype), N=4, FN=fn, METHOD=False)


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float64"))
def test_sqrt_rn_needs_fp32(dtype):
    name = {"float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}[dtype]
    with kernel_error(rf"Expected dtype \['fp32'\] but got {name}"):
        _unary_math_kernel[(1,)](
            np.ones(4, np_dtype(dtype)), poisoned(4, dtype), N=4, FN="sqrt_rn", METHOD=False
        )


# -------------------------------------------------------------------------------------------------
# abs
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", (*INTEGRAL_DTYPES, "float16", "bfloat16", "float32", "float64"))
def test_abs(dtype, gen):
    x = np.resize(np.concatenate([numpy_random(48, dtype, gen), specials(dtype)]), N)
    z = poisoned(N, dtype)
    _unary_math_kernel[(1,)](x, z, N=N, FN="abs", METHOD=False)
    if is_float(dtype):
        expected = np.abs(x)  # the sign bit cleared, NaN included
    else:  # |INT_MIN| wraps to INT_MIN; unsigned values are returned unchanged
        expected = wrap([abs(v) for v in pyints(x)], dtype)
    assert_exact(z, expected, "abs")


# -------------------------------------------------------------------------------------------------
# sqrt_rn, div_rn, fdiv, fma
# -------------------------------------------------------------------------------------------------
def _fp32_operands(gen, n=N):
    x = (gen.standard_normal(n) * np.exp2(gen.integers(-60, 60, n))).astype(np.float32)
    x[:8] = [np.inf, -np.inf, np.nan, 1e-45, -3e-39, 3.4e38, 1.0, -2.0]
    return np.where(x == 0, np.float32(1.5), x)


def test_sqrt_rn_is_correctly_rounded(gen):
    x = np.abs(_fp32_operands(gen))
    x[:4] = [np.inf, -4.0, np.nan, 2.0]
    z = poisoned(N, "float32")
    _unary_math_kernel[(1,)](x, z, N=N, FN="sqrt_rn", METHOD=False)
    # sqrt of the exact fp64 value, rounded twice: innocuous (53 >= 2 * 24 + 2)
    with np.errstate(invalid="ignore"):
        expected = round_float(np.sqrt(x.astype(np.float64)), "float32")
    assert_exact(z, expected, "sqrt_rn")


@naiad.jit
def _div_kernel(x_ptr, y_ptr, z_ptr, N: tl.constexpr, FN: tl.constexpr, IEEE: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if FN == "div_rn":
        z = tl.div_rn(x, y)
    elif FN == "fdiv":
        z = tl.fdiv(x, y, ieee_rounding=IEEE)
    else:
        z = tl.math.div_rn(x, 3.0)  # a Python scalar divisor
    tl.store(z_ptr + offs, z)


def test_div_rn_is_correctly_rounded(gen):
    x, y = _fp32_operands(gen), _fp32_operands(gen)[::-1].copy()
    z = poisoned(N, "float32")
    _div_kernel[(1,)](x, y, z, N=N, FN="div_rn", IEEE=False)
    with np.errstate(all="ignore"):
        expected = round_float(x.astype(np.float64) / y.astype(np.float64), "float32")
    assert_exact(z, expected, "div_rn")
    _div_kernel[(1,)](x, y, z, N=N, FN="div_rn_scalar", IEEE=False)
    with np.errstate(all="ignore"):
        assert_exact(z, round_float(x.astype(np.float64) / 3.0, "float32"), "div_rn")


@pytest.mark.parametrize("dtype", ("float64", "float16"))
def test_div_rn_needs_fp32(dtype):
    name = {"float16": "fp16", "float64": "fp64"}[dtype]
    x = np.ones(4, np_dtype(dtype))
    with kernel_error(rf"Expected dtype \['fp32'\] but got {name}"):
        _div_kernel[(1,)](x, x, poisoned(4, dtype), N=4, FN="div_rn", IEEE=False)


@pytest.mark.parametrize("ieee", (False, True))
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_fdiv(dtype, ieee, gen):
    x = numpy_random(N, dtype, gen)
    y = numpy_random(N, dtype, gen)
    z = poisoned(N, dtype)
    _div_kernel[(1,)](x, y, z, N=N, FN="fdiv", IEEE=ieee)
    exact = x.astype(np.float64) / y.astype(np.float64)
    check(
        "fdiv",
        z,
        exact if dtype == "float64" else round_float(exact, dtype),
        table_backend(),
        np_dtype(dtype),
    )


def test_fdiv_needs_floats():
    x = np.ones(4, np.int32)
    with kernel_error("both operands of fdiv must have floating scalar type", TypeError):
        _div_kernel[(1,)](x, x, poisoned(4, "float32"), N=4, FN="fdiv", IEEE=False)


@naiad.jit
def _fma_kernel(x_ptr, y_ptr, w_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    z = tl.fma(tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(w_ptr + offs))
    tl.store(z_ptr + offs, z)


@pytest.mark.parametrize("dtype", ("float32", "float64", "float16", "bfloat16"))
def test_fma_rounds_once(dtype, gen):
    x, y, w = (numpy_random(N, dtype, gen) for _ in range(3))
    # Cancellation makes a second rounding visible: w close to -x*y.
    w[: N // 2] = (-(x[: N // 2].astype(np.float64) * y[: N // 2])).astype(np_dtype(dtype))
    z = poisoned(N, dtype)
    _fma_kernel[(1,)](x, y, w, z, N=N)
    fraction = fractions.Fraction
    exact = [
        fraction(float(a)) * fraction(float(b)) + fraction(float(c)) for a, b, c in zip(x, y, w)
    ]
    check("fma", z, round_float(exact, dtype), table_backend(), np_dtype(dtype))


# -------------------------------------------------------------------------------------------------
# umulhi
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _umulhi_kernel(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    z = tl.umulhi(x, tl.load(y_ptr + offs))
    tl.static_assert(z.dtype == x.dtype)
    tl.store(z_ptr + offs, z)


@pytest.mark.parametrize("dtype", ("int32", "uint32", "int64", "uint64"))
def test_umulhi_is_the_high_half_of_the_unsigned_product(dtype, gen):
    """Triton's umulhi is `tt.mulhiui` for every dtype (`__nv_umulhi` / `__nv_umul64hi`): the
    high N bits of the 2N-bit product of the operands' bit patterns read as unsigned."""
    bits = bitwidth(dtype)
    x = np.resize(np.concatenate([numpy_random(56, dtype, gen), specials(dtype)]), N)
    y = numpy_random(N, dtype, gen)
    z = poisoned(N, dtype)
    _umulhi_kernel[(1,)](x, y, z, N=N)
    mask = (1 << bits) - 1
    expected = [((a & mask) * (b & mask)) >> bits for a, b in zip(pyints(x), pyints(y))]
    assert_exact(z, wrap(expected, dtype), "umulhi")


@pytest.mark.parametrize("dtype", ("int8", "uint16", "float32"))
def test_umulhi_dtypes(dtype):
    x = np.ones(4, np_dtype(dtype))
    with kernel_error(r"Expected dtype \['int32', 'int64', 'uint32', 'uint64'\]"):
        _umulhi_kernel[(1,)](x, x, poisoned(4, dtype), N=4)


# -------------------------------------------------------------------------------------------------
# minimum, maximum, clamp
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _extremum_kernel(
    x_ptr, y_ptr, z_ptr, N: tl.constexpr, FN: tl.constexpr, NAN: tl.constexpr, RESULT: tl.constexpr
):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if FN == "minimum":
        z = tl.minimum(x, y, propagate_nan=NAN)
    else:
        z = tl.maximum(x, y, propagate_nan=NAN)
    tl.static_assert(z.dtype == RESULT)
    tl.store(z_ptr + offs, z)


def _bf16_to_fp32(dtype: str) -> str:
    # tl.minimum / maximum / clamp widen bf16 operands to fp32 first (`_promote_bfloat16_to_float32`
    # in Triton's core.py: no bf16 min/max/compare in hardware)
    return "float32" if dtype == "bfloat16" else dtype


def extremum_dtype(dx: str, dy: str) -> str:
    return promoted(_bf16_to_fp32(dx), _bf16_to_fp32(dy))


def extremum_reference(fn, x, dx, y, dy, propagate_all: bool):
    ty = extremum_dtype(dx, dy)
    xs, ys = convert(x, dx, ty), convert(y, dy, ty)
    pick = min if fn == "minimum" else max
    if not is_float(ty):
        return wrap([pick(a, b) for a, b in zip(pyints(xs), pyints(ys))], ty)
    out = []
    for a, b in zip(xs.astype(np.float64), ys.astype(np.float64)):
        if math.isnan(a) or math.isnan(b):
            out.append(
                math.nan
                if propagate_all or (math.isnan(a) and math.isnan(b))
                else (b if math.isnan(a) else a)
            )
        else:
            out.append(pick(a, b))
    return np.array(out, np.float64).astype(np_dtype(ty))


EXTREMUM_PAIRS = [
    ("float32", "float32"),
    ("float16", "float16"),
    ("bfloat16", "bfloat16"),
    ("float64", "float64"),
    ("float16", "float32"),
    ("int8", "int8"),
    ("uint32", "uint32"),
    ("int64", "int64"),
    ("int8", "uint8"),
    ("int32", "int64"),
]


@pytest.mark.parametrize("nan", (tl.PropagateNan.NONE, tl.PropagateNan.ALL))
@pytest.mark.parametrize("fn", ("minimum", "maximum"))
@pytest.mark.parametrize("dx, dy", EXTREMUM_PAIRS)
def test_minimum_maximum(fn, dx, dy, nan, gen):
    x, y = numpy_random(N, dx, gen), numpy_random(N, dy, gen)
    if is_float(dx) and is_float(dy):  # NaN in x only, in y only, in both
        x[:4] = [np.nan, 1.0, np.nan, np.inf]
        y[:4] = [2.0, np.nan, np.nan, -np.inf]
    ty = extremum_dtype(dx, dy)
    z = poisoned(N, ty)
    _extremum_kernel[(1,)](x, y, z, N=N, FN=fn, NAN=nan, RESULT=tl_dtype(ty))
    assert_exact(z, extremum_reference(fn, x, dx, y, dy, nan == tl.PropagateNan.ALL), fn)


@naiad.jit
def _extremum_scalar_kernel(x_ptr, z_ptr, N: tl.constexpr, S: tl.constexpr, RESULT: tl.constexpr):
    offs = tl.arange(0, N)
    z = tl.maximum(tl.load(x_ptr + offs), S)
    tl.static_assert(z.dtype == RESULT)
    tl.store(z_ptr + offs, z)


@pytest.mark.parametrize(
    "dtype, scalar, result",
    [
        # minimum / maximum make a Python scalar a tensor of its literal type (`to_tensor`): it
        # takes part in the promotion, unlike in arithmetic
        ("float16", 0.5, "float32"),
        ("bfloat16", 1, "float32"),
        ("float32", 0.5, "float32"),
        ("float64", 0.5, "float64"),
        ("int8", 3, "int32"),
        ("uint8", 3, "int32"),
        ("int64", 3, "int64"),
        ("uint32", 3, "uint32"),
    ],
)
def test_maximum_with_python_scalar(dtype, scalar, result, gen):
    x = numpy_random(
        N,
        dtype,
        gen,
        low=-10 if not is_float(dtype) else None,
        high=10 if not is_float(dtype) else None,
    )
    z = poisoned(N, result)
    _extremum_scalar_kernel[(1,)](x, z, N=N, S=scalar, RESULT=tl_dtype(result))
    sd = literal_dtype(scalar)
    s = np.full(N, scalar, np_dtype(sd))
    assert_exact(z, extremum_reference("maximum", x, dtype, s, sd, False), "maximum")


@naiad.jit
def _clamp_kernel(
    x_ptr,
    lo_ptr,
    hi_ptr,
    z_ptr,
    N: tl.constexpr,
    NAN: tl.constexpr,
    SCALARS: tl.constexpr,
    RESULT: tl.constexpr,
):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if SCALARS:
        z = tl.clamp(x, -0.5, 0.5, propagate_nan=NAN)
    else:
        z = tl.clamp(x, tl.load(lo_ptr + offs), tl.load(hi_ptr + offs), propagate_nan=NAN)
    tl.static_assert(z.dtype == RESULT)
    tl.store(z_ptr + offs, z)


def clamp_reference(x, lo, hi, propagate_all, dtype):
    """min(max(x, lo), hi) in `dtype`; a NaN x gives NaN with PropagateNan.ALL, else lo
    (maxnum(NaN, lo) is lo). NaN bounds are undefined in Triton and not tested."""
    out = []
    for v, a, b in zip(*(np.asarray(t).astype(np.float64) for t in (x, lo, hi))):
        if math.isnan(v):
            out.append(math.nan if propagate_all else min(a, b))
        else:
            out.append(min(max(v, a), b))
    return np.array(out, np.float64).astype(np_dtype(dtype))


@pytest.mark.parametrize("nan", (tl.PropagateNan.NONE, tl.PropagateNan.ALL))
@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32", "float64"))
def test_clamp(dtype, nan, gen):
    x = numpy_random(N, dtype, gen)
    a, b = numpy_random(N, dtype, gen), numpy_random(N, dtype, gen)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    x[:3] = [np.nan, np.inf, -np.inf]
    all_ = nan == tl.PropagateNan.ALL
    result = _bf16_to_fp32(dtype)
    z = poisoned(N, result)
    _clamp_kernel[(1,)](x, lo, hi, z, N=N, NAN=nan, SCALARS=False, RESULT=tl_dtype(result))
    assert_exact(z, clamp_reference(x, lo, hi, all_, result), "clamp")
    # Python bounds are fp32 tensors (`to_tensor`): an fp16 x clamps in fp32
    result = "float64" if dtype == "float64" else "float32"
    z = poisoned(N, result)
    _clamp_kernel[(1,)](x, lo, hi, z, N=N, NAN=nan, SCALARS=True, RESULT=tl_dtype(result))
    bound = np.full(N, 0.5)
    assert_exact(z, clamp_reference(x, -bound, bound, all_, result), "clamp")


def test_clamp_needs_floats():
    x = np.ones(4, np.int32)
    with kernel_error("Only floating point clamp is supported"):
        _clamp_kernel[(1,)](
            x,
            x,
            x,
            poisoned(4, "int32"),
            N=4,
            NAN=tl.PropagateNan.NONE,
            SCALARS=False,
            RESULT=tl.int32,
        )


# -------------------------------------------------------------------------------------------------
# where
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _where_kernel(
    c_ptr,
    x_ptr,
    y_ptr,
    z_ptr,
    M: tl.constexpr,
    N: tl.constexpr,
    CASE: tl.constexpr,
    RESULT: tl.constexpr,
):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    if CASE == "broadcast":  # condition [M, 1], x [1, N], y [M, N]
        c = tl.load(c_ptr + rows) > 0
        x = tl.load(x_ptr + cols)
        y = tl.load(y_ptr + rows * N + cols)
        z = tl.where(c, x, y)
    elif CASE == "scalar_y":  # a Python scalar is weak: fp16 stays fp16
        c = tl.load(c_ptr + rows * N + cols) > 0
        z = tl.where(c, tl.load(x_ptr + rows * N + cols), 2.0)
    elif CASE == "scalar_x":
        c = tl.load(c_ptr + rows * N + cols) > 0
        z = tl.where(c, 3, tl.load(y_ptr + rows * N + cols))
    elif CASE == "scalar_condition":  # a scalar condition picks a whole tensor
        c = tl.load(c_ptr) > 0
        z = tl.where(c, tl.load(x_ptr + rows * N + cols), tl.load(y_ptr + rows * N + cols))
    elif CASE == "int_condition":  # a non-boolean condition is cast to int1 (x != 0)
        c = tl.load(c_ptr + rows * N + cols)
        z = tl.where(c, tl.load(x_ptr + rows * N + cols), tl.load(y_ptr + rows * N + cols))
    else:  # both scalars: a scalar tensor broadcast by the condition
        c = tl.load(c_ptr + rows * N + cols) > 0
        z = tl.where(c, 1, 2)
    tl.static_assert(z.dtype == RESULT)
    tl.store(z_ptr + rows * N + cols, z)


@pytest.mark.parametrize(
    "case, dx, dy, result",
    [
        ("broadcast", "float32", "float32", "float32"),
        ("broadcast", "int8", "float16", "float16"),
        ("broadcast", "uint8", "int8", "uint8"),
        ("scalar_y", "float16", "float16", "float16"),
        ("scalar_y", "int8", "int8", "float32"),
        ("scalar_x", "int8", "int8", "int8"),
        ("scalar_x", "bfloat16", "bfloat16", "bfloat16"),
        ("scalar_condition", "float64", "float64", "float64"),
        ("int_condition", "int32", "int32", "int32"),
        ("scalars", "int32", "int32", "int32"),
    ],
)
# (the int condition's warning is test_where_condition.py's)
@pytest.mark.filterwarnings("ignore:tl.where takes a boolean condition:UserWarning")
def test_where(case, dx, dy, result, gen):
    m, n = 4, 16
    c = numpy_random(m * n, "int32", gen, -3, 3)
    if case == "int_condition":
        c[::3] = 0
    x = numpy_random(m * n, dx, gen)
    y = numpy_random(m * n, dy, gen)
    z = poisoned((m, n), result)
    _where_kernel[(1,)](c, x, y, z, M=m, N=n, CASE=case, RESULT=tl_dtype(result))

    def full(a, d):
        return convert(a, d, result).reshape(m, n)

    if case == "broadcast":
        expected = np.where(c[:m, None] > 0, full(np.tile(x[:n], m), dx), full(y, dy))
    elif case == "scalar_y":
        expected = np.where(c.reshape(m, n) > 0, full(x, dx), np.array(2.0, np_dtype(result)))
    elif case == "scalar_x":
        expected = np.where(c.reshape(m, n) > 0, np.array(3, np_dtype(result)), full(y, dy))
    elif case == "scalar_condition":
        expected = full(x, dx) if c[0] > 0 else full(y, dy)
    elif case == "int_condition":
        expected = np.where(c.reshape(m, n) != 0, full(x, dx), full(y, dy))
    else:
        expected = np.where(c.reshape(m, n) > 0, 1, 2).astype(np.int32)
    assert_exact(z, expected.astype(np_dtype(result)), "where")


# -------------------------------------------------------------------------------------------------
# sigmoid, softmax, cdiv
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _sigmoid_kernel(x_ptr, z_ptr, N: tl.constexpr, METHOD: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    z = x.sigmoid() if METHOD else tl.sigmoid(x)
    tl.static_assert(z.dtype == x.dtype)
    tl.store(z_ptr + offs, z)


@pytest.mark.parametrize("method", (False, True))
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_sigmoid(dtype, method, gen):
    x = (gen.uniform(-30, 30, N)).astype(np_dtype(dtype))
    z = poisoned(N, dtype)
    _sigmoid_kernel[(1,)](x, z, N=N, METHOD=method)
    exact = np.array([1.0 / (1.0 + math.exp(-float(v))) for v in x])
    check(
        "sigmoid",
        z,
        exact if dtype == "float64" else round_float(exact, dtype),
        table_backend(),
        np_dtype(dtype),
    )


def test_sigmoid_of_fp16_raises():
    with kernel_error(r"Expected dtype \['fp32', 'fp64'\] but got fp16"):
        _sigmoid_kernel[(1,)](np.ones(4, np.float16), poisoned(4, "float16"), N=4, METHOD=False)


@naiad.jit
def _softmax_kernel(
    x_ptr, z_ptr, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr, KEEP: tl.constexpr
):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    z = tl.softmax(x, dim=DIM, keep_dims=KEEP)
    tl.store(z_ptr + offs, z)


@naiad.jit
def _softmax_1d_kernel(x_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(z_ptr + offs, tl.load(x_ptr + offs).softmax())


@pytest.mark.parametrize("dim, keep", [(None, False), (0, False), (1, True), (0, True)])
def test_softmax(dim, keep, gen):
    m, n = 8, 16
    x = (gen.standard_normal((m, n)) * 4).astype(np.float32)
    z = poisoned((m, n), "float32")
    _softmax_kernel[(1,)](x, z, M=m, N=n, DIM=dim, KEEP=keep)
    axis = 0 if dim is None else dim
    e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
    expected = e / e.sum(axis=axis, keepdims=True)
    check("softmax", z, expected, table_backend(), np.float32, k=x.shape[axis])


def test_softmax_1d(gen):
    x = (gen.standard_normal(128) * 10).astype(np.float32)
    z = poisoned(128, "float32")
    _softmax_1d_kernel[(1,)](x, z, N=128)
    e = np.exp(x.astype(np.float64) - x.max())
    check("softmax", z, e / e.sum(), table_backend(), np.float32, k=128)


@naiad.jit
def _cdiv_kernel(x_ptr, d_ptr, z_ptr, folded_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    z = tl.cdiv(x, tl.load(d_ptr + offs))
    tl.static_assert(z.dtype == x.dtype)
    tl.store(z_ptr + offs, z)
    nblocks: tl.constexpr = tl.cdiv(BLOCK, 3)  # constexprs fold: a constexpr usable as a shape
    tl.static_assert(nblocks == (BLOCK + 2) // 3)
    tl.store(folded_ptr + tl.arange(0, nblocks), tl.full([nblocks], nblocks, tl.int64))


@pytest.mark.parametrize("dtype", ("int32", "int64", "uint32", "int8"))
def test_cdiv(dtype, gen):
    hi = int_range(dtype)[1] // 2
    x = numpy_random(N, dtype, gen, 1, hi)
    d = numpy_random(N, dtype, gen, 1, 100)
    z, folded = poisoned(N, dtype), poisoned(4, "int64")
    _cdiv_kernel[(1,)](x, d, z, folded, N=N, BLOCK=12)
    # (x + div - 1) // div in the dtype: the sum wraps (int8: 63 + 99 - 1 is negative)
    sums = pyints(wrap([a + b - 1 for a, b in zip(pyints(x), pyints(d))], dtype))
    assert_exact(z, wrap([c_div(s, b) for s, b in zip(sums, pyints(d))], dtype), "floordiv")
    assert pyints(folded) == [4] * 4
    assert naiad.cdiv(12, 3) == 4 and naiad.cdiv(13, 3) == 5


@naiad.jit
def _fma_scalar_kernel(x_ptr, z_ptr, N: tl.constexpr, RESULT: tl.constexpr):
    offs = tl.arange(0, N)
    z = tl.fma(tl.load(x_ptr + offs), 2.0, 1.0)
    tl.static_assert(z.dtype == RESULT)
    tl.store(z_ptr + offs, z)


@pytest.mark.parametrize(
    "dtype, result",
    [
        ("float16", "float32"),
        ("bfloat16", "float32"),
        ("float32", "float32"),
        ("float64", "float64"),
    ],
)
def test_fma_python_scalars_take_their_literal_type(dtype, result, gen):
    """fma makes Python scalars fp32 tensors (`to_tensor`): an fp16 fma with them is fp32."""
    x = numpy_random(N, dtype, gen)
    z = poisoned(N, result)
    _fma_scalar_kernel[(1,)](x, z, N=N, RESULT=tl_dtype(result))
    exact = [fractions.Fraction(float(v)) * 2 + 1 for v in x]
    check("fma", z, round_float(exact, result), table_backend(), np_dtype(result))
