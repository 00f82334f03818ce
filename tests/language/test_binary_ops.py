"""The arithmetic operators + - * / // % of the language, as Triton defines them.

Every result is checked bit for bit (the tolerance table says exact for these operators in the
interpreter) against an exact reference: integers on Python integers wrapped to the result's
width with C's `//` and `%`; floats computed exactly and rounded once to the result dtype. The
result dtype itself is asserted inside the kernel (`tl.static_assert(z.dtype == RESULT)`).

The default tier runs every operator over representative dtype pairs; `-m full` runs the whole
matrix of Triton's `test_bin_op` (12 x 12 dtypes, with int1 where legal).
"""

import math

import numpy as np
import pytest
from dtype_tables import (
    DTYPES_WITH_BOOL,
    FLOAT_DTYPES,
    INT_DTYPES,
    INTEGRAL_DTYPES,
    UINT_DTYPES,
    int_range,
    is_float,
    np_dtype,
    tl_dtype,
)
from exact_arithmetic import c_div, c_rem, convert, gpu_float_rem, pyints, round_float, wrap
from helpers import apply_binary, assert_exact, kernel_error, run_binary, running_on
from hypothesis import given
from hypothesis import strategies as st
from inputs import arrays, hypothesis_settings, numpy_random, poisoned, specials
from promotion import DifferentSignedness, literal_dtype, promoted, result_dtype

import naiad
import naiad.language as tl

ARITH_OPS = ("+", "-", "*", "/", "//", "%")
_CHECK_NAME = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "truediv_fp32",
    "//": "floordiv",
    "%": "mod",
}

# Representative pairs: each integer width and signedness, the C-rule corners of mixed
# signedness, every float type, mixed floats, int with float, and int1.
DEFAULT_PAIRS = [
    ("int8", "int8"),
    ("int16", "int16"),
    ("int32", "int32"),
    ("int64", "int64"),
    ("uint8", "uint8"),
    ("uint16", "uint16"),
    ("uint32", "uint32"),
    ("uint64", "uint64"),
    ("int8", "uint8"),
    ("int16", "uint8"),
    ("uint32", "int64"),
    ("int32", "uint64"),
    ("int8", "int64"),
    ("uint8", "uint32"),
    ("float16", "float16"),
    ("bfloat16", "bfloat16"),
    ("float32", "float32"),
    ("float64", "float64"),
    ("float16", "float32"),
    ("bfloat16", "float16"),
    ("bfloat16", "float32"),
    ("float32", "float64"),
    ("int32", "float16"),
    ("int8", "bfloat16"),
    ("uint64", "float32"),
    ("int64", "float64"),
    ("int1", "int1"),
    ("int1", "int16"),
    ("int1", "float32"),
]
FULL_PAIRS = [
    (a, b) for a in DTYPES_WITH_BOOL for b in DTYPES_WITH_BOOL if (a, b) not in DEFAULT_PAIRS
]
N = 64


def _legal(op, a, b) -> bool:
    try:
        result_dtype(op, a, b)
    except TypeError:
        return False
    return True


def reference(op: str, x: np.ndarray, dx: str, y: np.ndarray, dy: str) -> np.ndarray:
    """`x op y` with Triton's promotion, computed exactly and rounded once to the result dtype."""
    ty = promoted(dx, dy, div_or_mod=op in ("/", "//", "%"))
    if op == "/" and not is_float(ty):
        ty = "float32"  # int / int divides in fp32
    xs, ys = convert(x, dx, ty), convert(y, dy, ty)
    if not is_float(ty):
        fn = {"+": int.__add__, "-": int.__sub__, "*": int.__mul__, "//": c_div, "%": c_rem}[op]
        return wrap([fn(a, b) for a, b in zip(pyints(xs), pyints(ys))], ty)
    if op == "%" and running_on() == "cuda":
        return gpu_float_rem(xs, ys, ty)
    a, b = xs.astype(np.float64), ys.astype(np.float64)
    with np.errstate(all="ignore"):
        exact = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "%": np.fmod}[op](
            a, b
        )
    if ty == "float64":
        return exact
    # float64 holds the exact +, -, * of narrower floats and fmod is exact; / is rounded twice,
    # which is innocuous for fp32 and narrower (53 >= 2 * 24 + 2).
    return round_float(exact, ty)


def _check(op, dx, dy, x, y):
    expected = reference(op, x, dx, y, dy)
    ty = result_dtype(op, dx, dy)
    actual = run_binary(op, x, y, ty)
    assert_exact(actual, expected, _CHECK_NAME[op])


def _draw_inputs(data, op, dx, dy):
    x = data.draw(arrays(dx, N, special=True), label="x")
    # Divisors are never zero (zero divisors have their own test), nor are any other inputs.
    y = data.draw(arrays(dy, N, special=op not in ("//", "%")), label="y")
    if dy == "int1" and op in ("//", "%"):
        y = np.ones(N, bool)
    return x, y


@pytest.mark.parametrize(
    "op, dx, dy",
    [(op, dx, dy) for dx, dy in DEFAULT_PAIRS for op in ARITH_OPS if _legal(op, dx, dy)],
)
@hypothesis_settings(max_examples=3)
@given(data=st.data())
def test_binary_op(op, dx, dy, data):
    _check(op, dx, dy, *_draw_inputs(data, op, dx, dy))


@pytest.mark.full
@pytest.mark.parametrize(
    "op, dx, dy", [(op, dx, dy) for dx, dy in FULL_PAIRS for op in ARITH_OPS if _legal(op, dx, dy)]
)
@hypothesis_settings(max_examples=8)
@given(data=st.data())
def test_binary_op_full(op, dx, dy, data):
    _check(op, dx, dy, *_draw_inputs(data, op, dx, dy))


@pytest.mark.parametrize(
    "op, dtype",
    [(op, d) for op in ARITH_OPS for d in (*INTEGRAL_DTYPES, *FLOAT_DTYPES) if _legal(op, d, d)],
)
def test_binary_op_special_values(op, dtype):
    """Every pair of range ends, +-1, infinities, NaN, subnormals and largest values."""
    values = specials(dtype)
    if op in ("//", "%") and not is_float(dtype):
        values = values[values != 0]
    x = np.repeat(values, len(values))
    y = np.tile(values, len(values))
    n = 1 << (len(x) - 1).bit_length()
    x, y = np.resize(x, n), np.resize(y, n)
    _check(op, dtype, dtype, x, y)


# -------------------------------------------------------------------------------------------------
# what Triton rejects
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ("/", "//", "%"))
@pytest.mark.parametrize("dx", INT_DTYPES)
@pytest.mark.parametrize("dy", UINT_DTYPES)
def test_mixed_signedness_division_raises(op, dx, dy):
    with pytest.raises(DifferentSignedness):
        promoted(dx, dy, div_or_mod=True)
    x = np.ones(4, np_dtype(dx))
    y = np.ones(4, np_dtype(dy))
    for a, b in ((x, y), (y, x)):
        with kernel_error("different signedness", TypeError):
            run_binary(op, a, b, "int32")


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32", "float64"))
def test_floordiv_of_floats_raises(dtype):
    x = np.ones(4, np_dtype(dtype))
    with kernel_error(r"unexpected type fp|bf16", TypeError):
        run_binary("//", x, x, dtype)


# -------------------------------------------------------------------------------------------------
# C-style division, wrap-around, division by zero
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_division_truncates_toward_zero(dtype):
    x = np.array([7, -7, 7, -7, 1, -1, 6, -6], np_dtype(dtype))
    y = np.array([2, 2, -2, -2, 3, 3, -4, 4], np_dtype(dtype))
    assert_exact(
        run_binary("//", x, y, dtype),
        np.array([3, -3, -3, 3, 0, 0, -1, -1], np_dtype(dtype)),
        "floordiv",
    )
    # The remainder has the sign of the dividend: x == (x // y) * y + x % y.
    assert_exact(
        run_binary("%", x, y, dtype), np.array([1, -1, 1, -1, 1, -1, 2, -2], np_dtype(dtype)), "mod"
    )


@pytest.mark.parametrize("dtype", INTEGRAL_DTYPES)
def test_overflow_wraps_around(dtype):
    lo, hi = int_range(dtype)
    x = np.array([hi, lo if lo else 1, hi, hi, hi, hi // 2 + 1, 3, 2], dtype=object)
    y = np.array([1, -1 if lo else 2, 2, hi, hi - 1, 2, hi, lo if lo else 5], dtype=object)
    x, y = x.astype(np_dtype(dtype)), y.astype(np_dtype(dtype))
    for op in ("+", "-", "*"):
        fn = {"+": int.__add__, "-": int.__sub__, "*": int.__mul__}[op]
        expected = wrap([fn(a, b) for a, b in zip(pyints(x), pyints(y))], dtype)
        assert_exact(run_binary(op, x, y, dtype), expected, _CHECK_NAME[op])
    # The wrapped value itself: MAX + 1 == MIN (0 for unsigned), MIN - 1 == MAX.
    assert pyints(run_binary("+", x[:1], y[:1], dtype))[0] == lo


@pytest.mark.parametrize("dtype", INTEGRAL_DTYPES)
def test_division_by_zero_never_traps(dtype):
    """ARCHITECTURE.md: no trap; the GPU's values, as naiad/runtime/interpreter/elementwise.py
    documents them: x // 0 is all ones (-1 signed); x % 0 is x; INT_MIN // -1 is INT_MIN and
    INT_MIN % -1 is 0."""
    lo, hi = int_range(dtype)
    x = np.array([5, hi, lo or 1, 1, 7, hi, lo or 3, 2], dtype=object).astype(np_dtype(dtype))
    y = np.zeros(8, np_dtype(dtype))
    q = run_binary("//", x, y, dtype)
    r = run_binary("%", x, y, dtype)
    expected_q = [-1 if dtype in INT_DTYPES else hi] * 8
    assert pyints(q) == expected_q
    assert pyints(r) == pyints(x)
    if dtype in INT_DTYPES:
        x = np.array([lo] * 4, np_dtype(dtype))
        y = np.array([-1] * 4, np_dtype(dtype))
        assert pyints(run_binary("//", x, y, dtype)) == [lo] * 4
        assert pyints(run_binary("%", x, y, dtype)) == [0] * 4


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_float_mod_is_c_fmod(dtype):
    x = np.array([5.5, -5.5, 5.5, -5.5, 1e30, np.inf, 3.0, -0.75], np_dtype(dtype))
    y = np.array([2.0, 2.0, -2.0, -2.0, 7.0, 2.0, np.inf, 0.5], np_dtype(dtype))
    z = run_binary("%", x, y, dtype)
    expected = [
        math.fmod(float(a), float(b)) if math.isfinite(float(a)) else math.nan for a, b in zip(x, y)
    ]
    if running_on() == "cuda":  # LLVM's frem expansion, as Triton's: not C's fmod
        expected = gpu_float_rem(x, y, dtype)
    assert_exact(z, np.array(expected, np_dtype(dtype)), "mod")
    assert list(np.signbit(z[:4])) == [False, True, False, True]  # the dividend's sign


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
def test_half_division_and_mod_compute_in_fp32(dtype, gen):
    x = np.array(gen.standard_normal(16) * 100, np.float32).astype(np_dtype(dtype))
    y = np.array(gen.standard_normal(16) + 3, np.float32).astype(np_dtype(dtype))
    for op in ("/", "%"):
        z = run_binary(op, x, y, "float32")  # asserts the fp32 result dtype
        exact = {"/": np.divide, "%": np.fmod}[op](x.astype(np.float64), y.astype(np.float64))
        expected = round_float(exact, "float32")
        if op == "%" and running_on() == "cuda":
            expected = gpu_float_rem(x.astype(np.float32), y.astype(np.float32), "float32")
        assert_exact(z, expected, _CHECK_NAME[op])


# -------------------------------------------------------------------------------------------------
# unary minus (and no unary plus)
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _unary_kernel(x_ptr, z_ptr, N: tl.constexpr, OP: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if OP == "-":
        z = -x
    else:
        z = +x
    tl.static_assert(z.dtype == x.dtype)
    tl.store(z_ptr + offs, z)


@pytest.mark.parametrize("dtype", (*INTEGRAL_DTYPES, *FLOAT_DTYPES))
def test_unary_minus(dtype):
    x = np.resize(specials(dtype), 16)
    z = poisoned(16, dtype)
    _unary_kernel[(1,)](x, z, N=16, OP="-")
    if is_float(dtype):
        expected = -x  # a sign flip (NaN and infinities included)
    else:  # 0 - x: it wraps (-INT_MIN == INT_MIN; unsigned -x == 2**n - x)
        expected = wrap([-v for v in pyints(x)], dtype)
    assert_exact(z, expected.astype(np_dtype(dtype)), "neg")


def test_unary_plus_is_refused():
    """Triton's tensor has no `__pos__`: `+x` does not compile there, so it fails here too."""
    with pytest.raises(naiad.CompilationError, match="unary \\+"):
        _unary_kernel[(1,)](np.ones(4, np.float32), poisoned(4, "float32"), N=4, OP="+")


# -------------------------------------------------------------------------------------------------
# tensor op Python scalar, Python scalar op tensor
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _scalar_kernel(
    x_ptr,
    z_ptr,
    N: tl.constexpr,
    OP: tl.constexpr,
    S: tl.constexpr,
    SCALAR_FIRST: tl.constexpr,
    RESULT: tl.constexpr,
):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if SCALAR_FIRST:
        z = apply_binary(S, x, OP)
    else:
        z = apply_binary(x, S, OP)
    tl.static_assert(z.dtype == RESULT, "unexpected result dtype")
    tl.store(z_ptr + offs, z)


def scalar_in(value, ty: str) -> np.ndarray:
    """The constant Triton makes of a Python scalar for a `ty` operand (`scalar_constant`):
    fp16, bf16 and fp32 constants are built from a C float, so they round through fp32."""
    if not is_float(ty):
        return wrap([int(value)], ty)
    as_float = float(value)
    if ty == "float64":
        return np.array([as_float], np.float64)
    return round_float(round_float([as_float], "float32").astype(np.float64), ty)


SCALAR_CASES = [
    # (tensor dtype, op, scalar): weak scalars never widen a tensor of their kind or above
    ("float16", "*", 2.0),
    ("float16", "+", 0.1),
    ("bfloat16", "+", 0.1),
    ("bfloat16", "*", 3),
    ("float32", "-", 1e-3),
    ("float64", "*", 0.1),
    ("float64", "+", 1e-300),
    ("float16", "/", 3.0),
    ("bfloat16", "%", 1.5),
    ("float32", "/", 7),
    ("int8", "+", 100),
    ("int8", "*", -3),
    ("int8", "-", 127),
    ("uint8", "+", 200),
    ("uint8", "*", 3),
    ("int16", "//", 7),
    ("int16", "%", -5),
    ("int32", "/", 3),
    ("uint32", "+", 2**32 - 1),
    ("int64", "*", 2**40),
    ("uint64", "+", 2**64 - 1),
    ("uint64", "//", 2**63 + 1),
    ("int32", "+", True),
    # a scalar of a higher kind takes part: int tensor with a float scalar promotes
    ("int8", "+", 1.5),
    ("uint64", "*", 0.5),
    ("int32", "/", 2.5),
    ("int16", "+", 1e50),
    ("int1", "+", 1),
    ("int1", "*", 2.0),
]


@pytest.mark.parametrize("scalar_first", (False, True))
@pytest.mark.parametrize("dtype, op, scalar", SCALAR_CASES)
def test_tensor_and_python_scalar(dtype, op, scalar, scalar_first, gen):
    x = numpy_random(16, dtype, gen, low=1 if op in ("//", "%") and not is_float(dtype) else None)
    if dtype == "int1" and op in ("//", "%"):
        x[:] = True
    sd = literal_dtype(scalar)
    div_or_mod = op in ("/", "//", "%")
    a, b = (sd, dtype) if scalar_first else (dtype, sd)
    ty = promoted(a, b, div_or_mod, a_scalar=scalar_first, b_scalar=not scalar_first)
    result = "float32" if op == "/" and not is_float(ty) else ty
    if op == "/" and not is_float(ty):
        ty = "float32"
    s = np.repeat(scalar_in(scalar, ty), 16)
    xs = convert(x, dtype, ty)
    lhs, rhs = (s, xs) if scalar_first else (xs, s)
    expected = reference(op, lhs, ty, rhs, ty)
    z = poisoned(16, result)
    _scalar_kernel[(1,)](
        x, z, N=16, OP=op, S=scalar, SCALAR_FIRST=scalar_first, RESULT=tl_dtype(result)
    )
    assert_exact(z, expected, _CHECK_NAME[op])


@pytest.mark.parametrize("scalar_first", (False, True))
@pytest.mark.parametrize(
    "dtype, op, scalar, message",
    [
        ("int8", "+", 300, "Scalar 300 is out of range for type int8"),
        ("int8", "*", 128, "out of range for type int8"),
        ("int8", "-", -129, "out of range for type int8"),
        ("int16", "//", 40000, "out of range for type int16"),
        ("int32", "+", 2**31, "out of range for type int32"),
        ("int64", "+", 2**63, "out of range for type int64"),
        ("uint8", "+", 256, "out of range for type uint8"),
        ("uint8", "+", -1, "unsigned tensor and a negative scalar"),
        ("uint16", "*", -2, "unsigned tensor and a negative scalar"),
        ("uint32", "-", -1, "unsigned tensor and a negative scalar"),
        ("uint64", "%", -7, "unsigned tensor and a negative scalar"),
        # bitwise operators take Python scalars the same (weak) way: `x_int8 & 0xFF` is refused
        ("int8", "&", 0xFF, "Scalar 255 is out of range for type int8"),
        ("int16", "|", 2**16 - 1, "out of range for type int16"),
        ("uint8", ">>", -1, "unsigned tensor and a negative scalar"),
    ],
)
def test_python_scalar_out_of_range_raises(dtype, op, scalar, message, scalar_first):
    x = np.ones(4, np_dtype(dtype))
    z = poisoned(4, dtype)
    with kernel_error(message):
        _scalar_kernel[(1,)](
            x, z, N=4, OP=op, S=scalar, SCALAR_FIRST=scalar_first, RESULT=tl_dtype(dtype)
        )


@naiad.jit
def _strong_scalar_kernel(x_ptr, z_ptr, s, N: tl.constexpr, RESULT: tl.constexpr):
    offs = tl.arange(0, N)
    z = tl.load(x_ptr + offs) + s
    tl.static_assert(z.dtype == RESULT, "unexpected result dtype")
    tl.store(z_ptr + offs, z)


@pytest.mark.parametrize(
    "dtype, s, result",
    [
        ("int8", 3, "int32"),  # a runtime int argument is an int32 scalar, not a weak literal
        ("uint8", 3, "int32"),
        ("int8", 2**40, "int64"),
        ("float16", 1.5, "float32"),  # a runtime float argument is an fp32 scalar
        ("bfloat16", 2.5, "float32"),
        ("float64", 0.5, "float64"),
    ],
)
def test_runtime_scalar_argument_takes_part_in_promotion(dtype, s, result):
    x = np.array([1, 2, 3, 4], np_dtype(dtype))
    z = poisoned(4, result)
    _strong_scalar_kernel[(1,)](x, z, s, N=4, RESULT=tl_dtype(result))
    sd = literal_dtype(s)
    expected = reference("+", x, dtype, np.repeat(scalar_in(s, sd), 4), sd)
    assert_exact(z, expected, "add")
