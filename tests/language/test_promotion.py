"""Type promotion: the dtype every binary operator computes in, for every pair of dtypes.

Triton's `computation_type_impl` (semantic.py): fp64 wins, then fp32, then fp16 (fp32 for `/`
and `%`), bf16 only with bf16 (fp32 for `/` and `%`), then C's usual arithmetic conversions for
integers (int1 counts as unsigned); `/`, `//`, `%` refuse mixed signedness. A Python scalar of a
kind (bool < int < float) not above the tensor's does not take part. The dtype is read inside the
kernel with `tl.static_assert(z.dtype == RESULT)`; values are the other files' business.
"""

import numpy as np
import pytest
from dtype_tables import DTYPES_WITH_BOOL, INT_DTYPES, UINT_DTYPES, np_dtype, tl_dtype
from helpers import apply_binary, kernel_error
from promotion import DifferentSignedness, promoted, result_dtype

import naiad
import naiad.language as tl

ARITH_OPS = ("+", "-", "*", "/", "//", "%")
COMPARE_OPS = ("<", "<=", ">", ">=", "==", "!=")
BITWISE_OPS = ("&", "|", "^", "<<", ">>")


@naiad.jit
def _typing_kernel(x_ptr, y_ptr, OP: tl.constexpr, RESULT: tl.constexpr):
    z = apply_binary(tl.load(x_ptr + tl.arange(0, 2)), tl.load(y_ptr + tl.arange(0, 2)), OP)
    tl.static_assert(z.dtype == RESULT, "unexpected result dtype")


def _ones(dtype):
    return np.ones(2, np_dtype(dtype))


# Hand-checked rows: C's usual arithmetic conversions and Triton's float rules (the overrides of
# Triton's `_binary_op_dtype_override`, where Triton differs from NumPy, are all here).
KNOWN = {
    ("int8", "uint8"): "uint8",
    ("int8", "uint16"): "uint16",
    ("int8", "uint32"): "uint32",
    ("int8", "uint64"): "uint64",
    ("int16", "uint16"): "uint16",
    ("int16", "uint32"): "uint32",
    ("int16", "uint64"): "uint64",
    ("int32", "uint32"): "uint32",
    ("int32", "uint64"): "uint64",
    ("int64", "uint64"): "uint64",
    ("int16", "uint8"): "int16",
    ("int64", "uint32"): "int64",
    ("uint32", "int64"): "int64",
    ("uint8", "int8"): "uint8",
    ("int8", "int64"): "int64",
    ("uint16", "uint64"): "uint64",
    ("float16", "int16"): "float16",
    ("float16", "int64"): "float16",
    ("float16", "uint64"): "float16",
    ("bfloat16", "int8"): "float32",
    ("bfloat16", "uint64"): "float32",
    ("bfloat16", "bfloat16"): "bfloat16",
    ("bfloat16", "float16"): "float16",
    ("float16", "bfloat16"): "float16",
    ("bfloat16", "float32"): "float32",
    ("float16", "float32"): "float32",
    ("float32", "float64"): "float64",
    ("int64", "float32"): "float32",
    ("uint64", "float64"): "float64",
    ("int1", "int1"): "int1",
    ("int1", "int8"): "int8",
    ("int1", "uint8"): "uint8",
    ("int1", "float16"): "float16",
    ("int1", "bfloat16"): "float32",
}


@pytest.mark.parametrize("a, b", sorted(KNOWN))
def test_known_promotions(a, b):
    assert promoted(a, b) == KNOWN[a, b]  # the reference agrees with the hand-checked table
    _typing_kernel[(1,)](_ones(a), _ones(b), OP="+", RESULT=tl_dtype(KNOWN[a, b]))


@pytest.mark.parametrize(
    "a, b, op, result",
    [
        ("float16", "float16", "/", "float32"),
        ("float16", "float16", "%", "float32"),
        ("bfloat16", "bfloat16", "/", "float32"),
        ("bfloat16", "bfloat16", "%", "float32"),
        ("float16", "int8", "/", "float32"),
        ("bfloat16", "float16", "/", "float32"),
        ("int8", "int8", "/", "float32"),
        ("int64", "int64", "/", "float32"),
        ("uint64", "uint64", "/", "float32"),
        ("int1", "int1", "/", "float32"),
        ("float64", "int8", "/", "float64"),
        ("int8", "int16", "//", "int16"),
        ("uint8", "uint32", "%", "uint32"),
        ("float16", "float16", "*", "float16"),
    ],
)
def test_division_promotions(a, b, op, result):
    assert result_dtype(op, a, b) == result
    _typing_kernel[(1,)](_ones(a), _ones(b), OP=op, RESULT=tl_dtype(result))


@pytest.mark.parametrize("op", ARITH_OPS + COMPARE_OPS)
@pytest.mark.parametrize("a", DTYPES_WITH_BOOL)
def test_result_dtype_matrix(op, a):
    """Every (a, b) pair of Triton's 12 dtypes and int1: the dtype, or the TypeError."""
    for b in DTYPES_WITH_BOOL:
        x, y = _ones(a), _ones(b)
        try:
            expected = result_dtype(op, a, b)
        except DifferentSignedness:
            with kernel_error("different signedness", TypeError):
                _typing_kernel[(1,)](x, y, OP=op, RESULT=tl.int1)
            continue
        except TypeError:  # `//` of floats
            with kernel_error("unexpected type", TypeError):
                _typing_kernel[(1,)](x, y, OP=op, RESULT=tl.int1)
            continue
        _typing_kernel[(1,)](x, y, OP=op, RESULT=tl_dtype(expected))


@pytest.mark.parametrize("op", ("&", "|", "^", "<<", ">>"))
@pytest.mark.parametrize("a", ("int1", *INT_DTYPES, *UINT_DTYPES))
def test_bitwise_result_dtype_matrix(op, a):
    """Bitwise operators promote integers by C's rules and refuse floats."""
    for b in DTYPES_WITH_BOOL:
        x, y = _ones(a), _ones(b)
        if b.startswith(("float", "bfloat")):
            with kernel_error("invalid operands of type", TypeError):
                _typing_kernel[(1,)](x, y, OP=op, RESULT=tl.int1)
            with kernel_error("invalid operands of type", TypeError):
                _typing_kernel[(1,)](y, x, OP=op, RESULT=tl.int1)
            continue
        _typing_kernel[(1,)](x, y, OP=op, RESULT=tl_dtype(promoted(a, b)))


# -------------------------------------------------------------------------------------------------
# Python scalars: weak in arithmetic and bitwise operators, typed like literals in comparisons
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _scalar_typing_kernel(
    x_ptr, OP: tl.constexpr, S: tl.constexpr, SCALAR_FIRST: tl.constexpr, RESULT: tl.constexpr
):
    x = tl.load(x_ptr + tl.arange(0, 2))
    if SCALAR_FIRST:
        z = apply_binary(S, x, OP)
    else:
        z = apply_binary(x, S, OP)
    tl.static_assert(z.dtype == RESULT, "unexpected result dtype")


WEAK_SCALAR_CASES = [
    # (tensor, op, scalar, result)
    ("float16", "*", 2.0, "float16"),
    ("float16", "+", 1e50, "float16"),  # fp64 literal, same kind
    ("bfloat16", "+", 1, "bfloat16"),
    ("bfloat16", "-", 0.5, "bfloat16"),
    ("float16", "/", 2.0, "float32"),
    ("bfloat16", "%", 3, "float32"),
    ("float32", "*", 1e300, "float32"),
    ("float64", "+", 1.0, "float64"),
    ("int8", "+", 1, "int8"),
    ("int8", "*", 2**6, "int8"),
    ("uint8", "-", 1, "uint8"),
    ("int16", "//", 3, "int16"),
    ("uint16", "%", 3, "uint16"),
    ("int32", "+", 2**31 - 1, "int32"),
    ("uint32", "+", 2**32 - 1, "uint32"),
    ("int64", "+", 2**40, "int64"),
    ("uint64", "+", 2**63, "uint64"),
    ("int8", "/", 2, "float32"),
    ("int8", "+", True, "int8"),
    ("float32", "+", True, "float32"),
    ("int1", "+", True, "int1"),
    # a scalar of a higher kind takes part in the promotion with its literal type
    ("int8", "+", 1.5, "float32"),
    ("uint64", "*", 0.5, "float32"),
    ("int64", "-", 1e50, "float64"),
    ("int1", "+", 1, "int32"),
    ("int1", "+", 2**40, "int64"),
    ("int1", "*", 0.5, "float32"),
    ("int8", "&", 3, "int8"),
    ("uint8", "|", 255, "uint8"),
    ("int16", "^", -1, "int16"),
    ("uint32", "<<", 3, "uint32"),
    ("int8", ">>", 1, "int8"),
]


@pytest.mark.parametrize("scalar_first", (False, True))
@pytest.mark.parametrize("dtype, op, scalar, result", WEAK_SCALAR_CASES)
def test_python_scalar_is_weak(dtype, op, scalar, result, scalar_first):
    _scalar_typing_kernel[(1,)](
        _ones(dtype), OP=op, S=scalar, SCALAR_FIRST=scalar_first, RESULT=tl_dtype(result)
    )


@pytest.mark.parametrize("scalar_first", (False, True))
@pytest.mark.parametrize(
    "dtype, op, scalar",
    [
        ("int8", "<", 300),
        ("uint8", ">", -1),
        ("int8", "==", 1),
        ("float16", "<", 0.1),
        ("bfloat16", ">=", 1),
        ("float16", "!=", 1e50),
        ("int64", "<=", 2**63),
        ("int1", "==", 1),
        ("uint32", "<", 1.5),
    ],
)
def test_comparison_scalar_takes_its_literal_type(dtype, op, scalar, scalar_first):
    """`tensor.__lt__` & co. make a Python scalar a tensor first (`to_tensor`), so it takes part
    in the promotion with its literal type: `x_int8 < 300` compares in int32 and does not raise,
    `x_fp16 < 0.1` compares in fp32."""
    x = _ones(dtype)
    _scalar_typing_kernel[(1,)](x, OP=op, S=scalar, SCALAR_FIRST=scalar_first, RESULT=tl.int1)


@naiad.jit
def _compare_operand_kernel(x_ptr, z_ptr, S: tl.constexpr, COMPUTE: tl.constexpr):
    # The comparison computes in `COMPUTE`: (x < S) must equal (x.to(COMPUTE) < S.to(COMPUTE)).
    x = tl.load(x_ptr + tl.arange(0, 4))
    c = tl.full([4], S, COMPUTE)
    tl.store(z_ptr + tl.arange(0, 4), (x < S) == (x.to(COMPUTE) < c))


@pytest.mark.parametrize(
    "dtype, scalar, compute",
    [
        ("uint8", -1, "int32"),
        ("int8", 300, "int32"),
        ("float16", 0.1, "float32"),
        ("uint32", 2**31, "uint32"),
        ("int64", 2**63, "uint64"),
    ],
)
def test_comparison_with_scalar_computes_in_promoted_type(dtype, scalar, compute):
    values = {
        "uint8": [0x80, 1, 255, 200],
        "int8": [-128, 1, 127, 100],
        "float16": [0.1, 0.0999, 0.1001, -1],
        "uint32": [2**31, 2**31 - 1, 2**32 - 1, 5],
        "int64": [-1, 1, 2**62, -(2**63)],
    }[dtype]
    x = np.array(values, np_dtype(dtype))
    z = np.zeros(4, bool)
    _compare_operand_kernel[(1,)](x, z, S=scalar, COMPUTE=tl_dtype(compute))
    assert z.all()


@pytest.mark.parametrize(
    "a, b", [("int8", "uint8"), ("uint16", "int32"), ("int64", "uint64"), ("uint8", "int64")]
)
@pytest.mark.parametrize("op", ("/", "//", "%"))
def test_mixed_signedness_message(a, b, op):
    with kernel_error(
        r"Cannot use /, (#|//), or % with .* because they have different signedness", TypeError
    ):
        _typing_kernel[(1,)](_ones(a), _ones(b), OP=op, RESULT=tl.int1)


@naiad.jit
def _source_literal_kernel(h_ptr, i_ptr, u_ptr, d_ptr):
    offs = tl.arange(0, 2)
    h = tl.load(h_ptr + offs)  # fp16
    i = tl.load(i_ptr + offs)  # int8
    u = tl.load(u_ptr + offs)  # uint8
    d = tl.load(d_ptr + offs)  # fp64
    tl.static_assert((h * 2.0).dtype == tl.float16)
    tl.static_assert((2.0 * h).dtype == tl.float16)
    tl.static_assert((h + 1e50).dtype == tl.float16)
    tl.static_assert((h / 2).dtype == tl.float32)
    tl.static_assert((h % 2.0).dtype == tl.float32)
    tl.static_assert((i + 100).dtype == tl.int8)
    tl.static_assert((100 - i).dtype == tl.int8)
    tl.static_assert((1 - u).dtype == tl.uint8)
    tl.static_assert((i * 1.5).dtype == tl.float32)
    tl.static_assert((i / 3).dtype == tl.float32)
    tl.static_assert((d * 0.1).dtype == tl.float64)
    tl.static_assert((i < 300).dtype == tl.int1)
    tl.static_assert((u << 3).dtype == tl.uint8)
    c = 100  # an assigned literal is an int32 tensor: no longer weak
    tl.static_assert((i + c).dtype == tl.int32)


def test_literals_written_in_the_kernel():
    _source_literal_kernel[(1,)](_ones("float16"), _ones("int8"), _ones("uint8"), _ones("float64"))
