"""`tensor`: construction (inferred result types, mixed static and dynamic lists, body blocks)
and one invalid case per verifier rule. The text of every op is tested in
test_tensor_text.py."""

import random

from dialect_helpers import arg, args, fails, tensor

from naiad.dialects import tensor as T
from naiad.ir import (
    DYNAMIC,
    DenseArrayAttr,
    Pure,
    RankedTensorType,
    f16,
    f32,
    i1,
    i32,
    i64,
    index,
    verify,
)

Q = DYNAMIC


def test_empty_and_splat_take_mixed_sizes():
    n = arg(index)
    op = T.EmptyOp([16, n], f32)
    assert op.result.type is tensor([16, Q], f32) and op.dynamicSizes == (n,)
    verify(op)
    assert Pure in op.traits
    verify(T.EmptyOp(tensor([4], f32)))
    fails(T.EmptyOp(tensor([Q, 4], f32)), "incorrect number of dynamic sizes, has 0, expected 1")
    x = arg(f32)
    verify(T.SplatOp(x, tensor([Q, 4], f32), [n]))
    fails(T.SplatOp(x, tensor([Q, 4], f32)), "incorrect number of dynamic sizes, has 0, expected 1")
    fails(T.SplatOp(x, tensor([4], i32)), "operand type matches element type of result")
    fails(T.SplatOp(arg(tensor([4], f32)), tensor([4], f32)), "must be integer/index/float type")


def test_extract_insert_and_from_elements():
    t, i, j, x = args(tensor([4, 8], f32), index, index, f32)
    extract = T.ExtractOp(t, [i, j])
    assert extract.result.type is f32
    verify(extract)
    fails(T.ExtractOp(t, [i]), "incorrect number of indices for extract_element")
    fails(T.ExtractOp(t, [i, j], result=i32), "result type matches element type of tensor")
    fails(T.ExtractOp(t, [i, arg(i32)]), "operand #2 ('indices') must be 'index'")
    insert = T.InsertOp(x, t, [i, j])
    assert insert.result.type is t.type
    verify(insert)
    fails(T.InsertOp(x, t, [i]), "incorrect number of indices")
    fails(T.InsertOp(arg(i32), t, [i, j]), "scalar type matches element type of dest")
    fails(T.InsertOp(x, t, [i, j], result=tensor([8], f32)), "result type matches type of dest")
    a, b = args(i32, i32)
    build = T.FromElementsOp([a, b])
    assert build.result.type is tensor([2], i32)
    verify(build)
    verify(T.FromElementsOp([a, b, a, b], shape=[2, 2]))
    fails(T.FromElementsOp([a, b], shape=[3]), "operand types match result element type")
    fails(T.FromElementsOp([a, x]), "operand types match result element type")
    fails(T.FromElementsOp([a], result=tensor([Q], i32)), "must be statically shaped tensor")


def test_dim_cast_and_bitcast():
    t, c = args(tensor([Q, 4], f32), index)
    op = T.DimOp(t, c)
    assert op.result.type is index
    verify(op)
    fails(T.DimOp(arg(tensor([], f32)), c), "must be non-0-ranked or unranked tensor")
    verify(T.CastOp(t, tensor([3, 4], f32)))
    verify(T.CastOp(t, tensor([Q, Q], f32)))
    fails(
        T.CastOp(t, tensor([3, 5], f32)),
        "operand type 'tensor<?x4xf32>' and result type 'tensor<3x5xf32>' are cast incompatible",
    )
    fails(T.CastOp(t, tensor([3, 4], f16)), "are cast incompatible")
    fails(T.CastOp(t, tensor([12], f32)), "are cast incompatible")
    verify(T.BitcastOp(t, tensor([Q, 4], i32)))
    fails(T.BitcastOp(t, tensor([Q, 4], i64)), "are cast incompatible")
    fails(T.BitcastOp(arg(tensor([4], i1)), tensor([4], i32)), "are cast incompatible")


def _generate(result_type, extents, value):
    op = T.GenerateOp(result_type, extents)
    op.block.append(T.YieldOp(value))
    return op


def test_generate():
    n, x = args(index, f32)
    op = _generate(tensor([Q, 3], f32), [n], x)
    assert [a.type for a in op.block.arguments] == [index, index]
    verify(op)
    fails(_generate(tensor([Q, 3], f32), [], x), "as many index operands as dynamic extents")
    fails(_generate(tensor([2, 3], i32), [], x), "terminated with a `yield` operation of the")
    op = _generate(tensor([2, 3], f32), [], x)
    op.block.arguments[0].type = i32
    fails(op, "all body arguments must be index")
    op = _generate(tensor([2, 3], f32), [], x)
    op.block.erase_argument(0)
    fails(op, "must have one body argument per input dimension")
    fails(T.YieldOp(x), "expects parent op to be one of 'tensor.generate', 'tensor.pad'")


def test_concat_infers_and_checks_its_result():
    a, b, d = args(tensor([2, 4], f32), tensor([3, 4], f32), tensor([Q, 4], f32))
    op = T.ConcatOp(0, [a, b])
    assert op.result.type is tensor([5, 4], f32) and op.dim.value == 0
    verify(op)
    assert T.ConcatOp(0, [a, d]).result.type is tensor([Q, 4], f32)
    assert T.concat_type(1, [tensor([Q, 2], f32), tensor([3, 1], f32)]) is tensor([3, 3], f32)
    verify(T.ConcatOp(0, [a, d], result_type=tensor([7, 4], f32)))
    fails(T.ConcatOp(0, [], result_type=tensor([4], f32)), "requires at least one input")
    fails(T.ConcatOp(0, [a, arg(tensor([3], f32))], tensor([5, 4], f32)), "rank of concatenated")
    fails(T.ConcatOp(0, [a, arg(tensor([3, 4], i32))], tensor([5, 4], f32)), "element type must")
    fails(T.ConcatOp(2, [a, b], tensor([5, 4], f32)), "concatenation dim must be less than")
    fails(T.ConcatOp(0, [a, arg(tensor([3, 5], f32))], tensor([5, 4], f32)), "non-concatenated")
    fails(T.ConcatOp(0, [a, b], tensor([6, 4], f32)), "does not match inferred shape")


def test_slices_infer_their_type_from_random_boxes():
    rng = random.Random(3)
    for _ in range(50):
        shape = [rng.randint(1, 12) for _ in range(rng.randint(1, 4))]
        source = arg(tensor(shape, f32))
        offsets = [rng.randrange(d) for d in shape]
        strides = [rng.randint(1, 3) for _ in shape]
        sizes = [1 + (d - 1 - o) // s for d, o, s in zip(shape, offsets, strides)]
        op = T.ExtractSliceOp(source, offsets, sizes, strides)
        assert op.result.type is tensor(sizes, f32)
        verify(op)
        kept = [s for s in sizes if s != 1] or []
        reduced = T.ExtractSliceOp(source, offsets, sizes, strides, tensor(kept, f32))
        verify(reduced)
        assert reduced.mixed_sizes == sizes
        back = T.InsertSliceOp(reduced.result, source, offsets, sizes, strides)
        assert back.result.type is source.type
        verify(back)


def test_slices_with_dynamic_entries():
    t, o, n = args(tensor([8, 16], f32), index, index)
    op = T.ExtractSliceOp(t, [0, o], [4, n], [1, 1])
    assert op.result.type is tensor([4, Q], f32)
    assert op.static_offsets is DenseArrayAttr(i64, [0, Q])
    assert op.offsets == (o,) and op.sizes == (n,) and op.strides == ()
    assert op.mixed_offsets == [0, o] and op.mixed_strides == [1, 1]
    assert op.attributes["operandSegmentSizes"] is DenseArrayAttr(i32, [1, 1, 1, 0])
    verify(op)
    insert = T.InsertSliceOp(op.result, t, [0, o], [4, n], [1, 1])
    assert insert.attributes["operandSegmentSizes"] is DenseArrayAttr(i32, [1, 1, 1, 1, 0])
    verify(insert)


def test_slice_rules():
    t, o = args(tensor([8, 16], f32), index)
    fails(T.ExtractSliceOp(t, [0], [4], [1]), "expected 2 offset values")
    fails(T.ExtractSliceOp(t, [0, 0], [4], [1, 1]), "expected 2 size values")
    fails(T.ExtractSliceOp(t, [0, 0], [4, 4], [1]), "expected 2 stride values")
    fails(T.ExtractSliceOp(t, [0, -1], [4, 4], [1, 1]), "expected offsets to be non-negative")
    fails(T.ExtractSliceOp(t, [0, 0], [4, 4], [1, 1], tensor([4, 5], f32)), "(size mismatch)")
    fails(T.ExtractSliceOp(t, [0, 0], [4, 4], [1, 1], tensor([4], f32)), "(size mismatch)")
    fails(
        T.ExtractSliceOp(t, [0, 0], [1, 4], [1, 1], tensor([1, 1, 4], f32)),
        "expected rank to be smaller or equal to the other rank",
    )
    fails(T.ExtractSliceOp(t, [0, 0], [4, 4], [1, 1], tensor([4, 4], i32)), "element type")
    fails(T.ExtractSliceOp(t, [8, 0], [1, 4], [1, 1]), "offset 0 is out-of-bounds: 8 >= 8")
    fails(
        T.ExtractSliceOp(t, [0, 8], [4, 5], [1, 2]),
        "slice along dimension 1 runs out-of-bounds: 16 >= 16",
    )
    verify(T.ExtractSliceOp(t, [0, o], [4, 16], [1, 1]))  # a dynamic offset is not checked
    missing = T.ExtractSliceOp(t, [0, 0], [4, 4], [1, 1])
    missing.static_offsets = DenseArrayAttr(i64, [0, Q])
    fails(missing, "expected 1 dynamic offset values")
    s = arg(tensor([4, 4], f32))
    fails(T.InsertSliceOp(s, t, [0, 0], [4, 5], [1, 1]), "(size mismatch)")
    fails(
        T.InsertSliceOp(s, t, [0, 0], [4, 4], [1, 1], result=tensor([4, 4], f32)),
        "expected result type to match dest type",
    )


def test_collapse_and_expand():
    t, n = args(tensor([4, 8, 2], f32), index)
    collapse = T.CollapseShapeOp(t, [[0, 1], [2]])
    assert collapse.result.type is tensor([32, 2], f32)
    verify(collapse)
    expand = T.ExpandShapeOp(collapse.result, [[0, 1], [2]], [4, 8, 2])
    assert expand.result.type is t.type
    assert expand.mixed_output_shape == [4, 8, 2]
    verify(expand)
    d = arg(tensor([Q], f32))
    dynamic = T.ExpandShapeOp(d, [[0, 1]], [n, 4])
    assert dynamic.result.type is tensor([Q, 4], f32) and dynamic.output_shape == (n,)
    verify(dynamic)
    assert T.CollapseShapeOp(dynamic.result, [[0, 1]]).result.type is tensor([Q], f32)
    fails(T.CollapseShapeOp(t, [[0], [1], [2]], tensor([4, 8], f32)), "collapsed rank (2) to equal")
    fails(T.CollapseShapeOp(t, [[0, 2], [1]]), "reassociation map #0 to be valid and contiguous")
    fails(T.CollapseShapeOp(t, [[0, 1], [2]], tensor([31, 2], f32)), "static value of 32")
    fails(T.CollapseShapeOp(t, [[0, 1], [2]], tensor([32, 2], f16)), "the same element type")
    fails(
        T.CollapseShapeOp(arg(tensor([4], f32)), [[0]], tensor([2, 2], f32)),
        "to have a higher (or same) rank than the collapsed type",
    )
    fails(
        T.ExpandShapeOp(collapse.result, [[0, 1], [2]], [4, 8, 2], tensor([4, 8], f32)),
        "number of static shape dims to be equal to the output rank (2) but found 3",
    )
    fails(
        T.ExpandShapeOp(d, [[0, 1]], [Q, 4], tensor([Q, 4], f32)),
        "static_output_shape has 1 dynamic dims while output_shape has 0 values",
    )
    fails(
        T.ExpandShapeOp(collapse.result, [[0, 1], [2]], [4, 8, 2], tensor([2, 16, 2], f32)),
        "invalid output shape provided at pos 0",
    )


def test_reshape():
    t, s, dyn = args(tensor([4, 8], f32), tensor([1], i64), tensor([Q], index))
    verify(T.ReshapeOp(t, s, tensor([32], f32)))
    fails(T.ReshapeOp(t, s, tensor([32], f16)), "element types of source and destination")
    fails(T.ReshapeOp(t, s, tensor([30], f32)), "should have the same number of elements")
    fails(T.ReshapeOp(t, dyn, tensor([32], f32)), "shape operand with dynamic length")
    fails(T.ReshapeOp(t, s, tensor([4, 8], f32)), "length of shape operand differs")
    fails(T.ReshapeOp(t, arg(tensor([1], f32)), tensor([32], f32)), "1D tensor of signless")


def test_rank_reduction_mask():
    assert T.rank_reduction_mask((1, 6, 1), (6, 1)) == {0}
    assert T.rank_reduction_mask((1, 1, 2, 1, 1, 4, 1), (1, 2, 1, 4)) == {1, 4, 6}
    assert T.rank_reduction_mask((4, 4), (4,)) is None
    assert T.rank_reduction_mask((2, 3), (3, 2)) is None
    assert T.slice_type(RankedTensorType([8, 8], f32), [Q, 2]) is tensor([Q, 2], f32)
