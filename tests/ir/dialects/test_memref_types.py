"""Memref types, strided layouts and dynamic tensor dimensions: spelling (as MLIR spells
them, and as xDSL reads them), parsing back to the same interned object, the normalizations
MLIR makes, the errors, and row-major strides against NumPy's."""

import random

import numpy as np
import pytest
from middle.upstream import assert_upstream_valid

from naiad.ir import (
    DYNAMIC,
    FunctionType,
    IntegerAttr,
    MemRefType,
    RankedTensorType,
    StridedLayoutAttr,
    StringAttr,
    UnrankedMemRefType,
    contiguous_strides,
    f16,
    f32,
    i8,
    i32,
    i64,
    index,
)
from naiad.ir.affine import AffineMap, AffineMapAttr, dim
from naiad.ir.lexer import ParseError
from naiad.ir.parser import parse_attribute

D = DYNAMIC

SPELLINGS = [
    (MemRefType([4, D], f32), "memref<4x?xf32>"),
    (MemRefType([], i32), "memref<i32>"),
    (
        MemRefType([4, 8], f32, StridedLayoutAttr([D, 1], D)),
        "memref<4x8xf32, strided<[?, 1], offset: ?>>",
    ),
    (MemRefType([16], f16, StridedLayoutAttr([1])), "memref<16xf16, strided<[1]>>"),
    (
        MemRefType([2, 3], f32, StridedLayoutAttr([3, 1], 7)),
        "memref<2x3xf32, strided<[3, 1], offset: 7>>",
    ),
    (MemRefType([], f32, StridedLayoutAttr([], 5)), "memref<f32, strided<[], offset: 5>>"),
    (MemRefType([4], f32, None, 1), "memref<4xf32, 1>"),
    (MemRefType([4], f32, StridedLayoutAttr([2]), 3), "memref<4xf32, strided<[2]>, 3>"),
    (MemRefType([4], i8, None, StringAttr("shared")), 'memref<4xi8, "shared">'),
    (UnrankedMemRefType(f32), "memref<*xf32>"),
    (UnrankedMemRefType(i64, 2), "memref<*xi64, 2>"),
    (UnrankedMemRefType(MemRefType([D], f32)), "memref<*xmemref<?xf32>>"),
    (RankedTensorType([D, 4], f32), "tensor<?x4xf32>"),
    (RankedTensorType([D], index), "tensor<?xindex>"),
]


@pytest.mark.parametrize(("built", "text"), SPELLINGS, ids=[t for _, t in SPELLINGS])
def test_spelling_parses_back_to_the_same_type(built, text):
    assert str(built) == text
    assert parse_attribute(text).value is built


def test_xdsl_reads_every_spelling():
    types = ", ".join(text for _, text in SPELLINGS if '"' not in text)
    assert_upstream_valid(f"func.func private @f({types})")


def test_normalizations_follow_mlir():
    # The default memory space (i64 0) and an identity affine map are not stored.
    assert MemRefType([4], f32, None, 0) is MemRefType([4], f32)
    assert MemRefType([4], f32, None, IntegerAttr(0, i64)) is MemRefType([4], f32)
    assert UnrankedMemRefType(f32, 0) is UnrankedMemRefType(f32)
    identity = AffineMapAttr(AffineMap.identity(2))
    assert MemRefType([2, 3], f32, identity) is MemRefType([2, 3], f32)
    assert parse_attribute("memref<2x3xf32, affine_map<(d0, d1) -> (d0, d1)>>").value is (
        MemRefType([2, 3], f32)
    )
    # A strided layout is kept even where it is contiguous; offset 0 is left out.
    assert str(parse_attribute("memref<4xf32, strided<[1], offset: 0>>").value) == (
        "memref<4xf32, strided<[1]>>"
    )
    # A memory space of another integer type keeps its type.
    assert str(MemRefType([4], f32, None, IntegerAttr(1, i32))) == "memref<4xf32, 1 : i32>"


def test_affine_map_layout():
    transposed = AffineMapAttr(AffineMap(2, 0, [dim(1), dim(0)]))
    t = MemRefType([2, 3], f32, transposed)
    assert str(t) == "memref<2x3xf32, affine_map<(d0, d1) -> (d1, d0)>>"
    assert parse_attribute(str(t)).value is t
    assert t.strides_and_offset() is None
    assert_upstream_valid(f"func.func private @f({t})")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: MemRefType([4, 4], f32, StridedLayoutAttr([1])), "expected 2 strides"),
        (lambda: MemRefType([-2], f32), "dimensions must be >= 0 or dynamic"),
        (lambda: RankedTensorType([-3], f32), "dimensions must be >= 0 or dynamic"),
        (lambda: MemRefType([4], f32, StringAttr("x")), "memref layout must be"),
        (lambda: MemRefType([4], f32, None, StridedLayoutAttr([1])), "unsupported memory space"),
        (
            lambda: MemRefType([4], f32, AffineMapAttr(AffineMap.identity(2))),
            "mismatch between rank and affine map",
        ),
    ],
)
def test_invalid_types(build, message):
    with pytest.raises((TypeError, ValueError), match=message):
        build()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("memref<4x4xf32, strided<[1]>>", "expected 2 strides"),
        ("memref<4xf32, strided<[1] offset: 0>>", "expected '>'"),
        ("memref<4xf32, strided<[x]>>", "expected stride"),
        ("memref<*xf32, strided<[1]>>", "unsupported memory space"),
        ("memref<4xf32", "expected '>'"),
    ],
)
def test_invalid_spellings(text, message):
    with pytest.raises(ParseError, match=message):
        parse_attribute(text)


def test_dynamic_tensor_has_no_element_count():
    t = RankedTensorType([D, 4], f32)
    assert not t.has_static_shape and RankedTensorType([2, 4], f32).has_static_shape
    with pytest.raises(ValueError, match="dynamic shape"):
        _ = t.numel


def _random_memref(rng: random.Random):
    rank = rng.randint(0, 4)
    shape = [rng.choice([D, rng.randint(1, 9)]) for _ in range(rank)]
    element = rng.choice([f32, f16, i8, i64, index])
    space = rng.choice([None, rng.randint(1, 5)])
    if rng.random() < 0.2:
        return UnrankedMemRefType(element, space)
    layout = None
    if rng.random() < 0.6:
        strides = [rng.choice([D, rng.randint(-8, 64)]) for _ in range(rank)]
        layout = StridedLayoutAttr(strides, rng.choice([D, 0, rng.randint(1, 1000)]))
    return MemRefType(shape, element, layout, space)


def test_random_memref_types_round_trip_and_xdsl_reads_them():
    rng = random.Random(1234)
    types = [_random_memref(rng) for _ in range(200)]
    for t in types:
        assert parse_attribute(str(t)).value is t, str(t)
    signature = FunctionType(types[:40], [])
    assert_upstream_valid(f"func.func private @f{str(signature).split(' ->')[0]}")


def test_contiguous_strides_match_numpy():
    rng = np.random.default_rng(7)
    for _ in range(50):
        shape = tuple(int(d) for d in rng.integers(1, 7, size=rng.integers(0, 5)))
        array = np.empty(shape, dtype=np.float32)
        expected = tuple(s // array.itemsize for s in array.strides)
        assert contiguous_strides(shape) == expected
        assert MemRefType(shape, f32).strides_and_offset() == (expected, 0)


def test_contiguous_strides_turn_dynamic_outside_a_dynamic_dimension():
    assert contiguous_strides([3, D, 4, 5]) == (D, 20, 5, 1)
    assert contiguous_strides([D]) == (1,)
    assert MemRefType([2, D], f32, StridedLayoutAttr([D, 1], D)).strides_and_offset() == (
        (D, 1),
        D,
    )
