"""A block load through a tensor map, as the pointer load it stands for (tritongpu-pipeline's
fallback for loads in loops).

A `tt.descriptor_load` outside a loop is one synchronous tensor copy (lowering/tma.py). Inside
a loop, a copy the pipeliner cannot overlap with the iterations before it (its block is not a
dot operand's buffer in the copy's layout: a reduction's input, an `mma.sync` operand, a loop
of one stage) would make every warp wait for it at two barriers per iteration, where pointer
loads keep the warps going and, feeding a dot's buffer, are pipelined with `cp.async`. So the
pipeliner rewrites those into the masked loads of the descriptor's base pointer, shape and
strides, the arguments that follow its tensor map (frontend/tensor_maps.py), in the layout
the load had:

    %b = tt.descriptor_load %desc.tensor_map[%x, %y] : ... -> tensor<64x64xf16, #blocked>
    ==>
    rows = %x + arange(64) (i64), cols = %y + arange(64) (i64), in slices of #blocked
    %b = tt.load (splat %desc + rows * %desc.stride.0 + cols),
                 (0 <= rows < %desc.shape.0) & (0 <= cols < %desc.shape.1), 0.0

The last stride is 1, as the frontend makes it for every host descriptor. Only zero padding
reaches here: the frontend keeps NaN-padded loads in loops on pointers from the start.
"""

from __future__ import annotations

from ....dialects import arith, tt
from ....dialects.ttg.attributes import SliceEncodingAttr
from ....ir import FloatAttr, FloatType, IntegerAttr, Operation, RankedTensorType
from ....ir.types import i32, i64


class _Builder:
    """Inserts new ops before `anchor`."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor

    def add(self, op: Operation):
        op.location = self.anchor.location
        self.anchor.parent.insert_before(op, self.anchor)
        return op.results[0]

    def splat(self, scalar, t: RankedTensorType):
        return self.add(tt.SplatOp(scalar, result=t.clone(element_type=scalar.type)))


def to_pointer_load(load: Operation) -> None:
    """Replace `load` (a `tt.descriptor_load` of a tensor map argument) by pointer loads."""
    arguments = load.desc.parent_block.arguments
    base, rows_size, cols_size, row_stride = (arguments[load.desc.index + i] for i in (1, 2, 3, 4))
    t = load.result.type
    b = _Builder(load)
    rows = _coordinates(b, load.indices[0], t, 0)
    cols = _coordinates(b, load.indices[1], t, 1)
    offsets = b.add(arith.AddIOp(b.add(arith.MulIOp(rows, b.splat(row_stride, rows.type))), cols))
    pointers = b.add(tt.AddPtrOp(b.splat(base, t), offsets))
    zero = b.splat(b.add(arith.ConstantOp(IntegerAttr(0, i64))), rows.type)
    mask = None
    for coords, size in ((rows, rows_size), (cols, cols_size)):
        inside = b.add(arith.AndIOp(
            b.add(arith.CmpIOp("sge", coords, zero)),
            b.add(arith.CmpIOp("slt", coords, b.splat(size, coords.type))),
        ))  # fmt: skip
        mask = inside if mask is None else b.add(arith.AndIOp(mask, inside))
    element = t.element_type
    padding = FloatAttr(0.0, element) if isinstance(element, FloatType) else IntegerAttr(0, element)
    other = b.splat(b.add(arith.ConstantOp(padding)), t)
    loaded = b.add(tt.LoadOp(pointers, mask, other, result=t))
    load.result.replace_all_uses_with(loaded)
    load.erase()


def _coordinates(b: _Builder, start, t: RankedTensorType, dim: int):
    """`start + arange(t.shape[dim])` as i64, broadcast along the other dimension of `t`."""
    extent = t.shape[dim]
    sliced = RankedTensorType((extent,), i32, SliceEncodingAttr(1 - dim, t.encoding))
    span = b.add(tt.MakeRangeOp(0, extent, result=sliced))
    coords = b.add(arith.AddIOp(b.add(tt.SplatOp(start, result=sliced)), span))
    coords = b.add(arith.ExtSIOp(coords, out=sliced.clone(element_type=i64)))
    expanded = b.add(tt.ExpandDimsOp(coords, 1 - dim, result=_expanded(t, dim, i64)))
    return b.add(tt.BroadcastOp(expanded, result=t.clone(element_type=i64)))


def _expanded(t: RankedTensorType, dim: int, element) -> RankedTensorType:
    shape = [1, 1]
    shape[dim] = t.shape[dim]
    return RankedTensorType(tuple(shape), element, t.encoding)
