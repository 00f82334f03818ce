"""`tt` casts, arithmetic, shape ops and program ids: inferred results, one invalid case per
verifier rule, folders."""

import pytest
from dialect_helpers import arg, args, const, fails, folded, folded_value, tensor

from naiad.dialects import tt
from naiad.ir import (
    DenseElementsAttr,
    IntegerAttr,
    bf16,
    f16,
    f32,
    i1,
    i8,
    i32,
    i64,
    verify,
)
from naiad.ir.types import FloatType

P = tt.ptr(f32)
F8 = FloatType("f8E5M2")


def test_casts():
    verify(tt.IntToPtrOp(arg(i64), result=P))
    verify(tt.PtrToIntOp(arg(tensor([4], P)), result=tensor([4], i64)))
    fails(tt.IntToPtrOp(arg(i32), result=P), "must be 64-bit signless integer")
    verify(tt.BitcastOp(arg(tensor([4], f32)), result=tensor([4], i32)))
    verify(tt.BitcastOp(arg(P), result=tt.ptr(i32)))
    fails(tt.BitcastOp(arg(f32), result=i64), "Cannot bitcast data-type of size 32")
    fails(tt.BitcastOp(arg(i64), result=P), "Cannot bitcast pointer")
    x = arg(f32)
    assert folded(tt.BitcastOp(x, result=f32)) is x


def test_fp_to_fp_needs_rounding_when_narrowing():
    x = arg(tensor([4], f32))
    op = tt.FpToFpOp(x, result=tensor([4], F8), rounding="rtne")
    assert op.rounding is tt.RoundingMode.get("rtne")
    verify(op)
    verify(tt.FpToFpOp(arg(F8), result=f32))
    fails(tt.FpToFpOp(x, result=tensor([4], bf16)), "Rounding mode is required for FP downcast")
    zero = tt.FpToFpOp(const(-0.0, f32), result=f16, rounding="rtz")
    assert str(folded(zero)) == "-0.000000e+00 : f16"
    assert folded(tt.FpToFpOp(const(1.5, f32), result=f16, rounding="rtz")) is None


def test_float_elementwise_ops():
    x, lo, hi = args(f32, f32, f32)
    op = tt.ClampFOp(x, lo, hi, propagateNan="all")
    assert op.result.type is f32 and tt.PropagateNan.keyword(op.propagateNan) == "all"
    verify(op)
    fails(tt.ClampFOp(x, lo, arg(f16)), "requires the same type")
    verify(tt.PreciseSqrtOp(x))
    verify(tt.PreciseDivFOp(x, lo))
    fails(tt.PreciseSqrtOp(arg(i32)), "must be floating-point")


def test_mulhiui_folds_the_high_half():
    a = const(-1, i32)  # 0xFFFFFFFF
    op = tt.MulhiUIOp(a, const(2, i32))
    verify(op)
    assert folded_value(op) == 1
    t = tensor([2], i32)
    assert folded_value(tt.MulhiUIOp(const(0x10000, t), const(0x10000, t))) == [1, 1]


def test_addptr():
    ptrs, offs = args(tensor([8], P), tensor([8], i32))
    op = tt.AddPtrOp(ptrs, offs)
    assert op.result.type is ptrs.type
    verify(op)
    fails(tt.AddPtrOp(ptrs, arg(tensor([4], i32))), "must have the same shape")
    fails(tt.AddPtrOp(ptrs, offs, result=tensor([8], tt.ptr(f16))), "result type matches ptr")
    assert folded(tt.AddPtrOp(ptrs, const(0, tensor([8], i32)))) is ptrs
    assert folded(tt.AddPtrOp(ptrs, offs)) is None


def test_program_ids():
    op = tt.GetProgramIdOp("z")
    assert op.result.type is i32 and op.axis_index == 2
    verify(op)
    verify(tt.GetNumProgramsOp(1))
    bad = tt.GetProgramIdOp(0)
    bad.attributes["axis"] = IntegerAttr(3, i32)
    fails(bad, "attribute 'axis' failed to satisfy constraint: ProgramIDDim")


def test_make_range():
    op = tt.MakeRangeOp(0, 128)
    assert op.result.type is tensor([128], i32)
    verify(op)
    fails(tt.MakeRangeOp(4, 4, result=tensor([1], i32)), "start must be less than end")
    fails(tt.MakeRangeOp(0, 4, result=tensor([2, 2], i32)), "return type must be a 1D tensor")
    fails(tt.MakeRangeOp(0, 4, result=tensor([8], i32)), "must match size of range [0, 4)")
    fails(tt.MakeRangeOp(0, 4, result=tensor([4], i64)), "must have i32 elements")
    fails(tt.MakeRangeOp(0, 12), "Number of elements must be power-of-two")
    assert folded(tt.MakeRangeOp(5, 6)) is DenseElementsAttr(tensor([1], i32), 5)


def test_tensor_size_limit():
    fails(tt.MakeRangeOp(0, 1 << 21), "Maximum allowed number of elements is 1048576")


def test_splat_and_unsplat():
    x = arg(f32)
    op = tt.SplatOp(x, shape=[4, 8])
    assert op.result.type is tensor([4, 8], f32)
    verify(op)
    fails(tt.SplatOp(x, result=tensor([4], i32)), "requires the same element type")
    fails(tt.SplatOp(x, result=f32), "must be ranked tensor")
    assert folded(tt.SplatOp(const(2.0, f32), shape=[4])) is DenseElementsAttr(
        tensor([4], f32), 2.0
    )
    one = tt.UnsplatOp(arg(tensor([1, 1], i8)))
    assert one.result.type is i8
    verify(one)
    fails(tt.UnsplatOp(arg(tensor([2], i8)), result=i8), "must have exactly one element")
    fails(tt.UnsplatOp(arg(tensor([1], i8)), result=i32), "inferred type(s) 'i8'")


def test_expand_dims():
    x = arg(tensor([64], i32))
    op = tt.ExpandDimsOp(x, 1)
    assert op.result.type is tensor([64, 1], i32)
    verify(op)
    fails(tt.ExpandDimsOp(x, 0, result=tensor([64, 1], i32)), "inferred type(s) 'tensor<1x64xi32>'")
    fails(tt.ExpandDimsOp(x, 2, result=tensor([64, 1], i32)), "invalid axis 2")
    splat = const(3, tensor([64], i32))
    assert folded(tt.ExpandDimsOp(splat, 0)) is DenseElementsAttr(tensor([1, 64], i32), 3)


def test_reshape():
    x = arg(tensor([32, 16], f32))
    op = tt.ReshapeOp(x, shape=[32, 8, 2])
    verify(op)
    verify(tt.ReshapeOp(x, shape=[512], allow_reorder=True))
    fails(tt.ReshapeOp(x, shape=[32, 8]), "number of src and dst elements of reshape")
    assert folded(tt.ReshapeOp(x, shape=[32, 16])) is x


def test_broadcast():
    x = arg(tensor([1, 32], f32))
    op = tt.BroadcastOp(x, shape=[16, 32])
    verify(op)
    fails(tt.BroadcastOp(x, shape=[16, 32, 1]), "rank of source must be same as rank of result")
    fails(tt.BroadcastOp(x, shape=[16, 64]), "Different dimensions at index 1")
    assert folded(tt.BroadcastOp(x, shape=[1, 32])) is x
    splat = const(1.0, tensor([1, 32], f32))
    assert folded(tt.BroadcastOp(splat, shape=[4, 32])).splat_value == 1.0


def test_cat_join_split():
    a, b = args(tensor([8, 32], f32), tensor([8, 32], f32))
    verify(tt.CatOp(a, b, result=tensor([16, 32], f32)))
    fails(
        tt.CatOp(a, arg(tensor([4, 64], f32)), result=tensor([16, 32], f32)),
        "requires all operands to have the same type",
    )
    joined = tt.JoinOp(a, b)
    assert joined.result.type is tensor([8, 32, 2], f32)
    verify(joined)
    fails(tt.JoinOp(a, b, result=tensor([8, 32, 4], f32)), "inferred type(s)")
    halves = tt.SplitOp(joined.result)
    assert halves.outLHS.type is halves.outRHS.type is a.type
    verify(halves)
    fails(tt.SplitOp(arg(tensor([8, 4], f32))), "last dimension to be 2")
    c = arg(tensor([8, 2], f32))
    fails(tt.SplitOp(c, outLHS=tensor([8], f32), outRHS=tensor([8], f16)), "outLHS and outRHS")


def test_trans():
    x = arg(tensor([32, 8, 2], f32))
    op = tt.TransOp(x, [1, 0, 2])
    assert op.result.type is tensor([8, 32, 2], f32)
    verify(op)
    fails(tt.TransOp(x, [1, 0], result=tensor([8, 32, 2], f32)), "same size as the rank")
    fails(tt.TransOp(x, [1, 1, 2], result=tensor([8, 8, 2], f32)), "must be a permutation")
    fails(tt.TransOp(x, [1, 0, 2], result=tensor([32, 8, 2], f32)), "inferred type(s)")
    assert folded(tt.TransOp(x, [0, 1, 2])) is x


def test_histogram_and_gather():
    src = arg(tensor([32], i32))
    verify(tt.HistogramOp(src, result=tensor([16], i32)))
    verify(tt.HistogramOp(src, arg(tensor([32], i1)), result=tensor([16], i32)))
    fails(tt.HistogramOp(src, arg(tensor([16], i1)), result=tensor([16], i32)), "mask type")
    z, idx = args(tensor([16, 32], f32), tensor([16, 32], i32))
    g = tt.GatherOp(z, idx, 0)
    assert g.result.type is z.type
    verify(g)
    fails(tt.GatherOp(z, idx, 0, result=tensor([16, 32], f16)), "element types must match")
    fails(tt.GatherOp(z, idx, 2), "gather dimension must be less than the input rank")
    fails(tt.GatherOp(z, arg(tensor([16], i32)), 0), "ranks must match")
    fails(tt.GatherOp(z, idx, 0, result=tensor([8, 32], f32)), "indices and output shapes")
    fails(tt.GatherOp(z, arg(tensor([8, 16], i32)), 0), "indices dimension 1 must match")


@pytest.mark.parametrize("shape", [[3], [6, 2]])
def test_tensor_size_trait_on_shape_ops(shape):
    fails(tt.SplatOp(arg(f32), shape=shape), "power-of-two")
