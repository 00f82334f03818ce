"""Comparisons (NaN included), bitwise operators, shifts, and `and` / `or` / `not` on tensors.

References: comparisons on the operands converted to their promoted dtype (ordered predicates
for floats, `!=` unordered: true for NaN); bitwise operators on Python integers of the promoted
dtype, wrapped; shifts as on the GPU, where an amount of the bit width or more gives 0, or the
sign for an arithmetic right shift, and `>>` is arithmetic when the tensor it is called on is
signed, before promotion (Triton's `tensor.__rshift__`). All exact.
"""

import numpy as np
import pytest
from dtype_tables import (
    DTYPES,
    INT_DTYPES,
    INTEGRAL_DTYPES,
    UINT_DTYPES,
    bitwidth,
    int_range,
    is_float,
    is_signed,
    np_dtype,
)
from exact_arithmetic import convert, pyints, wrap
from helpers import assert_exact, kernel_error, run_binary
from hypothesis import given
from hypothesis import strategies as st
from inputs import arrays, hypothesis_settings, numpy_random, poisoned, specials
from promotion import promoted

import naiad
import naiad.language as tl

COMPARE_OPS = ("<", "<=", ">", ">=", "==", "!=")
BITWISE_OPS = ("&", "|", "^")
N = 64

_NUMPY_COMPARE = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


def compare_reference(op, x, dx, y, dy) -> np.ndarray:
    ty = promoted(dx, dy)
    xs, ys = convert(x, dx, ty), convert(y, dy, ty)
    if is_float(ty):
        # NumPy's comparisons are IEEE's: ordered (false with a NaN) except `!=`, which is true.
        with np.errstate(invalid="ignore"):
            return _NUMPY_COMPARE[op](xs.astype(np.float64), ys.astype(np.float64))
    fn = {
        "<": int.__lt__,
        "<=": int.__le__,
        ">": int.__gt__,
        ">=": int.__ge__,
        "==": int.__eq__,
        "!=": int.__ne__,
    }[op]
    return np.array([fn(a, b) for a, b in zip(pyints(xs), pyints(ys))], bool)


COMPARE_PAIRS = [
    ("int8", "int8"),
    ("int32", "int32"),
    ("int64", "int64"),
    ("uint8", "uint8"),
    ("uint64", "uint64"),
    ("int8", "uint8"),
    ("int32", "uint32"),
    ("int16", "uint8"),
    ("int64", "uint32"),
    ("float16", "float16"),
    ("bfloat16", "bfloat16"),
    ("float32", "float32"),
    ("float64", "float64"),
    ("bfloat16", "float16"),
    ("float16", "float64"),
    ("int32", "float16"),
    ("uint64", "float32"),
    ("int1", "int1"),
    ("int1", "int8"),
]


def _compare_case(data, op, dx, dy):
    x = data.draw(arrays(dx, N, special=True), label="x")
    y = data.draw(arrays(dy, N, special=True), label="y")
    # Equal values on purpose in half the lanes (when the dtypes allow), or == is always false.
    if dx == dy:
        y[::2] = x[::2]
    z = run_binary(op, x, y, "int1")
    assert_exact(z, compare_reference(op, x, dx, y, dy), "cmp")


@pytest.mark.parametrize("op", COMPARE_OPS)
@pytest.mark.parametrize("dx, dy", COMPARE_PAIRS)
@hypothesis_settings(max_examples=3)
@given(data=st.data())
def test_comparison(op, dx, dy, data):
    _compare_case(data, op, dx, dy)


@pytest.mark.full
@pytest.mark.parametrize("op", COMPARE_OPS)
@pytest.mark.parametrize(
    "dx, dy",
    [(a, b) for a in ("int1", *DTYPES) for b in ("int1", *DTYPES) if (a, b) not in COMPARE_PAIRS],
)
@hypothesis_settings(max_examples=5)
@given(data=st.data())
def test_comparison_full(op, dx, dy, data):
    _compare_case(data, op, dx, dy)


@pytest.mark.parametrize("op", COMPARE_OPS)
@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32", "float64", *INTEGRAL_DTYPES))
def test_comparison_special_values(op, dtype):
    """Every pair of specials: NaN compares false except `!=`; infinities and range ends order."""
    values = specials(dtype)
    x, y = np.repeat(values, len(values)), np.tile(values, len(values))
    n = 1 << (len(x) - 1).bit_length()
    x, y = np.resize(x, n), np.resize(y, n)
    z = run_binary(op, x, y, "int1")
    assert_exact(z, compare_reference(op, x, dtype, y, dtype), "cmp")
    if is_float(dtype):
        nan = np.isnan(x.astype(np.float64)) | np.isnan(y.astype(np.float64))
        assert nan.any()
        assert (z[nan] == (op == "!=")).all()


@pytest.mark.parametrize(
    "dx, dy, x, y, lt",
    [
        ("int8", "uint8", -1, 1, False),  # int8 -1 becomes uint8 255: the comparison is unsigned
        ("int32", "uint32", -5, 3, False),
        ("int64", "uint64", -1, 2**63, False),
        ("int16", "uint8", -1, 1, True),  # int16 wins: signed
        ("uint32", "int64", 2**32 - 1, -1, False),
    ],
)
def test_mixed_signedness_comparison_follows_c(dx, dy, x, y, lt):
    xs = np.array([x] * 2, dtype=object).astype(np_dtype(dx))
    ys = np.array([y] * 2, dtype=object).astype(np_dtype(dy))
    assert list(run_binary("<", xs, ys, "int1")) == [lt, lt]


# -------------------------------------------------------------------------------------------------
# & | ^ ~
# -------------------------------------------------------------------------------------------------
def bitwise_reference(op, x, dx, y, dy) -> np.ndarray:
    ty = promoted(dx, dy)
    fn = {"&": int.__and__, "|": int.__or__, "^": int.__xor__}[op]
    xs, ys = pyints(convert(x, dx, ty)), pyints(convert(y, dy, ty))
    return wrap([fn(a, b) for a, b in zip(xs, ys)], ty)


BITWISE_PAIRS = [
    ("int8", "int8"),
    ("int16", "int16"),
    ("int32", "int32"),
    ("int64", "int64"),
    ("uint8", "uint8"),
    ("uint16", "uint16"),
    ("uint32", "uint32"),
    ("uint64", "uint64"),
    ("int8", "uint8"),
    ("int8", "uint64"),
    ("int16", "uint8"),
    ("uint32", "int64"),
    ("int1", "int1"),
    ("int1", "int32"),
]


@pytest.mark.parametrize("op", BITWISE_OPS)
@pytest.mark.parametrize("dx, dy", BITWISE_PAIRS)
@hypothesis_settings(max_examples=3)
@given(data=st.data())
def test_bitwise(op, dx, dy, data):
    x = data.draw(arrays(dx, N), label="x")
    y = data.draw(arrays(dy, N), label="y")
    assert_exact(
        run_binary(op, x, y, promoted(dx, dy)),
        bitwise_reference(op, x, dx, y, dy),
        {"&": "and", "|": "or", "^": "xor"}[op],
    )


@pytest.mark.full
@pytest.mark.parametrize("op", BITWISE_OPS)
@pytest.mark.parametrize(
    "dx, dy",
    [
        (a, b)
        for a in ("int1", *INTEGRAL_DTYPES)
        for b in ("int1", *INTEGRAL_DTYPES)
        if (a, b) not in BITWISE_PAIRS
    ],
)
@hypothesis_settings(max_examples=5)
@given(data=st.data())
def test_bitwise_full(op, dx, dy, data):
    x = data.draw(arrays(dx, N), label="x")
    y = data.draw(arrays(dy, N), label="y")
    assert_exact(
        run_binary(op, x, y, promoted(dx, dy)),
        bitwise_reference(op, x, dx, y, dy),
        {"&": "and", "|": "or", "^": "xor"}[op],
    )


@pytest.mark.parametrize("op", (*BITWISE_OPS, "<<", ">>"))
@pytest.mark.parametrize(
    "dx, dy",
    [("float32", "float32"), ("float16", "int32"), ("int8", "bfloat16"), ("float64", "uint64")],
)
def test_bitwise_of_floats_raises(op, dx, dy):
    x, y = np.ones(4, np_dtype(dx)), np.ones(4, np_dtype(dy))
    with kernel_error("invalid operands of type", TypeError):
        run_binary(op, x, y, "int32")


@naiad.jit
def _invert_kernel(x_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    z = ~x
    tl.static_assert(z.dtype == x.dtype)
    tl.store(z_ptr + offs, z)


@pytest.mark.parametrize("dtype", ("int1", *INTEGRAL_DTYPES))
def test_invert(dtype, gen):
    x = numpy_random(32, dtype, gen)
    z = poisoned(32, dtype)
    _invert_kernel[(1,)](x, z, N=32)
    assert_exact(z, wrap([~v for v in pyints(x)], dtype), "invert")


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32", "float64"))
def test_invert_of_float_raises(dtype):
    x = np.ones(4, np_dtype(dtype))
    with kernel_error("wrong type argument to unary invert"):
        _invert_kernel[(1,)](x, poisoned(4, dtype), N=4)


# -------------------------------------------------------------------------------------------------
# shifts
# -------------------------------------------------------------------------------------------------
def shift_reference(op, x, dx, y, dy) -> np.ndarray:
    ty = promoted(dx, dy)
    bits = bitwidth(ty)
    arithmetic = is_signed(dx)  # `x >> y` is arithmetic when x (not the promoted type) is signed
    out = []
    for v, amount in zip(pyints(convert(x, dx, ty)), pyints(convert(y, dy, ty))):
        amount %= 1 << bits  # the amount is read as unsigned: a negative one is huge
        pattern = v % (1 << bits)
        signed_value = pattern - (1 << bits) if pattern >> (bits - 1) else pattern
        if op == "<<":
            out.append(0 if amount >= bits else pattern << amount)
        elif arithmetic:
            out.append(
                signed_value >> min(amount, bits - 1)
                if amount < bits
                else (-1 if signed_value < 0 else 0)
            )
        else:
            out.append(0 if amount >= bits else pattern >> amount)
    return wrap(out, ty)


SHIFT_PAIRS = [
    ("int8", "int8"),
    ("int16", "uint16"),
    ("int32", "int32"),
    ("int64", "int64"),
    ("uint8", "uint8"),
    ("uint16", "uint16"),
    ("uint32", "uint32"),
    ("uint64", "uint64"),
    ("int8", "uint32"),  # int8 >> uint32: promoted to uint32, shifted arithmetically
    ("uint8", "int32"),
    ("int32", "int8"),
    ("uint64", "uint8"),
]


def _amounts(dy, bits, gen, n):
    """Shift amounts in [1, bits) and beyond: bits, bits + k, and negative ones (huge unsigned)."""
    lo, hi = int_range(dy)
    inside = gen.integers(1, min(bits, hi + 1), n)
    beyond = [a for a in (bits, bits + 1, 2 * bits - 1, 2 * bits, 255, 1000) if a <= hi]
    if is_signed(dy):
        beyond += [-1, -bits]
        # (not INT64_MIN: the GPU reads a 64-bit amount's low 32 bits, and those are 0 there)
        beyond += [lo] if dy != "int64" else []
    amounts = np.resize(np.array(list(inside) + beyond, dtype=object), n)
    return amounts.astype(np_dtype(dy))


@pytest.mark.parametrize("op", ("<<", ">>"))
@pytest.mark.parametrize("dx, dy", SHIFT_PAIRS)
def test_shift(op, dx, dy, gen):
    ty = promoted(dx, dy)
    x = numpy_random(N, dx, gen)
    x[:4] = np.array(
        [1, -1 if is_signed(dx) else int_range(dx)[1], int_range(dx)[0] or 3, int_range(dx)[1]],
        dtype=object,
    ).astype(np_dtype(dx))
    y = _amounts(dy, bitwidth(ty), gen, N)
    assert_exact(
        run_binary(op, x, y, ty),
        shift_reference(op, x, dx, y, dy),
        {"<<": "lshift", ">>": "rshift"}[op],
    )


@pytest.mark.full
@pytest.mark.parametrize("op", ("<<", ">>"))
@pytest.mark.parametrize(
    "dx, dy",
    [(a, b) for a in INTEGRAL_DTYPES for b in INTEGRAL_DTYPES if (a, b) not in SHIFT_PAIRS],
)
def test_shift_full(op, dx, dy, gen):
    ty = promoted(dx, dy)
    x = numpy_random(N, dx, gen)
    y = _amounts(dy, bitwidth(ty), gen, N)
    assert_exact(
        run_binary(op, x, y, ty),
        shift_reference(op, x, dx, y, dy),
        {"<<": "lshift", ">>": "rshift"}[op],
    )


@pytest.mark.parametrize("dtype", INT_DTYPES + UINT_DTYPES)
def test_shift_by_bit_width_or_more(dtype):
    """PTX clamps the amount: << and logical >> give 0, arithmetic >> gives the sign."""
    bits = bitwidth(dtype)
    lo, hi = int_range(dtype)
    x = np.array([hi, lo or 5, -1 if lo else 7, 1], dtype=object).astype(np_dtype(dtype))
    y = np.array([bits, bits, bits + 3, min(2 * bits, hi)], dtype=object).astype(np_dtype(dtype))
    assert pyints(run_binary("<<", x, y, dtype)) == [0, 0, 0, 0]
    expected = [0, -1 if lo else 0, -1 if lo else 0, 0]
    assert pyints(run_binary(">>", x, y, dtype)) == expected


@naiad.jit
def _shift_scalar_kernel(x_ptr, z_ptr, N: tl.constexpr, S: tl.constexpr, RIGHT: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if RIGHT:
        z = x >> S
    else:
        z = x << S
    tl.static_assert(z.dtype == x.dtype)
    tl.store(z_ptr + offs, z)


@pytest.mark.parametrize("dtype", INTEGRAL_DTYPES)
@pytest.mark.parametrize("right", (False, True))
def test_shift_by_python_scalar(dtype, right, gen):
    x = numpy_random(16, dtype, gen)
    for amount in (1, 3, bitwidth(dtype) - 1):
        z = poisoned(16, dtype)
        _shift_scalar_kernel[(1,)](x, z, N=16, S=amount, RIGHT=right)
        y = np.full(16, amount, np_dtype(dtype))
        assert_exact(
            z,
            shift_reference(">>" if right else "<<", x, dtype, y, dtype),
            "rshift" if right else "lshift",
        )


# -------------------------------------------------------------------------------------------------
# and / or / not on tensors (the interpreter rewrites them into elementwise logic)
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _logic_kernel(
    x_ptr, y_ptr, w_ptr, and_ptr, or_ptr, not_ptr, chain_ptr, mixed_ptr, N: tl.constexpr
):
    offs = tl.arange(0, N)
    a = tl.load(x_ptr + offs) > 0
    b = tl.load(y_ptr + offs) > 0
    c = tl.load(w_ptr + offs) > 0
    tl.store(and_ptr + offs, a and b)
    tl.store(or_ptr + offs, a or b)
    tl.store(not_ptr + offs, not a)
    tl.store(chain_ptr + offs, (a and b) or (not c))
    both = a and True
    tl.static_assert(both.dtype == tl.int1)
    tl.store(mixed_ptr + offs, both or (c and False))


def test_logical_operators_on_tensors(gen):
    x, y, w = (numpy_random(32, "int32", gen, -5, 5) for _ in range(3))
    outs = [poisoned(32, "int1") for _ in range(5)]
    _logic_kernel[(1,)](x, y, w, *outs, N=32)
    a, b, c = x > 0, y > 0, w > 0
    for actual, expected in zip(outs, (a & b, a | b, ~a, (a & b) | ~c, a)):
        assert_exact(actual, expected, "and")


@naiad.jit
def _logic_of_scalars_kernel(x_ptr, z_ptr, N: tl.constexpr, FLAG: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    # A constexpr condition is plain Python logic; a tensor one is elementwise.
    if FLAG and not (N < 4):
        z = (x > 0) and (x < 100)
    else:
        z = x > 1000
    tl.store(z_ptr + offs, z)


def test_logical_operators_on_constexprs(gen):
    x = numpy_random(16, "int32", gen, -200, 200)
    z = poisoned(16, "int1")
    _logic_of_scalars_kernel[(1,)](x, z, N=16, FLAG=True)
    assert_exact(z, (x > 0) & (x < 100), "and")
    _logic_of_scalars_kernel[(1,)](x, z, N=16, FLAG=False)
    assert_exact(z, x > 1000, "and")


@naiad.jit
def _chained_comparison_kernel(x_ptr, lo, z_ptr, w_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(z_ptr + offs, lo < x <= 2 * lo != x)  # a chain of three, elementwise
    if 0 < N <= 64:  # a chain of constexprs: plain Python
        tl.store(w_ptr + offs, -lo <= x < lo)


def test_chained_comparisons_are_elementwise(gen):
    """`a < b <= c` joins its comparisons with an elementwise `and` (the compiler's reading;
    the interpreter would have asked a tensor for its truth)."""
    x = numpy_random(32, "int32", gen, -40, 40)
    z, w = poisoned(32, "int1"), poisoned(32, "int1")
    _chained_comparison_kernel[(1,)](x, 10, z, w, N=32)
    assert_exact(z, (x > 10) & (x <= 20) & (x != 20), "<")
    assert_exact(w, (x >= -10) & (x < 10), "<")


@naiad.jit
def _logic_of_ints_kernel(x_ptr, z_ptr, N: tl.constexpr, CASE: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if CASE == "and":
        z = x and x
    elif CASE == "or":
        z = (x > 0) or x
    elif CASE == "not":
        z = not x
    else:
        z = (x > 0) and 1  # a Python int is an int32 tensor here
    tl.store(z_ptr + offs, z)


@pytest.mark.parametrize("case", ("and", "or", "not", "int_literal"))
def test_logical_operators_need_int1(case):
    """Triton bitcasts the operands of `and`, `or`, `not` to int1, which refuses wider types."""
    x = np.ones(4, np.int32)
    with kernel_error("Cannot bitcast data-type of size 32 to data-type of size 1"):
        _logic_of_ints_kernel[(1,)](x, poisoned(4, "int1"), N=4, CASE=case)
