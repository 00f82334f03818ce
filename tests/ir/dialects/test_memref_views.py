"""`memref.subview`, `memref.reinterpret_cast`, `memref.expand_shape`, `memref.collapse_shape`:
the result types they infer, against upstream's documented examples and against NumPy views
of random strided arrays; their text (xDSL reads it); one invalid case per verifier rule."""

import numpy as np
import pytest
from dialect_helpers import arg, args, fails
from kernel_helpers import body_lines, kernel
from middle.upstream import assert_round_trip, assert_upstream_valid

from naiad.dialects import memref
from naiad.ir import (
    DYNAMIC,
    DenseArrayAttr,
    MemRefType,
    StridedLayoutAttr,
    create_operation,
    f16,
    f32,
    i32,
    i64,
    index,
)
from naiad.ir.affine import AffineMap, AffineMapAttr, dim

D = DYNAMIC


def strided(shape, strides, offset=0, element=f32):
    return MemRefType(shape, element, StridedLayoutAttr(strides, offset))


@pytest.mark.parametrize(
    ("source", "offsets", "sizes", "strides", "result"),
    [  # the examples of upstream's op documentation
        (strided([8, 8], [8, 1]), [1, 1], [4, 4], [2, 2], strided([4, 4], [16, 2], 9)),
        (strided([4, 4], [16, 2], 9), [1, 1], [2, 2], [2, 2], strided([2, 2], [32, 4], 27)),
        (strided([64, 4], [7, 9], 91), [4, 2], [8, 2], [3, 2], strided([8, 2], [21, 18], 137)),
        (MemRefType([64, 4], f32), [D, D], [D, D], [D, D], strided([D, D], [D, D], D)),
        (strided([D, D], [D, D], D), [D, D], [4, 4], [D, D], strided([4, 4], [D, D], D)),
        (
            MemRefType([8, 16, 4], f32),
            [0, 0, 0],
            [8, 16, 4],
            [1, 1, 1],
            strided([8, 16, 4], [64, 4, 1]),
        ),
    ],
)
def test_subview_infers_upstream_types(source, offsets, sizes, strides, result):
    assert memref.subview_type(source, offsets, sizes, strides) is result


def test_rank_reducing_subviews_of_the_documentation():
    def body(b, m, i):
        b.create(memref.SubViewOp, m, [0, 0, 0], [1, 16, 4], [1, 1, 1], MemRefType([16, 4], f32))
        reduced = strided([6, 3], [4, 1], 210)
        b.create(memref.SubViewOp, m, [3, 4, 2], [1, 6, 3], [1, 1, 1], reduced)
        b.create(memref.SubViewOp, m, [i, 0, 0], [4, 1, i], [2, 1, 1])

    text = assert_round_trip(kernel([MemRefType([8, 16, 4], f32), index], body))
    assert body_lines(text) == [
        "%subview = memref.subview %arg0[0, 0, 0] [1, 16, 4] [1, 1, 1] : memref<8x16x4xf32> to "
        "memref<16x4xf32>",
        "%subview_0 = memref.subview %arg0[3, 4, 2] [1, 6, 3] [1, 1, 1] : memref<8x16x4xf32> "
        "to memref<6x3xf32, strided<[4, 1], offset: 210>>",
        "%subview_1 = memref.subview %arg0[%arg1, 0, 0] [4, 1, %arg1] [2, 1, 1] : "
        "memref<8x16x4xf32> to memref<4x1x?xf32, strided<[128, 4, 1], offset: ?>>",
    ]
    assert_upstream_valid(text)


def _numpy_view(rng, rank):
    """A random strided view of a random buffer: (base, view, its MemRefType)."""
    shape = [int(d) for d in rng.integers(1, 6, size=rank)]
    steps = [int(s) for s in rng.integers(1, 4, size=rank)]
    offset = int(rng.integers(0, 10))
    contiguous = np.empty([d * s for d, s in zip(shape, steps)], dtype=np.float32).strides
    strides = [c // 4 * s for c, s in zip(contiguous, steps)]
    size = offset + sum((d - 1) * s for d, s in zip(shape, strides)) + 1
    base = rng.standard_normal(size).astype(np.float32)
    view = np.lib.stride_tricks.as_strided(
        base[offset:], shape, [s * base.itemsize for s in strides], writeable=False
    )
    return base, view, strided(shape, strides, offset)


def _layout_of(base, view):
    """The element strides and offset of a NumPy view of `base`."""
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // 4
    return tuple(s // 4 for s in view.strides), offset


def _read_through(base, t: MemRefType) -> np.ndarray:
    """Every element of a memref of type `t` over `base`, read through its layout."""
    strides, offset = t.strides_and_offset()
    indices = np.indices(t.shape).reshape(len(t.shape), -1)
    flat = offset + sum(i * s for i, s in zip(indices, strides))
    return base[flat].reshape(t.shape)


def test_subview_layout_matches_numpy_slicing():
    rng = np.random.default_rng(2024)
    for _ in range(200):
        rank = int(rng.integers(1, 4))
        base, view, t = _numpy_view(rng, rank)
        offsets = [int(rng.integers(0, d)) for d in view.shape]
        steps = [int(rng.integers(1, 3)) for _ in view.shape]
        sizes = [len(range(o, d, s)) for o, d, s in zip(offsets, view.shape, steps)]
        sliced = view[tuple(slice(o, None, s) for o, s in zip(offsets, steps))]
        inferred = memref.subview_type(t, offsets, sizes, steps)
        assert inferred.shape == sliced.shape
        assert inferred.strides_and_offset() == _layout_of(base, sliced)
        np.testing.assert_array_equal(_read_through(base, inferred), sliced)


def test_subview_rules():
    m, i, n = args(MemRefType([8, 8], f32), index, i32)
    window = strided([4, 4], [8, 1])
    fails(memref.SubViewOp(m, [0], [4, 4], [1, 1], window), "expected 2 offset values")
    fails(memref.SubViewOp(m, [0, 0], [4, 4, 4], [1, 1], window), "expected 2 size values")
    fails(memref.SubViewOp(m, [0, -1], [4, 4], [1, 1]), "expected offsets to be non-negative")
    good = memref.SubViewOp(m, [0, i], [4, 4], [1, 1])
    inconsistent = create_operation(
        "memref.subview",
        [m],
        [good.result.type],
        {**good.attributes, "operandSegmentSizes": DenseArrayAttr(i32, [1, 0, 0, 0])},
    )
    fails(inconsistent, "expected 1 dynamic offset values")
    fails(
        memref.SubViewOp(m, [0, 0], [4, 4], [1, 1], strided([4, 4], [8, 1], 0, f16)), "element type"
    )
    fails(
        memref.SubViewOp(
            m, [0, 0], [4, 4], [1, 1], MemRefType([4, 4], f32, StridedLayoutAttr([8, 1]), 1)
        ),
        "memory spaces to match",
    )
    fails(memref.SubViewOp(m, [0, 0], [4, 4], [1, 1], strided([4, 4, 1], [8, 1, 1])), "result rank")
    fails(
        memref.SubViewOp(m, [0, 0], [4, 4], [1, 1], strided([4, 2], [8, 1])),
        "mismatch of result sizes",
    )
    fails(
        memref.SubViewOp(m, [1, 0], [4, 4], [1, 1], strided([4, 4], [8, 1])),
        "mismatch of result layout",
    )
    fails(
        memref.SubViewOp(m, [0, 0], [4, 4], [2, 1], strided([4, 4], [8, 1])),
        "mismatch of result layout",
    )
    fails(memref.SubViewOp(m, [0, n], [4, 4], [1, 1]), "must be 'index'")


def test_reinterpret_cast_of_ranked_and_unranked():
    def body(b, m, n):
        b.create(memref.ReinterpretCastOp, m, None, 9, [4, 4], [16, 2])
        b.create(memref.ReinterpretCastOp, m, None, [n], [n, 10], [1, n])

    text = assert_round_trip(kernel([MemRefType([8, 8], f32), index], body))
    assert body_lines(text) == [
        "%reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [9], sizes: [4, 4], "
        "strides: [16, 2] : memref<8x8xf32> to memref<4x4xf32, strided<[16, 2], offset: 9>>",
        "%reinterpret_cast_0 = memref.reinterpret_cast %arg0 to offset: [%arg1], sizes: [%arg1, "
        "10], strides: [1, %arg1] : memref<8x8xf32> to memref<?x10xf32, strided<[1, ?], "
        "offset: ?>>",
    ]
    assert_upstream_valid(text)


def test_reinterpret_cast_matches_numpy_as_strided():
    rng = np.random.default_rng(99)
    base = rng.standard_normal(4096).astype(np.float32)
    for _ in range(100):
        rank = int(rng.integers(1, 4))
        sizes = [int(d) for d in rng.integers(1, 8, size=rank)]
        strides = [int(s) for s in rng.integers(0, 9, size=rank)]
        offset = int(rng.integers(0, 100))
        op = memref.ReinterpretCastOp(arg(MemRefType([4096], f32)), None, offset, sizes, strides)
        view = np.lib.stride_tricks.as_strided(base[offset:], sizes, [4 * s for s in strides])
        assert op.result.type.shape == view.shape
        assert op.result.type.strides_and_offset() == _layout_of(base, view)


def test_reinterpret_cast_rules():
    m, n = args(MemRefType([8, 8], f32), index)
    cast = memref.ReinterpretCastOp
    fails(cast(m, strided([4], [1]), [0, 0], [4], [1]), "expected 1 offset values")
    fails(cast(m, strided([4], [1]), 0, [4, 4], [1]), "expected 1 size values")
    fails(cast(m, strided([4], [1], 0, f16), 0, [4], [1]), "different element types")
    memory_space = MemRefType([4], f32, StridedLayoutAttr([1]), 3)
    fails(cast(m, memory_space, 0, [4], [1]), "different memory spaces")
    fails(
        cast(m, strided([5], [1]), 0, [4], [1]), "expected result type with size = 4 instead of 5"
    )
    fails(cast(m, strided([4], [1], 2), 0, [4], [1]), "with offset = 0 instead of 2")
    fails(cast(m, strided([4], [2]), 0, [4], [n]), "with stride = ? instead of 2 in dim = 0")
    transposed = MemRefType([2, 2], f32, AffineMapAttr(AffineMap(2, 0, [dim(1), dim(0)])))
    fails(cast(m, transposed, 0, [2, 2], [1, 2]), "must be strided memref")


def test_collapse_and_expand():
    def body(b, m, n):
        collapsed = b.create(memref.CollapseShapeOp, m, [[0, 1], [2]]).result
        b.create(memref.ExpandShapeOp, collapsed, [[0, 1], [2]], [4, 8, 2])
        dynamic = b.create(memref.AllocOp, MemRefType([D, 32], f32), [n]).memref
        b.create(memref.ExpandShapeOp, dynamic, [[0, 1], [2]], [n, n, 32])
        b.create(memref.CollapseShapeOp, dynamic, [[0, 1]])

    source = strided([4, 8, 2], [16, 2, 1], 5)
    text = assert_round_trip(kernel([source, index], body))
    assert body_lines(text) == [
        "%collapse_shape = memref.collapse_shape %arg0 [[0, 1], [2]] : memref<4x8x2xf32, "
        "strided<[16, 2, 1], offset: 5>> into memref<32x2xf32, strided<[2, 1], offset: 5>>",
        "%expand_shape = memref.expand_shape %collapse_shape [[0, 1], [2]] output_shape [4, 8, "
        "2] : memref<32x2xf32, strided<[2, 1], offset: 5>> into memref<4x8x2xf32, "
        "strided<[16, 2, 1], offset: 5>>",
        "%alloc = memref.alloc(%arg1) : memref<?x32xf32>",
        "%expand_shape_0 = memref.expand_shape %alloc [[0, 1], [2]] output_shape [%arg1, %arg1, "
        "32] : memref<?x32xf32> into memref<?x?x32xf32>",
        "%collapse_shape_1 = memref.collapse_shape %alloc [[0, 1]] : memref<?x32xf32> into "
        "memref<?xf32>",
    ]
    assert_upstream_valid(text)


def test_reshapes_match_numpy():
    rng = np.random.default_rng(5)
    for _ in range(100):
        base, view, t = _numpy_view(rng, 1)
        (n,) = view.shape
        factors = [f for f in range(1, n + 1) if n % f == 0]
        outer = int(rng.choice(factors))
        expanded = view.reshape(outer, n // outer)
        op = memref.ExpandShapeOp(arg(t), [[0, 1]], [outer, n // outer])
        assert op.result.type.shape == expanded.shape
        # NumPy gives unit dimensions strides of its own: compare the elements read.
        np.testing.assert_array_equal(_read_through(base, op.result.type), expanded)
        back = memref.CollapseShapeOp(op.result, [[0, 1]]).result.type
        np.testing.assert_array_equal(_read_through(base, back), view)


def test_reshape_rules():
    m = arg(MemRefType([4, 8], f32))
    collapse = memref.CollapseShapeOp
    fails(collapse(m, [[0, 1]], MemRefType([30], f32)), "collapsed type to be static value of 32")
    fails(collapse(m, [[0, 1]], MemRefType([32, 1], f32)), "to equal the number of reassociation")
    fails(collapse(m, [[1, 0]], MemRefType([32], f32)), "map #0 to be valid and contiguous")
    fails(collapse(m, [[0]], MemRefType([4], f32)), "to cover the 2 dimensions")
    dyn = arg(MemRefType([D, 8], f32))
    fails(collapse(dyn, [[0, 1]], MemRefType([32], f32)), "collapsed type to be dynamic")
    gappy = arg(strided([4, 8, 2], [32, 2, 1]))
    fails(collapse(gappy, [[0, 1], [2]], strided([32, 2], [2, 1])), "non-contiguous dims")
    fails(
        collapse(m, [[0, 1]], strided([32], [1], 4)), "expected collapsed type to be memref<32xf32>"
    )
    flat = arg(MemRefType([32], f32))
    expand = memref.ExpandShapeOp
    fails(expand(flat, [[0, 1]], [4, 8], strided([4, 8], [8, 1])), "expected expanded type to be")
    fails(
        expand(flat, [[0, 1]], [4, 9], MemRefType([4, 8], f32)),
        "invalid output shape provided at pos 1",
    )
    op = expand(flat, [[0, 1]], [4, 8])
    op.static_output_shape = DenseArrayAttr(i64, [4, 8, 1])
    fails(op, "expected number of static shape bounds to be equal to the output rank (2)")
    op.static_output_shape = DenseArrayAttr(i64, [4, D])
    fails(op, "expected 1 dynamic output_shape values")


def test_view_builders_infer_from_mixed_lists():
    m, i = args(MemRefType([16, 16], f32), index)
    op = memref.SubViewOp(m, [i, 2], [4, i], [1, 1])
    assert op.mixed_offsets == [i, 2] and op.mixed_sizes == [4, i] and op.mixed_strides == [1, 1]
    assert op.result.type is strided([4, D], [16, 1], D)
    expand = memref.ExpandShapeOp(arg(MemRefType([D], f32)), [[0, 1]], [i, 4])
    assert expand.mixed_output_shape == [i, 4]
    assert expand.result.type is MemRefType([D, 4], f32)
    with pytest.raises(ValueError, match="cannot collapse"):
        memref.CollapseShapeOp(arg(strided([4, 8], [16, 1])), [[0, 1]])
    with pytest.raises(ValueError, match="no strided layout"):
        memref.subview_type(
            MemRefType([2, 2], f32, AffineMapAttr(AffineMap(2, 0, [dim(1), dim(0)]))),
            [0, 0],
            [1, 1],
            [1, 1],
        )
