"""Signless integers: the op, not the type, says how the bits are read.

Each test runs a signed op and its unsigned twin on the same i32 (or i8, i1) bits and checks
both against NumPy on the matching view, plus the GPU's answers the interpreter defines
(division by zero, shifts past the width, saturating float -> int).
"""

import numpy as np
import pytest
from evaluator_helpers import Kernel, tensor

from naiad.dialects import arith, math, tt
from naiad.ir import f16, f32, i1, i8, i32, i64
from naiad.runtime.evaluator import evaluate

RNG = np.random.default_rng(3)
N = 16


def run_binary(op_class, lhs, rhs, element=i32, result=None, **kwargs):
    """`op_class(lhs, rhs)` elementwise on two tensors of `element`, evaluated."""
    t = tensor([N], element)
    k = Kernel("k", [t, t], [result or t])
    out = k.op(op_class, *kwargs.pop("first", ()), *k.args, **kwargs)
    [(value,)] = evaluate(k.ret(out), "k", [lhs, rhs])
    return value


def run_unary(op_class, x, source, target, **kwargs):
    k = Kernel("k", [tensor([N], source)], [tensor([N], target)])
    out = k.op(op_class, k.args[0], out=tensor([N], target), **kwargs)
    [(value,)] = evaluate(k.ret(out), "k", [x])
    return value


def bits(n=N):
    values = RNG.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    values[:4] = [-1, -(2**31), 7, 0]
    return values


def test_division_reads_bits_as_the_op_says():
    a, b = bits(), bits()
    b[b == 0] = 3
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    signed = run_binary(arith.DivSIOp, a, b)
    np.testing.assert_array_equal(signed, np.trunc(a.astype(np.float64) / b).astype(np.int32))
    np.testing.assert_array_equal(run_binary(arith.DivUIOp, a, b).view(np.uint32), ua // ub)
    np.testing.assert_array_equal(run_binary(arith.RemUIOp, a, b).view(np.uint32), ua % ub)
    np.testing.assert_array_equal(run_binary(arith.RemSIOp, a, b), np.fmod(a, b))


def test_division_by_zero_and_overflow_follow_the_gpu():
    a = np.array([5, -5, 0, -(2**31)] * 4, np.int32)
    b = np.array([0, 0, 0, -1] * 4, np.int32)
    assert list(run_binary(arith.DivSIOp, a, b)[:4]) == [-1, -1, -1, -(2**31)]
    assert list(run_binary(arith.DivUIOp, a, b).view(np.uint32)[:3]) == [2**32 - 1] * 3
    assert list(run_binary(arith.RemSIOp, a, b)[:4]) == [5, -5, 0, 0]


def test_comparisons_ult_and_slt_differ_on_negative_bits():
    a, b = bits(), bits()
    for predicate, view, fn in (
        ("slt", np.int32, np.less),
        ("ult", np.uint32, np.less),
        ("sge", np.int32, np.greater_equal),
        ("ugt", np.uint32, np.greater),
        ("eq", np.int32, np.equal),
    ):
        got = run_binary(arith.CmpIOp, a, b, result=tensor([N], i1), first=(predicate,))
        np.testing.assert_array_equal(got, fn(a.view(view), b.view(view)), err_msg=predicate)


def test_min_max_and_shifts():
    a, b = bits(), bits()
    np.testing.assert_array_equal(run_binary(arith.MaxSIOp, a, b), np.maximum(a, b))
    got = run_binary(arith.MinUIOp, a, b).view(np.uint32)
    np.testing.assert_array_equal(got, np.minimum(a.view(np.uint32), b.view(np.uint32)))
    amounts = np.array([0, 1, 31, 32, 33, 4, 100, 2] * 2, np.int32)
    logical = run_binary(arith.ShRUIOp, a, amounts).view(np.uint32)
    arithmetic = run_binary(arith.ShRSIOp, a, amounts)
    big = amounts >= 32
    safe = np.where(big, 0, amounts)
    np.testing.assert_array_equal(logical, np.where(big, 0, a.view(np.uint32) >> safe))
    np.testing.assert_array_equal(arithmetic, np.where(big, np.where(a < 0, -1, 0), a >> safe))


def test_extensions_and_truncation():
    x = np.array([-1, -128, 127, 5] * 4, np.int8)
    np.testing.assert_array_equal(run_unary(arith.ExtSIOp, x, i8, i32), x.astype(np.int32))
    unsigned = run_unary(arith.ExtUIOp, x, i8, i32)
    np.testing.assert_array_equal(unsigned, x.view(np.uint8).astype(np.int32))
    wide = bits()
    np.testing.assert_array_equal(run_unary(arith.TruncIOp, wide, i32, i8), wide.astype(np.int8))
    low_bit = run_unary(arith.TruncIOp, wide, i32, i1)
    np.testing.assert_array_equal(low_bit, (wide & 1).astype(bool))
    flags = np.array([True, False] * 8)
    np.testing.assert_array_equal(run_unary(arith.ExtUIOp, flags, i1, i32), flags.astype(np.int32))
    np.testing.assert_array_equal(run_unary(arith.ExtSIOp, flags, i1, i32), -flags.astype(np.int32))


def test_int_float_conversions_read_signedness():
    x = bits()
    np.testing.assert_array_equal(run_unary(arith.SIToFPOp, x, i32, f32), x.astype(np.float32))
    unsigned = run_unary(arith.UIToFPOp, x, i32, f32)
    np.testing.assert_array_equal(unsigned, x.view(np.uint32).astype(np.float32))
    f = np.array([-1.5, 3e9, -3e9, np.nan, 7.9, 300.0, -0.5, 1e20] * 2, np.float32)
    signed = run_unary(arith.FPToSIOp, f, f32, i32)
    assert list(signed[:8]) == [-1, 2**31 - 1, -(2**31), 0, 7, 300, 0, 2**31 - 1]
    as_unsigned = run_unary(arith.FPToUIOp, f, f32, i32).view(np.uint32)
    assert list(as_unsigned[:8]) == [0, 3_000_000_000, 0, 0, 7, 300, 0, 2**32 - 1]
    small = run_unary(arith.FPToSIOp, f, f32, i8)
    assert small[5] == 44  # the low byte of the 16-bit conversion, as `cvt.rzi` on the GPU


def test_float_conversions_round_as_asked():
    x = np.array([1 + 2**-11 + 2**-13, -(1 + 2**-11 + 2**-13), 70000.0, np.inf] * 4, np.float32)
    nearest = run_unary(arith.TruncFOp, x, f32, f16)
    assert list(nearest[:4]) == [np.float16(1 + 2**-10), np.float16(-(1 + 2**-10)), np.inf, np.inf]
    k = Kernel("k", [tensor([N], f32)], [tensor([N], f16)])
    out = k.op(tt.FpToFpOp, k.args[0], rounding="rtz", result=tensor([N], f16))
    [(toward_zero,)] = evaluate(k.ret(out), "k", [x])
    assert list(toward_zero[:3]) == [1.0, -1.0, np.float16(65504)]
    widened = run_unary(arith.ExtFOp, nearest, f16, f32)
    np.testing.assert_array_equal(widened, nearest.astype(np.float32))


def test_bitcast_keeps_bits():
    x = RNG.standard_normal(N).astype(np.float32)
    np.testing.assert_array_equal(run_unary(arith.BitcastOp, x, f32, i32), x.view(np.int32))


@pytest.mark.parametrize("element, dtype", [(i8, np.int8), (i64, np.int64)])
def test_wrap_around_arithmetic(element, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, -1, 3] * 4, dtype)
    b = np.array([1, -1, info.min, 5] * 4, dtype)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run_binary(arith.AddIOp, a, b, element), a + b)
        np.testing.assert_array_equal(run_binary(arith.MulIOp, a, b, element), a * b)


def test_unsigned_high_product_and_bit_counts():
    a, b = bits(), bits()
    got = run_binary(tt.MulhiUIOp, a, b).view(np.uint32)
    wide = a.view(np.uint32).astype(np.uint64) * b.view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(got, (wide >> np.uint64(32)).astype(np.uint32))
    t = tensor([N], i32)
    k = Kernel("k", [t], [t, t, t])
    (x,) = k.args
    module = k.ret(
        *(k.op(c, x) for c in (math.CtPopOp, math.CountLeadingZerosOp, math.CountTrailingZerosOp))
    )
    [(pop, lz, tz)] = evaluate(module, "k", [a])
    u = a.view(np.uint32)
    np.testing.assert_array_equal(pop, [bin(v).count("1") for v in u])
    np.testing.assert_array_equal(lz, [32 - int(v).bit_length() for v in u])
    np.testing.assert_array_equal(
        tz, [32 if v == 0 else (int(v) & -int(v)).bit_length() - 1 for v in u]
    )


def test_rounded_divisions():
    a = np.array([7, -7, 7, -7, 6, -6, 0, 2**31 - 1] * 2, np.int32)
    b = np.array([2, 2, -2, -2, 3, 3, 5, 2] * 2, np.int32)
    floor = run_binary(arith.FloorDivSIOp, a, b)
    np.testing.assert_array_equal(floor, a.astype(np.int64) // b)
    ceil = run_binary(arith.CeilDivSIOp, a, b)
    np.testing.assert_array_equal(ceil, -(-a.astype(np.int64) // b))
    ua, ub = a.view(np.uint32).astype(np.uint64), b.view(np.uint32).astype(np.uint64)
    ceil_u = run_binary(arith.CeilDivUIOp, a, b).view(np.uint32)
    np.testing.assert_array_equal(ceil_u, (ua + ub - np.uint64(1)) // ub)


def test_unordered_float_comparisons_and_classes():
    a = np.array([1.0, np.nan, 2.0, np.inf] * 4, np.float32)
    b = np.array([1.0, 1.0, np.nan, 3.0] * 4, np.float32)
    for predicate, expected in (
        ("ueq", [True, True, True, False]),
        ("ult", [False, True, True, False]),
        ("uge", [True, True, True, True]),
        ("one", [False, False, False, True]),
        ("true", [True] * 4),
    ):
        got = run_binary(arith.CmpFOp, a, b, f32, result=tensor([N], i1), first=(predicate,))
        assert list(got[:4]) == expected, predicate
    t = tensor([N], f32)
    k = Kernel("k", [t], [tensor([N], i1), tensor([N], i1)])
    module = k.ret(k.op(math.IsNaNOp, k.args[0]), k.op(math.IsInfOp, k.args[0]))
    [(nan, inf)] = evaluate(module, "k", [a])
    np.testing.assert_array_equal(nan, np.isnan(a))
    np.testing.assert_array_equal(inf, np.isinf(a))


def test_integer_power_wraps():
    base = np.array([3, -2, 1, -1, 5, 0, 2, 7] * 2, np.int32)
    exponent = np.array([4, 3, -5, -3, -1, 0, 31, 20] * 2, np.int32)
    got = run_binary(math.IPowIOp, base, exponent)
    expected = [81, -8, 1, -1, 0, 1, -(2**31), (7**20 + 2**31) % 2**32 - 2**31]
    assert list(got[:8]) == expected
