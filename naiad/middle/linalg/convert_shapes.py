"""Shape ops: creation (`tt.make_range`, `tt.splat`, constants) and re-shaping (`tt.broadcast`,
`tt.expand_dims`, `tt.reshape`, `tt.trans`, `tt.cat`, `tt.join`, `tt.split`, `tt.unsplat`).

A shape op on a block of pointers is the same shape op on its offsets (the base is unchanged),
so each converter here works on a value or, through `_on_offsets`, on a pointer.

    tt.make_range      linalg.generic { linalg.index + start }
    tt.splat           linalg.fill
    tt.broadcast       linalg.generic with a broadcasting indexing map (size-1 dims read at 0)
    tt.expand_dims     tensor.expand_shape
    tt.reshape         tensor.collapse_shape to 1-D, then tensor.expand_shape (row-major order;
                       `can_reorder` lets Triton pick any order, and row-major is one)
    tt.trans           linalg.transpose
    tt.cat             two tensor.insert_slice along dimension 0
    tt.join / split    tensor.insert_slice / tensor.extract_slice on a new minor dimension of 2
    tt.unsplat         tensor.extract
    tt.gather          linalg.generic reading the source with tensor.extract at the gathered
                       index along the axis (linalg.index elsewhere)
"""

from __future__ import annotations

from ...dialects import arith, tt, ub
from ...ir import RankedTensorType, is_pointer_like
from . import emit, emit_tensor
from .conversion import FunctionConversion, Pointer, converts, fail, is_pointer, offset_type


def _on_offsets(c: FunctionConversion, op, transform) -> None:
    """Apply `transform(value, result_type)` to the source of a one-source shape op, or to its
    offsets when the source is a pointer."""
    result = op.results[0]
    if is_pointer(op.src):
        pointer = c.pointer(op.src)
        offsets = transform(pointer.offset, offset_type(result.type))
        c.bind(result, Pointer(pointer.base, offsets))
    else:
        c.bind(result, transform(c.value(op.src), result.type))


@converts(tt.MakeRangeOp)
def _make_range(c: FunctionConversion, op) -> None:
    c.bind(op.result, emit_tensor.make_range(c, op.start.value, op.result.type))


@converts(tt.SplatOp)
def _splat(c: FunctionConversion, op) -> None:
    _on_offsets(c, op, lambda value, t: emit.fill(c, value, t))


@converts(tt.BroadcastOp)
def _broadcast(c: FunctionConversion, op) -> None:
    _on_offsets(c, op, lambda value, t: emit_tensor.broadcast(c, value, t))


@converts(tt.ExpandDimsOp)
def _expand_dims(c: FunctionConversion, op) -> None:
    axis = op.axis.value
    _on_offsets(c, op, lambda value, t: emit_tensor.expand_dims(c, value, axis, t))


@converts(tt.ReshapeOp)
def _reshape(c: FunctionConversion, op) -> None:
    _on_offsets(c, op, lambda value, t: emit_tensor.reshape(c, value, t))


@converts(tt.TransOp)
def _trans(c: FunctionConversion, op) -> None:
    order = list(op.order.values)
    _on_offsets(c, op, lambda value, t: emit_tensor.transpose(c, value, order, t))


@converts(tt.UnsplatOp)
def _unsplat(c: FunctionConversion, op) -> None:
    _on_offsets(c, op, lambda value, t: emit.extract_element(c, value, [0] * value.type.rank))


@converts(tt.CatOp)
def _cat(c: FunctionConversion, op) -> None:
    lhs, rhs = c.value(op.lhs), c.value(op.rhs)
    result = emit.empty(c, op.result.type)
    rank = op.result.type.rank
    first = op.lhs.type.shape[0]
    result = emit.insert_slice(c, lhs, result, [0] * rank, list(op.lhs.type.shape))
    offsets = [first] + [0] * (rank - 1)
    c.bind(op.result, emit.insert_slice(c, rhs, result, offsets, list(op.rhs.type.shape)))


@converts(tt.JoinOp)
def _join(c: FunctionConversion, op) -> None:
    result_type = op.result.type
    rank = result_type.rank
    sizes = [*op.lhs.type.shape, 1]
    result = emit.empty(c, result_type)
    for i, part in enumerate((op.lhs, op.rhs)):
        offsets = [0] * (rank - 1) + [i]
        result = emit.insert_slice(c, c.value(part), result, offsets, sizes)
    c.bind(op.result, result)


@converts(tt.SplitOp)
def _split(c: FunctionConversion, op) -> None:
    src = c.value(op.src)
    shape = list(op.src.type.shape)
    for i, result in enumerate((op.outLHS, op.outRHS)):
        offsets = [0] * (len(shape) - 1) + [i]
        sizes = [*shape[:-1], 1]
        c.bind(result, emit.extract_slice(c, src, offsets, sizes, result.type))


@converts(tt.GatherOp)
def _gather(c: FunctionConversion, op) -> None:
    source, indices = c.value(op.src), c.value(op.indices)
    c.bind(op.result, emit_tensor.gather(c, source, indices, op.axis.value, op.result.type))


@converts(arith.ConstantOp)
def _constant(c: FunctionConversion, op) -> None:
    c.bind(op.result, c.emit(op.clone_as([], [op.result.type])).result)


@converts(ub.PoisonOp)
def _poison(c: FunctionConversion, op) -> None:
    """An undefined value (a path that returns none of a function's values): any will do, and
    zero is the cheapest, as the reference evaluator gives."""
    t = op.result.type
    element = t.element_type if isinstance(t, RankedTensorType) else t
    if is_pointer_like(element):
        fail(op, "an undefined pointer (ub.poison) does not compile for the CPU")
    zero = emit.zero_of(c, element)
    c.bind(op.result, emit.fill(c, zero, t) if isinstance(t, RankedTensorType) else zero)
