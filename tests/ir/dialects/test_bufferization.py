"""`bufferization.to_tensor`, `to_buffer`, `materialize_in_destination`, `alloc_tensor`:
built from Python, printed as upstream prints them, read back, read by xDSL (the strided
destinations xDSL refuses are checked against tests/middle/golden/bufferization.mlir), and one
invalid case per verifier rule."""

from pathlib import Path

import pytest
from dialect_helpers import arg, args, fails
from kernel_helpers import body_lines, kernel
from middle.upstream import assert_round_trip, assert_upstream_valid

from naiad.dialects import bufferization as bz
from naiad.dialects import memref
from naiad.ir import (
    DYNAMIC,
    MemRefType,
    RankedTensorType,
    StridedLayoutAttr,
    UnrankedMemRefType,
    f16,
    f32,
    index,
    verify,
)
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module

D = DYNAMIC
GOLDEN = Path(__file__).parents[2] / "middle" / "golden"


def test_crossings_print_as_upstream():
    def body(b, m, n):
        t = b.create(bz.ToTensorOp, m, restrict=True, writable=True).result
        b.create(bz.ToTensorOp, m)
        b.create(bz.ToBufferOp, t, read_only=True)
        b.create(bz.ToBufferOp, t)
        empty = b.create(bz.AllocTensorOp, RankedTensorType([D, 4], f32), [n]).result
        copy = b.create(bz.AllocTensorOp, RankedTensorType([16, 4], f32), copy=t).result
        b.create(bz.AllocTensorOp, RankedTensorType([D], f32), [n], size_hint=n)
        b.create(bz.MaterializeInDestinationOp, copy, m)
        b.create(bz.MaterializeInDestinationOp, t, copy)
        del empty

    text = assert_round_trip(kernel([MemRefType([16, 4], f32), index], body))
    assert body_lines(text) == [
        "%0 = bufferization.to_tensor %arg0 restrict writable : memref<16x4xf32> to "
        "tensor<16x4xf32>",
        "%1 = bufferization.to_tensor %arg0 : memref<16x4xf32> to tensor<16x4xf32>",
        "%2 = bufferization.to_buffer %0 read_only : tensor<16x4xf32> to memref<16x4xf32>",
        "%3 = bufferization.to_buffer %0 : tensor<16x4xf32> to memref<16x4xf32>",
        "%4 = bufferization.alloc_tensor(%arg1) : tensor<?x4xf32>",
        "%5 = bufferization.alloc_tensor() copy(%0) : tensor<16x4xf32>",
        "%6 = bufferization.alloc_tensor(%arg1) size_hint=%arg1 : tensor<?xf32>",
        "bufferization.materialize_in_destination %5 in writable %arg0 : (tensor<16x4xf32>, "
        "memref<16x4xf32>) -> ()",
        "%7 = bufferization.materialize_in_destination %0 in %5 : (tensor<16x4xf32>, "
        "tensor<16x4xf32>) -> tensor<16x4xf32>",
    ]
    assert_upstream_valid(text)


def test_crossings_of_strided_buffers():
    """The Linalg form's load and store: a tensor read from a strided view, written back to
    one (xDSL refuses the second: golden file)."""
    view = MemRefType([D], f32, StridedLayoutAttr([1], D))

    def body(b, p, offset, size):
        window = b.create(memref.ReinterpretCastOp, p, view, offset, [size], [1]).result
        buffer = b.create(memref.AllocOp, MemRefType([D], f32), [size]).memref
        b.create(memref.CopyOp, window, buffer)
        t = b.create(bz.ToTensorOp, buffer, restrict=True, writable=True).result
        b.create(bz.MaterializeInDestinationOp, t, window, restrict=True)

    module = kernel([UnrankedMemRefType(f32), index, index], body)
    golden = (GOLDEN / "bufferization.mlir").read_text()
    assert print_module(module, locations=False) == golden
    assert_round_trip(module)
    parsed = parse_module(golden)
    verify(parsed)
    assert print_module(parsed, locations=False) == golden
    generic = print_module(parsed, generic=True, locations=False)
    assert print_module(parse_module(generic), locations=False) == golden
    allow = {"bufferization.materialize_in_destination", "memref.reinterpret_cast", "memref.copy"}
    assert_upstream_valid(golden, allow=allow)


def test_to_tensor_and_to_buffer_rules():
    m, t = args(MemRefType([4], f32), RankedTensorType([4], f32))
    fails(bz.ToTensorOp(m, result=RankedTensorType([5], f32)), "result type matches tensor")
    fails(bz.ToTensorOp(m, result=RankedTensorType([4], f16)), "result type matches tensor")
    fails(
        bz.ToTensorOp(arg(UnrankedMemRefType(f32)), result=RankedTensorType([4], f32)), "equivalent"
    )
    fails(bz.ToBufferOp(t, MemRefType([4], f16)), "type of 'tensor' matches tensor equivalent")
    fails(bz.ToBufferOp(t, MemRefType([3], f32)), "type of 'tensor' matches tensor equivalent")
    strided = MemRefType([4], f32, StridedLayoutAttr([2], 1), 1)
    verify(bz.ToBufferOp(t, strided))  # the layout and memory space are the buffer's own
    fails(bz.ToTensorOp(t, result=t), "operand #0 ('buffer') must be ranked or unranked memref")


def test_materialize_in_destination_rules():
    t, m, d = args(RankedTensorType([4], f32), MemRefType([4], f32), RankedTensorType([4], f32))
    make = bz.MaterializeInDestinationOp
    fails(make(t, d, result=[]), "tensor 'dest' implies exactly one tensor result")
    fails(make(t, d, result=[RankedTensorType([D], f32)]), "result and 'dest' types must match")
    fails(make(t, m, result=[t.type]), "memref 'dest' implies zero results")
    fails(make(t, d, restrict=True), "'restrict' is valid only for memref destinations")
    fails(make(t, m, writable=False), "'writable' must be specified if and only if")
    fails(make(t, d, writable=True), "'writable' must be specified if and only if")
    fails(make(t, arg(MemRefType([4], f16))), "all of {source, dest} have same element type")
    fails(make(t, arg(MemRefType([4, 1], f32))), "rank mismatch between source and destination")
    fails(make(t, arg(MemRefType([5], f32))), "source/destination shapes are incompatible")
    verify(make(t, arg(MemRefType([D], f32))))  # a dynamic size may match at run time


def test_alloc_tensor_rules():
    n, t = args(index, RankedTensorType([4], f32))
    alloc = bz.AllocTensorOp
    fails(alloc(RankedTensorType([4], f32), [n], copy=t), "dynamic sizes not needed when copying")
    fails(alloc(RankedTensorType([D, D], f32), [n]), "expected 2 dynamic sizes")
    fails(alloc(RankedTensorType([8], f32), copy=t), "expected that `copy` and return type match")
    with pytest.raises(ValueError, match="no ranked tensor type"):
        bz.ToTensorOp(arg(UnrankedMemRefType(f32)))
