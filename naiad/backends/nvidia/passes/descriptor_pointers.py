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
reaches here: the frontend keeps NaN-padded loads in loops on pointers from the start. A
descriptor made in the kernel (`tt.make_tensor_descriptor`) has its parts as the op's operands
(`parts`), its sizes as i32.
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


def parts(desc) -> tuple:
    """(base pointer, rows, columns, row stride) of a 2-D tensor map `desc`: the arguments
    that follow a host descriptor's map (frontend/tensor_maps.py), or the operands of the
    `tt.make_tensor_descriptor` that made it in the kernel."""
    made = desc.defining_op
    if isinstance(made, tt.MakeTensorDescOp):
        return (made.base, *made.shape, made.strides[0])
    arguments = desc.parent_block.arguments
    return tuple(arguments[desc.index + i] for i in (1, 2, 3, 4))


def to_pointer_load(load: Operation) -> None:
    """Replace `load` (a `tt.descriptor_load` of a tensor map) by pointer loads."""
    b = _Builder(load)
    base, rows_size, cols_size, row_stride = parts(load.desc)
    rows_size, cols_size = (_wide(b, size) for size in (rows_size, cols_size))
    t = load.result.type
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


def _wide(b: _Builder, size):
    """An i64 size (an in-kernel descriptor's are i32)."""
    return size if size.type == i64 else b.add(arith.ExtSIOp(size, out=i64))


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
