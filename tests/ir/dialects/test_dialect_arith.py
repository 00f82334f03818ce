"""`arith`: construction with inferred result types, verifier rules, and constant folding
(wrap-around, what is left to run time, NaN and signed zeros, every predicate)."""

import math

import pytest
from dialect_helpers import arg, args, const, fails, folded, folded_value, tensor

from naiad.dialects import arith
from naiad.ir import (
    BoolAttr,
    DenseElementsAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    VerificationError,
    apply_patterns_greedily,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
    index,
    verify,
)

INT_BINARY = [
    arith.AddIOp, arith.SubIOp, arith.MulIOp, arith.DivSIOp, arith.DivUIOp, arith.CeilDivSIOp,
    arith.CeilDivUIOp, arith.FloorDivSIOp, arith.RemSIOp, arith.RemUIOp, arith.AndIOp,
    arith.OrIOp, arith.XOrIOp, arith.ShLIOp, arith.ShRSIOp, arith.ShRUIOp, arith.MaxSIOp,
    arith.MaxUIOp, arith.MinSIOp, arith.MinUIOp,
]  # fmt: skip
FLOAT_BINARY = [
    arith.AddFOp, arith.SubFOp, arith.MulFOp, arith.DivFOp, arith.RemFOp, arith.MaximumFOp,
    arith.MinimumFOp, arith.MaxNumFOp, arith.MinNumFOp,
]  # fmt: skip


@pytest.mark.parametrize("cls", INT_BINARY, ids=lambda c: c.name)
def test_integer_binary_ops_take_the_lhs_type(cls):
    for t in (i32, tensor([4, 8], i64)):
        a, b = args(t, t)
        op = cls(a, b)
        assert op.result.type is t
        verify(op)


@pytest.mark.parametrize("cls", FLOAT_BINARY, ids=lambda c: c.name)
def test_float_binary_ops_take_the_lhs_type(cls):
    a, b = args(f16, f16)
    op = cls(a, b)
    assert op.result.type is f16
    verify(op)


def test_binary_ops_need_one_type():
    a, b = args(i32, i64)
    fails(arith.AddIOp(a, b), "requires the same type for all operands and results")
    x, y = args(f32, f32)
    fails(arith.AddIOp(x, y), "must be signless-integer-like")
    fails(arith.AddFOp(*args(i32, i32)), "must be floating-point-like")


def test_elementwise_shapes():
    a, b = args(tensor([4], i32), tensor([8], i32))
    fails(arith.AddIOp(a, b, result=tensor([4], i32)), "must have the same shape and base type")


def test_overflow_and_fastmath_attributes():
    a, b = args(i32, i32)
    op = arith.AddIOp(a, b, overflowFlags=arith.IntegerOverflowFlagsAttr("nsw"))
    verify(op)
    x, y = args(f32, f32)
    verify(arith.MulFOp(x, y, fastmath=arith.FastMathFlagsAttr("fast")))


def test_constant_takes_the_type_of_its_value():
    op = arith.ConstantOp(IntegerAttr(7, i8))
    assert op.result.type is i8
    verify(op)
    bad = arith.ConstantOp(IntegerAttr(7, i8), result=i32)
    fails(bad, "all of {value, result} have same type")
    fails(arith.ConstantOp(arith.FastMathFlagsAttr(0), result=i32), "must be an integer, float")


# -- integer folding


def fold2(cls, a, b, t=i32):
    return folded_value(cls(const(a, t), const(b, t)))


def test_integer_folds_wrap_around():
    assert fold2(arith.AddIOp, 2**31 - 1, 1) == -(2**31)
    assert fold2(arith.MulIOp, 1 << 20, 1 << 20) == 0
    assert fold2(arith.SubIOp, -(2**31), 1) == 2**31 - 1
    assert fold2(arith.AddIOp, 127, 1, i8) == -128
    assert fold2(arith.AddIOp, 1, 1, i1) is False


def test_division_by_zero_and_overflow_are_not_folded():
    for cls in (
        arith.DivSIOp,
        arith.DivUIOp,
        arith.RemSIOp,
        arith.RemUIOp,
        arith.CeilDivSIOp,
        arith.CeilDivUIOp,
        arith.FloorDivSIOp,
    ):
        assert fold2(cls, 7, 0) is None
    assert fold2(arith.DivSIOp, -(2**31), -1) is None
    assert fold2(arith.FloorDivSIOp, -(2**31), -1) is None
    assert fold2(arith.RemSIOp, -(2**31), -1) == 0


def test_signed_and_unsigned_division_round_as_c_does():
    assert fold2(arith.DivSIOp, -7, 2) == -3
    assert fold2(arith.RemSIOp, -7, 2) == -1
    assert fold2(arith.FloorDivSIOp, -7, 2) == -4
    assert fold2(arith.CeilDivSIOp, 7, 2) == 4
    assert fold2(arith.CeilDivSIOp, -7, 2) == -3
    assert fold2(arith.DivUIOp, -2, 2) == 2**31 - 1
    assert fold2(arith.RemUIOp, -1, 10) == (2**32 - 1) % 10
    assert fold2(arith.CeilDivUIOp, 7, 2) == 4


def test_shifts_fold_below_the_bit_width_only():
    assert fold2(arith.ShLIOp, 1, 31) == -(2**31)
    assert fold2(arith.ShLIOp, 1, 32) is None
    assert fold2(arith.ShRSIOp, -8, 1) == -4
    assert fold2(arith.ShRUIOp, -8, 28) == 15
    assert fold2(arith.ShRUIOp, 1, -1) is None  # -1 is 2**32 - 1 as a shift amount


def test_bitwise_and_min_max():
    assert fold2(arith.AndIOp, 0b1100, 0b1010) == 0b1000
    assert fold2(arith.OrIOp, 0b1100, 0b1010) == 0b1110
    assert fold2(arith.XOrIOp, -1, 5) == -6
    assert fold2(arith.MaxSIOp, -1, 1) == 1
    assert fold2(arith.MaxUIOp, -1, 1) == -1  # 0xFFFFFFFF, printed signed
    assert fold2(arith.MinUIOp, -1, 1) == 1


def test_tensor_constants_fold_elementwise():
    t = tensor([4], i32)
    op = arith.AddIOp(const([1, 2, 3, 2**31 - 1], t), const(1, t))
    assert folded_value(op) == [2, 3, 4, -(2**31)]
    splat = folded(arith.MulIOp(const(3, t), const(5, t)))
    assert isinstance(splat, DenseElementsAttr) and splat.is_splat and splat.splat_value == 15


def test_integer_identities_fold_to_an_operand():
    x = arg(i32)
    zero, one, ones = const(0, i32), const(1, i32), const(-1, i32)
    assert folded(arith.AddIOp(x, zero)) is x
    assert folded(arith.AddIOp(zero, x)) is x
    assert folded(arith.SubIOp(x, zero)) is x
    assert folded(arith.SubIOp(x, x)) is IntegerAttr(0, i32)
    assert folded(arith.MulIOp(x, one)) is x
    assert folded(arith.MulIOp(zero, x)) is IntegerAttr(0, i32)
    assert folded(arith.DivSIOp(x, one)) is x
    assert folded(arith.RemUIOp(x, one)) is IntegerAttr(0, i32)
    assert folded(arith.AndIOp(x, ones)) is x
    assert folded(arith.OrIOp(x, ones)) is IntegerAttr(-1, i32)
    assert folded(arith.XOrIOp(x, x)) is IntegerAttr(0, i32)
    assert folded(arith.MaxSIOp(x, x)) is x
    assert folded(arith.ShRSIOp(x, zero)) is x
    assert folded(arith.DivSIOp(x, zero)) is None


# -- float folding


def ffold(cls, a, b, t=f32):
    return folded_value(cls(const(a, t), const(b, t)))


def test_float_folds_round_to_the_op_type():
    assert ffold(arith.AddFOp, 1.0, 2.0**-30) == 1.0  # below f32's half ulp
    assert ffold(arith.AddFOp, 1.0, 2.0**-30, f64) == 1.0 + 2.0**-30
    assert ffold(arith.DivFOp, 1.0, 3.0) == float.fromhex("0x1.555556p-2")
    assert ffold(arith.MulFOp, 300.0, 300.0, f16) == math.inf
    assert ffold(arith.AddFOp, 1.0, 1.0 / 512, bf16) == 1.0


def test_float_division_by_zero_and_nan():
    assert ffold(arith.DivFOp, 1.0, 0.0) == math.inf
    assert ffold(arith.DivFOp, -1.0, 0.0) == -math.inf
    assert ffold(arith.DivFOp, 1.0, -0.0) == -math.inf
    assert math.isnan(ffold(arith.DivFOp, 0.0, 0.0))
    assert math.isnan(ffold(arith.RemFOp, 1.0, 0.0))
    assert ffold(arith.RemFOp, -7.0, 2.0) == -1.0
    assert math.isnan(ffold(arith.AddFOp, math.inf, -math.inf))


def test_min_max_nan_and_signed_zero():
    nan = math.nan
    assert math.isnan(ffold(arith.MaximumFOp, nan, 1.0))
    assert math.isnan(ffold(arith.MinimumFOp, 1.0, nan))
    assert ffold(arith.MaxNumFOp, nan, 1.0) == 1.0
    assert ffold(arith.MinNumFOp, 2.0, nan) == 2.0
    assert math.copysign(1, ffold(arith.MaximumFOp, -0.0, 0.0)) == 1
    assert math.copysign(1, ffold(arith.MinimumFOp, 0.0, -0.0)) == -1


def test_negf_flips_the_sign_of_zero():
    assert math.copysign(1, folded_value(arith.NegFOp(const(0.0, f32)))) == -1
    x = arg(f32)
    assert folded(arith.NegFOp(arith.NegFOp(x).result)) is x


def test_float_identities_respect_signed_zero():
    x = arg(f32)
    assert folded(arith.AddFOp(x, const(-0.0, f32))) is x
    assert folded(arith.AddFOp(x, const(0.0, f32))) is None  # -0.0 + 0.0 is +0.0
    assert folded(arith.SubFOp(x, const(0.0, f32))) is x
    assert folded(arith.MulFOp(const(1.0, f32), x)) is x
    assert folded(arith.DivFOp(x, const(1.0, f32))) is x


# -- comparisons and select

CMPI = {
    "eq": (False, True), "ne": (True, False), "slt": (True, False), "sle": (True, True),
    "sgt": (False, False), "sge": (False, True), "ult": (False, False), "ule": (False, True),
    "ugt": (True, False), "uge": (True, True),
}  # fmt: skip


@pytest.mark.parametrize("predicate", CMPI)
def test_cmpi_predicates(predicate):
    """-1 against 1 (signed less, unsigned greater), and a value against itself."""
    lt, same = CMPI[predicate]
    assert folded_value(arith.CmpIOp(predicate, const(-1, i32), const(1, i32))) is lt
    x = arg(i32)
    assert folded_value(arith.CmpIOp(predicate, x, x)) is same


CMPF = {  # (1 < 2, 1 == 1, NaN involved)
    "false": (False, False, False), "oeq": (False, True, False), "ogt": (False, False, False),
    "oge": (False, True, False), "olt": (True, False, False), "ole": (True, True, False),
    "one": (True, False, False), "ord": (True, True, False), "ueq": (False, True, True),
    "ugt": (False, False, True), "uge": (False, True, True), "ult": (True, False, True),
    "ule": (True, True, True), "une": (True, False, True), "uno": (False, False, True),
    "true": (True, True, True),
}  # fmt: skip


@pytest.mark.parametrize("predicate", CMPF)
def test_cmpf_predicates(predicate):
    less, equal, with_nan = CMPF[predicate]
    one, two, nan = const(1.0, f32), const(2.0, f32), const(math.nan, f32)
    assert folded_value(arith.CmpFOp(predicate, one, two)) is less
    assert folded_value(arith.CmpFOp(predicate, one, one)) is equal
    assert folded_value(arith.CmpFOp(predicate, nan, one)) is with_nan


def test_compare_results_are_i1_of_the_operand_shape():
    a, b = args(tensor([4, 4], f32), tensor([4, 4], f32))
    op = arith.CmpFOp("olt", a, b)
    assert op.result.type is tensor([4, 4], i1)
    assert op.predicate is arith.CmpFPredicate.get("olt") and op.predicate_name == "olt"
    verify(op)
    fails(arith.CmpIOp("eq", *args(i32, i64)), "requires all operands to have the same type")
    c, d = args(i32, i32)
    fails(arith.CmpIOp("eq", c, d, result=i32), "must be bool-like")
    e, f = args(tensor([2], i32, StringAttr("a")), tensor([2], i32, StringAttr("a")))
    bad = arith.CmpIOp("eq", e, f, result=tensor([2], i1, StringAttr("b")))
    fails(bad, "i1 element type and same shape")


def test_cmpi_folds_tensors():
    t = tensor([3], i32)
    op = arith.CmpIOp("slt", const([1, 5, -3], t), const(2, t))
    assert folded_value(op) == [True, False, True]


def test_select():
    c, a, b = args(i1, f32, f32)
    op = arith.SelectOp(c, a, b)
    assert op.result.type is f32
    verify(op)
    assert folded(arith.SelectOp(const(True, i1), a, b)) is a
    assert folded(arith.SelectOp(const(False, i1), a, b)) is b
    assert folded(arith.SelectOp(c, a, a)) is a
    assert folded(arith.SelectOp(c, const(True, i1), const(False, i1))) is c
    t = tensor([4], f32)
    cond = const([True, False, True, False], tensor([4], i1))
    assert folded_value(arith.SelectOp(cond, const(1.0, t), const(2.0, t))) == [1, 2, 1, 2]
    x, y = args(t, t)
    assert folded(arith.SelectOp(const(True, tensor([4], i1)), x, y)) is x
    fails(arith.SelectOp(arg(tensor([2], i1)), x, y), "must have the same shape and base type")
    fails(arith.SelectOp(c, a, arg(f16)), "true_value, false_value, result} have same type")


# -- casts


def cast(cls, value, source, target):
    return folded_value(cls(const(value, source), out=target))


def test_integer_casts():
    assert cast(arith.ExtSIOp, -1, i8, i32) == -1
    assert cast(arith.ExtUIOp, -1, i8, i32) == 255
    assert cast(arith.ExtSIOp, True, i1, i32) == -1
    assert cast(arith.ExtUIOp, True, i1, i32) == 1
    assert cast(arith.TruncIOp, 0x1FF, i32, i8) == -1
    assert cast(arith.IndexCastOp, -2, i32, index) == -2
    assert cast(arith.IndexCastUIOp, -2, i32, index) == 2**32 - 2
    fails(arith.ExtSIOp(arg(i32), out=i32), "must be wider than operand type")
    fails(arith.TruncIOp(arg(i32), out=i64), "must be shorter than operand type")
    fails(arith.IndexCastOp(arg(i32), out=i64), "cast incompatible")


def test_float_casts():
    assert cast(arith.ExtFOp, 0.1, f16, f32) == float.fromhex("0x1.998p-4")
    assert cast(arith.TruncFOp, 1.0 + 2.0**-11, f32, f16) == 1.0  # a tie: to even
    assert cast(arith.TruncFOp, 1e6, f32, f16) == math.inf
    up = arith.TruncFOp(const(0.1, f32), out=f16, roundingmode=arith.RoundingMode.get("upward"))
    assert folded(up) is None
    fails(arith.ExtFOp(arg(f32), out=f16), "must be wider")
    fails(arith.TruncFOp(arg(f16), out=f32), "must be shorter")


def test_int_to_float_rounds_once():
    big = 2**62 + 2**38 + 1  # f64 rounding first would make a tie, then round to even
    assert cast(arith.SIToFPOp, big, i64, f32) == float(2**62 + 2**39)
    assert cast(arith.SIToFPOp, -3, i32, f32) == -3.0
    assert cast(arith.UIToFPOp, -1, i32, f32) == 2.0**32
    assert cast(arith.SIToFPOp, 65520, i32, f16) == math.inf


def test_float_to_int_leaves_undefined_cases_to_the_target():
    assert cast(arith.FPToSIOp, -2.9, f32, i32) == -2
    assert cast(arith.FPToSIOp, math.nan, f32, i32) is None
    assert cast(arith.FPToSIOp, 3e9, f32, i32) is None
    assert cast(arith.FPToSIOp, -128.5, f32, i8) == -128
    assert cast(arith.FPToUIOp, 255.9, f32, i8) == -1  # 255 as an i8 attribute
    assert cast(arith.FPToUIOp, -1.0, f32, i8) is None
    assert cast(arith.FPToUIOp, -0.5, f32, i8) == 0


def test_bitcast():
    assert cast(arith.BitcastOp, 1.0, f32, i32) == 0x3F800000
    assert cast(arith.BitcastOp, -(2**31), i32, f32) == -0.0
    assert cast(arith.BitcastOp, 0x3C00, i16, f16) == 1.0
    fails(arith.BitcastOp(arg(f32), out=i64), "cast incompatible")


def test_casts_of_tensors_keep_the_shape():
    t = tensor([2, 2], i32)
    op = arith.SIToFPOp(arg(t), out=tensor([2, 2], f32))
    verify(op)
    fails(arith.SIToFPOp(arg(t), out=tensor([4], f32)), "must have the same shape")


# -- the materializer, through the greedy driver


def test_folding_a_chain_materializes_arith_constants():
    from naiad.dialects import tt
    from naiad.ir import FunctionType

    func = tt.FuncOp("f", FunctionType([], [i32]))
    block = func.entry_block
    a = block.append(arith.ConstantOp(IntegerAttr(20, i32))).result
    b = block.append(arith.ConstantOp(IntegerAttr(22, i32))).result
    s = block.append(arith.AddIOp(a, b)).result
    m = block.append(arith.MulIOp(s, block.append(arith.ConstantOp(IntegerAttr(2, i32))).result))
    block.append(tt.ReturnOp([m.result]))
    module = ModuleOp([func])
    assert apply_patterns_greedily(module, [])
    ops = list(func.entry_block)
    assert [op.name for op in ops] == ["arith.constant", "tt.return"]
    assert ops[0].value is IntegerAttr(84, i32)
    verify(module)


def test_materializer_refuses_foreign_attributes():
    assert arith.materialize_constant(BoolAttr(True), i1, None).result.type is i1
    assert arith.materialize_constant(IntegerAttr(1, i32), i64, None) is None
    with pytest.raises(VerificationError):
        verify(arith.ConstantOp(IntegerAttr(1, i32), result=i64))
