"""A block load, store or atomic through a tensor map, as the pointer access it stands for.

Two passes give tensor-map accesses back to pointers. tritongpu-pipeline, for loads in loops: a
`tt.descriptor_load` outside a loop is one synchronous tensor copy (lowering/tma.py), but
inside a loop, a copy the pipeliner cannot overlap with the iterations before it (its block is
not a dot operand's buffer in the copy's layout: a reduction's input, an `mma.sync` operand, a
loop of one stage) would make every warp wait for it at two barriers per iteration, where
pointer loads keep the warps going and, feeding a dot's buffer, are pipelined with `cp.async`.
And the proof of an in-kernel map's alignment (tensor_map_proofs.py), for every access through
a map it cannot prove. Either way the access becomes the masked loads or stores of the
descriptor's base pointer, shape and strides, in the layout it had:

    %b = tt.descriptor_load %desc.tensor_map[%x, %y] : ... -> tensor<64x64xf16, #blocked>
    ==>
    rows = %x + arange(64) (i64), cols = %y + arange(64) (i64), in slices of #blocked
    %b = tt.load (splat %desc + rows * %desc.stride.0 + cols),
                 (0 <= rows < %desc.shape.0) & (0 <= cols < %desc.shape.1), padding

The parts are a host descriptor's arguments that follow its tensor map (frontend/tensor_maps.py),
or the operands of the `tt.make_tensor_descriptor` that made it in the kernel, sizes i32
(`parts`). The last stride is 1 (the frontend makes maps of no other descriptor). A map of
more dimensions moves 2-D blocks of its last two (its leading block dimensions are 1): the
leading indices move the base pointer by their strides and bound the mask. The padding
is zero, or NaN for an in-kernel descriptor made with `padding_option="nan"` (a host
descriptor's NaN-padded loads in loops keep pointers from the frontend on).
"""

from __future__ import annotations

from ....dialects import arith, tt
from ....dialects.tt.attributes import DescriptorReduceKind, PaddingOption
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
        return op.results[0] if op.results else None

    def splat(self, scalar, t: RankedTensorType):
        return self.add(tt.SplatOp(scalar, result=t.clone(element_type=scalar.type)))


def parts(desc) -> tuple:
    """(base pointer, shape, strides) of a tensor map `desc`: the arguments that follow a host
    descriptor's map (frontend/tensor_maps.py), or the operands of the
    `tt.make_tensor_descriptor` that made it in the kernel."""
    made = desc.defining_op
    if isinstance(made, tt.MakeTensorDescOp):
        return made.base, tuple(made.shape), tuple(made.strides)
    arguments = desc.parent_block.arguments
    rank = desc.type.block_type.rank
    first = desc.index + 2
    shape = tuple(arguments[first : first + rank])
    return arguments[desc.index + 1], shape, tuple(arguments[first + rank : first + 2 * rank])


def to_pointer_load(load: Operation) -> None:
    """Replace `load` (a `tt.descriptor_load` of a tensor map) by pointer loads; what lies
    outside the tensor reads as the descriptor's padding."""
    b = _Builder(load)
    t = load.result.type
    pointers, mask = _block(b, load.desc, load.indices, t)
    element = t.element_type
    nan = _padding(load.desc) == "nan"
    fill = (
        FloatAttr(float("nan") if nan else 0.0, element)
        if isinstance(element, FloatType)
        else IntegerAttr(0, element)
    )
    other = b.splat(b.add(arith.ConstantOp(fill)), t)
    loaded = b.add(tt.LoadOp(pointers, mask, other, result=t))
    load.result.replace_all_uses_with(loaded)
    load.erase()


def to_pointer_store(store: Operation) -> None:
    """Replace `store` (a `tt.descriptor_store` through a tensor map) by a masked pointer
    store: what lies outside the tensor is not written."""
    b = _Builder(store)
    pointers, mask = _block(b, store.desc, store.indices, store.src.type)
    b.add(tt.StoreOp(pointers, store.src, mask))
    store.erase()


def to_pointer_reduce(reduce: Operation) -> None:
    """Replace `reduce` (a `tt.descriptor_reduce` through a tensor map: add, and, or, xor) by
    masked element atomics of its kind, `release` at GPU scope as the frontend's pointer form."""
    b = _Builder(reduce)
    pointers, mask = _block(b, reduce.desc, reduce.indices, reduce.src.type)
    kind = DescriptorReduceKind.keyword(reduce.kind)
    if kind == "add" and isinstance(reduce.src.type.element_type, FloatType):
        kind = "fadd"
    b.add(tt.AtomicRMWOp(kind, pointers, reduce.src, mask, sem="release", scope="gpu"))
    reduce.erase()


def _block(b: _Builder, desc, indices, t: RankedTensorType):
    """(the pointers, the in-bounds mask) of the 2-D block of type `t` at `indices` of the
    tensor map `desc` (its last two dimensions), in `t`'s layout."""
    base, shape, strides = parts(desc)
    rows_size, cols_size = (_wide(b, size) for size in shape[-2:])
    rows = _coordinates(b, indices[-2], t, 0)
    cols = _coordinates(b, indices[-1], t, 1)
    row_stride = strides[-2]
    offsets = b.add(arith.AddIOp(b.add(arith.MulIOp(rows, b.splat(row_stride, rows.type))), cols))
    zero = b.splat(b.add(arith.ConstantOp(IntegerAttr(0, i64))), rows.type)
    mask = None
    for index, size, stride in zip(indices[:-2], shape[:-2], strides[:-2]):  # leading: scalars
        at = b.splat(b.add(arith.ExtSIOp(index, out=i64)), rows.type)
        offsets = b.add(arith.AddIOp(offsets, b.add(arith.MulIOp(at, b.splat(stride, rows.type)))))
        rows_bound = b.splat(_wide(b, size), rows.type)
        inside = b.add(arith.AndIOp(
            b.add(arith.CmpIOp("sge", at, zero)), b.add(arith.CmpIOp("slt", at, rows_bound))
        ))  # fmt: skip
        mask = inside if mask is None else b.add(arith.AndIOp(mask, inside))
    pointers = b.add(tt.AddPtrOp(b.splat(base, t), offsets))
    for coords, size in ((rows, rows_size), (cols, cols_size)):
        inside = b.add(arith.AndIOp(
            b.add(arith.CmpIOp("sge", coords, zero)),
            b.add(arith.CmpIOp("slt", coords, b.splat(size, coords.type))),
        ))  # fmt: skip
        mask = inside if mask is None else b.add(arith.AndIOp(mask, inside))
    return pointers, mask


def _padding(desc) -> str:
    """`zero` or `nan`: an in-kernel descriptor's; a host one's loads in loops are zero-padded
    (frontend/tensor_maps.py)."""
    made = desc.defining_op
    if isinstance(made, tt.MakeTensorDescOp) and made.padding is not None:
        return PaddingOption.keyword(made.padding)
    return "zero"


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
