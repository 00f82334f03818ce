"""The two `memref` ops that speak of addresses: `extract_aligned_pointer_as_index` (the address
of a memref's aligned base) and `view` (a typed memref over a byte buffer from a byte shift on).
Printed as upstream prints them (MemRefOps.td's formats, `%intptr` / `%view` result names), read
back, read by xDSL (which knows `extract_aligned_pointer_as_index` in the generic form only,
so its custom form is checked here against the hand-written line), and one invalid case per
verifier rule."""

from dialect_helpers import arg, fails
from kernel_helpers import check, kernel

from naiad.dialects import memref
from naiad.ir import (
    DYNAMIC,
    MemRefType,
    StridedLayoutAttr,
    UnrankedMemRefType,
    create_operation,
    f32,
    i8,
    i64,
    index,
)

D = DYNAMIC
BYTES = MemRefType([D], i8)


def test_extract_aligned_pointer_as_index():
    def body(b, m):
        b.create(memref.ExtractAlignedPointerAsIndexOp, m)

    module = kernel([MemRefType([4, D], f32)], body)
    lines = ["%intptr = memref.extract_aligned_pointer_as_index %arg0 : memref<4x?xf32> -> index"]
    check(module, lines, allow={"memref.extract_aligned_pointer_as_index"})


def test_extract_aligned_pointer_as_index_rules():
    fails(
        create_operation("memref.extract_aligned_pointer_as_index", [arg(BYTES)], [i64]),
        "result #0 ('aligned_pointer') must be 'index'",
    )
    fails(
        memref.ExtractAlignedPointerAsIndexOp(arg(UnrankedMemRefType(f32))),
        "must be memref of any type values",
    )


def test_view():
    def body(b, bytes_, shift, n):
        b.create(memref.ViewOp, bytes_, shift, [n], MemRefType([D, 4], f32))
        b.create(memref.ViewOp, bytes_, shift, [], MemRefType([], i64))

    module = kernel([BYTES, index, index], body)
    lines = [
        "%view = memref.view %arg0[%arg1][%arg2] : memref<?xi8> to memref<?x4xf32>",
        "%view_0 = memref.view %arg0[%arg1][] : memref<?xi8> to memref<i64>",
    ]
    check(module, lines)


def test_view_rules():
    shift = arg(index)
    wide = memref.ViewOp(arg(MemRefType([D], f32)), shift, [], MemRefType([4], f32))
    fails(wide, "must be 1D memref of 8-bit signless integer values")
    strided = MemRefType([8], i8, StridedLayoutAttr([1], D))
    fails(memref.ViewOp(arg(strided), shift, [], MemRefType([2], f32)), "unsupported map for base")
    laid_out = MemRefType([2], f32, StridedLayoutAttr([1], 0))
    fails(memref.ViewOp(arg(BYTES), shift, [], laid_out), "unsupported map for result")
    elsewhere = MemRefType([2], f32, None, 1)
    fails(memref.ViewOp(arg(BYTES), shift, [], elsewhere), "different memory spaces")
    fails(
        memref.ViewOp(arg(BYTES), shift, [], MemRefType([D], f32)),
        "incorrect number of size operands for type",
    )
