"""Literals and constexprs in kernels (Triton's `test_constexpr`, `to_tensor_type`, `visit_Assign`).

- An assigned Python number becomes a typed scalar: ints are int32 if they fit, then uint32,
  int64, uint64; floats are fp32 when 0, inf, NaN or in fp32's normal range, else fp64. The
  typed value then wraps like any int32 (`x = 2**31 - 1; x = x + 1` is INT_MIN).
- Expressions of constexprs fold to constexprs (`BLOCK * 2` is usable as a shape); `a:
  tl.constexpr = ...` keeps a constexpr, while a plain assignment makes a tensor.
- Runtime integer arguments are int32, int64 or uint64 by value (Triton's specialization).
"""

from typing import NamedTuple

import ml_dtypes
import numpy as np
import pytest
from dtype_tables import np_dtype, tl_dtype
from helpers import assert_exact, kernel_error
from inputs import poisoned

import naiad
import naiad.language as tl


@naiad.jit
def _literal_kernel(out_ptr, CASE: tl.constexpr, EXPECTED: tl.constexpr):
    if CASE == "0":
        x = 0
    elif CASE == "-1":
        x = -1
    elif CASE == "2**31-1":
        x = 2**31 - 1
    elif CASE == "-2**31":
        x = -(2**31)
    elif CASE == "2**31":
        x = 2**31
    elif CASE == "2**32-1":
        x = 2**32 - 1
    elif CASE == "2**32":
        x = 2**32
    elif CASE == "-2**31-1":
        x = -(2**31) - 1
    elif CASE == "2**40":
        x = 2**40
    elif CASE == "-2**63":
        x = -(2**63)
    elif CASE == "2**63":
        x = 2**63
    elif CASE == "2**64-1":
        x = 2**64 - 1
    elif CASE == "True":
        x = True
    elif CASE == "3.0":
        x = 3.0
    elif CASE == "0.0":
        x = 0.0
    elif CASE == "1e-3":
        x = 1e-3
    elif CASE == "1e38":
        x = 1e38
    elif CASE == "1e39":
        x = 1e39
    elif CASE == "1e50":
        x = 1e50
    elif CASE == "1e-40":
        x = 1e-40  # an fp32 subnormal: outside fp32's normal range, so fp64
    elif CASE == "2**-126":
        x = 2.0**-126
    elif CASE == "inf":
        x = 1e400
    elif CASE == "-inf":
        x = -1e400
    else:
        tl.static_assert(False, "unknown case")
    tl.static_assert(x.dtype == EXPECTED, "unexpected literal dtype")
    tl.store(out_ptr, x)


LITERALS = [
    ("0", 0, "int32"),
    ("-1", -1, "int32"),
    ("2**31-1", 2**31 - 1, "int32"),
    ("-2**31", -(2**31), "int32"),
    ("2**31", 2**31, "uint32"),
    ("2**32-1", 2**32 - 1, "uint32"),
    ("2**32", 2**32, "int64"),
    ("-2**31-1", -(2**31) - 1, "int64"),
    ("2**40", 2**40, "int64"),
    ("-2**63", -(2**63), "int64"),
    ("2**63", 2**63, "uint64"),
    ("2**64-1", 2**64 - 1, "uint64"),
    ("True", True, "int1"),
    ("3.0", 3.0, "float32"),
    ("0.0", 0.0, "float32"),
    ("1e-3", 1e-3, "float32"),
    ("1e38", 1e38, "float32"),
    ("1e39", 1e39, "float64"),
    ("1e50", 1e50, "float64"),
    ("1e-40", 1e-40, "float64"),
    ("2**-126", 2.0**-126, "float32"),
    ("inf", np.inf, "float32"),
    ("-inf", -np.inf, "float32"),
]


@pytest.mark.parametrize("case, value, dtype", LITERALS)
def test_assigned_literal_type_and_value(case, value, dtype):
    out = poisoned(1, dtype)
    _literal_kernel[(1,)](out, CASE=case, EXPECTED=tl_dtype(dtype))
    expected = (
        np.array([value], dtype=object).astype(np_dtype(dtype))
        if dtype != "float32"
        else np.array([value], np.float64).astype(np.float32)
    )
    assert_exact(out, expected)


@naiad.jit
def _too_big_literal_kernel(out_ptr):
    x = 2**64
    tl.store(out_ptr, x)


def test_literal_beyond_64_bits_raises():
    with kernel_error("2\\*\\*64|18446744073709551616"):
        _too_big_literal_kernel[(1,)](poisoned(1, "uint64"))


@naiad.jit
def _wrap_kernel(out_ptr, N: tl.constexpr):
    x = 2**31 - 1
    x = x + 1  # int32 + a weak literal: int32, wraps to INT_MIN
    tl.store(out_ptr + 0, x)
    y = 0
    for _ in range(N):
        y += 2**28  # 10 * 2**28 overflows int32
    tl.store(out_ptr + 1, y)
    u = 2**31  # uint32
    u = u + 2**31
    tl.store(out_ptr + 2, u)
    w = 2**40  # int64: no wrap
    w = w * 1024
    tl.store(out_ptr + 3, w)


def test_typed_literals_wrap_around():
    out = poisoned(4, "int64")
    _wrap_kernel[(1,)](out, N=10)
    assert list(out) == [-(2**31), 10 * 2**28 - 2**32, 0, 2**50]


# -------------------------------------------------------------------------------------------------
# constexpr folding
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _constexpr_kernel(out_ptr, BLOCK: tl.constexpr, SCALE: tl.constexpr):
    tl.static_assert(isinstance(BLOCK * 2, tl.constexpr))
    tl.static_assert(BLOCK * 2 == 64)
    tl.static_assert((BLOCK + 1) * 2 - BLOCK // 4 == 58)
    tl.static_assert(BLOCK**2 == 1024 and BLOCK << 1 == 64 and -BLOCK == -32)
    tl.static_assert(BLOCK > 16)
    a: tl.constexpr = BLOCK // 2  # annotated: stays a constexpr
    tl.static_assert(isinstance(a, tl.constexpr))
    r = tl.arange(0, a)  # usable as a shape
    tl.static_assert(r.shape[0] == 16)
    wide = tl.arange(0, BLOCK * 2)  # an expression of constexprs is one too
    tl.static_assert(wide.shape[0] == 64)
    b = BLOCK // 2  # a plain assignment makes a tensor (Triton's `_sanitize_value`)
    tl.static_assert(isinstance(b, tl.tensor))
    tl.static_assert(b.dtype == tl.int32)
    if BLOCK > 16:  # a constexpr condition is resolved at compile time
        c = 1
    else:
        c = 2.0
    tl.static_assert(c.dtype == tl.int32)
    tl.store(out_ptr + tl.arange(0, 64), wide * SCALE + b * 0 + c)


def test_constexpr_folding():
    out = poisoned(64, "float64")
    _constexpr_kernel[(1,)](out, BLOCK=32, SCALE=0.5)
    # wide (int32) * 0.5 is fp32 (a float scalar outranks an int tensor); + ints stays fp32
    assert_exact(out, (np.arange(64) * 0.5 + 1).astype(np.float64))


@naiad.jit
def _constexpr_scalar_kernel(x_ptr, out_ptr, N: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    z = x * C  # a constexpr operand is a weak Python scalar
    tl.static_assert(z.dtype == x.dtype)
    tl.store(out_ptr + offs, z)


def test_constexpr_float_is_exact_with_fp64_tensors():
    x = np.array([1.0, 3.0, 7.0, -2.5], np.float64)
    out = poisoned(4, "float64")
    _constexpr_scalar_kernel[(1,)](x, out, N=4, C=0.1)
    assert_exact(out, x * 0.1)  # the double 0.1, not 0.1 rounded to fp32


def test_constexpr_int_out_of_range_for_the_tensor_raises():
    x = np.ones(4, np.int8)
    _constexpr_scalar_kernel[(1,)](x, poisoned(4, "int8"), N=4, C=127)
    with kernel_error("Scalar 300 is out of range for type int8"):
        _constexpr_scalar_kernel[(1,)](x, poisoned(4, "int8"), N=4, C=300)


@naiad.jit
def _dtype_constexpr_kernel(out_ptr, N: tl.constexpr, DTYPE: tl.constexpr):
    z = tl.full([N], 2, DTYPE)
    tl.static_assert(z.dtype == DTYPE)
    tl.static_assert(DTYPE == z.dtype)  # noqa: SIM300  (the constexpr on the left, too)
    tl.static_assert(not (z.dtype != DTYPE))  # noqa: SIM202  (`!=` against a constexpr dtype)
    tl.store(out_ptr + tl.arange(0, N), z)


@pytest.mark.parametrize("dtype", ("int8", "uint64", "float16", "bfloat16", "float64"))
def test_dtype_constexpr_compares_with_tensor_dtype(dtype):
    out = poisoned(8, dtype)
    _dtype_constexpr_kernel[(1,)](out, N=8, DTYPE=tl_dtype(dtype))
    assert_exact(out, np.full(8, 2, np_dtype(dtype)))


# -------------------------------------------------------------------------------------------------
# zero is the null value: a Python -0.0 is +0.0 in a kernel (Triton's `scalar_constant`)
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _negative_zero_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.full([N], -0.0, tl.float32))
    tl.store(out_ptr + N + offs, x * -0.0)  # x * (+0.0): +0.0 for positive x
    tl.store(out_ptr + 2 * N + offs, -x)  # a tensor's negation flips the sign bit: -0.0 from +0.0


def test_negative_zero_literal_is_the_null_value():
    x = np.array([1.5, 2.0, 3.0, 0.0], np.float32)
    out = poisoned(12, "float32")
    _negative_zero_kernel[(1,)](x, out, N=4)
    bits = out.view(np.uint32)
    assert list(bits[:8]) == [0] * 8  # no sign bit
    assert bits[11] == 0x80000000 and list(out[8:11]) == [-1.5, -2.0, -3.0]


# -------------------------------------------------------------------------------------------------
# runtime integer arguments
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _int_argument_kernel(out_ptr, n, EXPECTED: tl.constexpr):
    tl.static_assert(n.dtype == EXPECTED, "unexpected argument dtype")
    tl.store(out_ptr, n)


@pytest.mark.parametrize(
    "value, dtype",
    [
        (5, "int32"),
        (-(2**31), "int32"),
        (2**31 - 1, "int32"),
        (2**31, "int64"),
        (-(2**31) - 1, "int64"),
        (2**63 - 1, "int64"),
        (2**63, "uint64"),
        (2**64 - 1, "uint64"),
        (True, "int1"),
    ],
)
def test_integer_argument_types(value, dtype):
    out = poisoned(1, dtype)
    _int_argument_kernel[(1,)](out, value, EXPECTED=tl_dtype(dtype))
    assert int(out[0]) == int(value)


@naiad.jit
def _float_argument_kernel(out_ptr, half: tl.float16, double: tl.float64, single: tl.float32):
    tl.static_assert(half.dtype == tl.float16 and double.dtype == tl.float64)
    tl.static_assert(single.dtype == tl.float32)
    tl.store(out_ptr, half.to(tl.float64))
    tl.store(out_ptr + 1, double)
    tl.store(out_ptr + 2, single.to(tl.float64))


def test_float_arguments_take_their_declared_type():
    """`x: tl.float16` makes the argument an fp16 (rounded once, on the host), fp64 keeps every
    bit, and an int given to a float parameter is a float, not the constant 1 (Triton)."""
    gen = np.random.default_rng(14)
    for _ in range(2):  # the second launch takes the hot path
        half, double = gen.uniform(-100, 100), gen.uniform(-1, 1)
        out = poisoned(3, "float64")
        _float_argument_kernel[(1,)](out, half, double, 1)
        assert out[0] == float(np.float16(half)) and out[1] == double and out[2] == 1.0


@naiad.jit
def _bfloat16_argument_kernel(out_ptr, value: tl.bfloat16):
    tl.static_assert(value.dtype == tl.bfloat16)
    tl.store(out_ptr, value.to(tl.float32))


def test_bfloat16_argument():
    gen = np.random.default_rng(15)
    for _ in range(2):  # the second launch takes the hot path where there is one
        value = gen.uniform(-100, 100)
        out = poisoned(1, "float32")
        _bfloat16_argument_kernel[(1,)](out, value)
        assert out[0] == np.float32(ml_dtypes.bfloat16(value))


@pytest.mark.parametrize("value", (2**64, -(2**63) - 1))
def test_integer_argument_beyond_64_bits_raises(value):
    with pytest.raises(OverflowError):
        _int_argument_kernel[(1,)](poisoned(1, "int64"), value, EXPECTED=tl.int64)


@naiad.jit
def _literal_types_kernel(out_ptr, TUPLE: tl.constexpr):
    named: tl.constexpr = (5, 6, 7)
    tl.static_assert(named.type == (5, 6, 7).type)
    tl.static_assert(TUPLE.type == (5, 6, 7).type)
    tl.static_assert((5, 6, 7).type == tl.tuple_type([(5).type, (6).type, (7).type]))
    tl.static_assert((10).type == tl.constexpr(10).type)
    tl.static_assert((2.5).type != (10).type)
    tl.store(out_ptr, named[1] + (5, 6, 7).__len__())


def test_literals_have_types():
    """A literal's `.type` in a kernel is its constexpr type, a tuple display's the tuple of
    its elements' (Triton's test_constexpr_assignment), for a constexpr tuple too."""
    out = poisoned(1, "int32")
    _literal_types_kernel[(1,)](out, (5, 6, 7))
    assert int(out[0]) == 6 + 3


@naiad.jit
def _declared_constexpr_kernel(out_ptr, x_ptr, SHAPE: tl.constexpr):
    rows: tl.constexpr
    cols: tl.constexpr
    depth: tl.constexpr
    (rows, cols), depth = SHAPE
    scale = depth  # not declared: a tensor, as any assignment of a number
    tl.static_assert(isinstance(rows, tl.constexpr) and isinstance(cols, tl.constexpr))
    tl.static_assert(isinstance(depth, tl.constexpr) and isinstance(scale, tl.tensor))
    offs = tl.arange(0, rows)[:, None] * cols + tl.arange(0, cols)[None, :]
    x = tl.load(x_ptr + offs) * scale  # rows and cols are usable as shapes
    flat = tl.reshape(x, (rows * cols,))
    depth = 5  # the declaration is used up: a plain assignment again
    tl.static_assert(isinstance(depth, tl.tensor))
    tl.store(out_ptr + tl.arange(0, rows * cols), flat + depth)


def test_declared_constexpr_names_keep_unpacked_parts():
    """`d0: tl.constexpr` without a value, then `d0, d1 = SHAPE`: the declared names take their
    parts as constexprs (Triton's pending annotations), nested tuples too; only once."""
    # whole numbers: x * 3 + 5 is exact, fused into one fma (the GPU) or not
    x = np.random.default_rng(12).integers(-1000, 1000, (4, 8)).astype(np.float32)
    out = poisoned(32, "float32")
    _declared_constexpr_kernel[(1,)](out, x, ((4, 8), 3))
    assert_exact(out, (x * np.float32(3) + np.float32(5)).reshape(-1))


class _Tile(NamedTuple):
    rows: tl.constexpr
    cols: tl.constexpr


@naiad.constexpr_function
def _area_tile(tile):
    return _Tile(tile.rows * tile.cols, 1)


@naiad.jit
def _named_tuple_kernel(out_ptr, x_ptr, ROWS: tl.constexpr):
    tile = _area_tile(_Tile(ROWS, 4))  # a NamedTuple reaches the function as one
    tl.static_assert(tile.rows == ROWS * 4 and tile.cols == 1)
    offs = tl.arange(0, tile.rows)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * tile.cols * 2)


def test_named_tuple_through_a_constexpr_function():
    """A NamedTuple made in a kernel keeps its class when a constexpr function unwraps it
    (Triton's test_tuple_constexpr_function reads a field of the result)."""
    x = np.random.default_rng(13).uniform(-2, 2, 8).astype(np.float32)
    out = poisoned(8, "float32")
    _named_tuple_kernel[(1,)](out, x, ROWS=2)
    assert_exact(out, x * np.float32(2))
