"""Tensor descriptors as structured boxes: a descriptor is a base, the shape and the strides of
a tensor in it; a block read or written at offsets `o` is the strided view of the tensor at
`Σ_d o_d · stride_d` with the box `0 <= o_d + i_d < shape_d` per dimension (TMA's bounds).

    tt.make_tensor_descriptor %p, [%M, %N], [%sm, %c1]     a Descriptor (no op)
    tt.descriptor_load %d[%x, %y]        the box of the view copied into a buffer filled with
                                         the padding (zero, or NaN for padding = nan)
    tt.descriptor_store %d[%x, %y], %v   the box of %v written into the view

A descriptor passed by the host is a kernel argument followed by its shape (i32) and strides
(i64) arguments, rank of each (Triton's host-descriptor convention: `desc`, `desc.shape.0`,
..., `desc.stride.0`, ...). Naiad's own frontend makes pointers of descriptors; these
converters serve TTIR written by other frontends and Triton's own dumps.
"""

from __future__ import annotations

from ...dialects import tt
from ...dialects.tt.attributes import PaddingOption
from ...ir import FloatType, Value, i32, i64
from . import emit
from .conversion import Descriptor, FunctionConversion, converts, fail
from .emit import index_op, scalar_constant, static_or_value, to_index
from .emit_memory import Layout, Window, load_window, store_window


@converts(tt.MakeTensorDescOp)
def _make(c: FunctionConversion, op) -> None:
    pointer = c.pointer(op.base)
    state = c.analysis.pointer(op.base)
    start = (
        to_index(c, pointer.offset) if state is None else static_or_value(c, state.offsets.start)
    )
    padding = "zero" if op.padding is None else PaddingOption.keyword(op.padding)
    descriptor = Descriptor(
        pointer.base,
        start,
        tuple(static_or_value(c, c.analysis.scalar(v)) for v in op.shape),
        tuple(static_or_value(c, c.analysis.scalar(v)) for v in op.strides),
        padding,
    )
    c.bind(op.result, descriptor)


def bind_descriptor_argument(c: FunctionConversion, function, position: int, base: Value) -> None:
    """Bind the descriptor argument `position` of `function` (its converted base is `base`)
    from the shape and stride arguments that follow it."""
    old = function.arguments[position]
    rank = old.type.block_type.rank
    following = function.arguments[position + 1 : position + 1 + 2 * rank]
    types = [a.type for a in following]
    if types != [i32] * rank + [i64] * rank:
        fail(
            function,
            f"descriptor argument {position} is not followed by its {rank} shape (i32) and "
            f"{rank} stride (i64) arguments",
        )
    values = [to_index(c, c.value(a)) for a in following]
    c.bind(old, Descriptor(base, 0, tuple(values[:rank]), tuple(values[rank:]), "zero"))


def _box(c: FunctionConversion, descriptor: Descriptor, indices, block_shape):
    """The view of the block at `indices` and the window of it inside the tensor."""
    offsets = [to_index(c, c.value(v)) for v in indices]
    start = descriptor.start
    lows, sizes = [], []
    for offset, stride, extent, n in zip(
        offsets, descriptor.strides, descriptor.shape, block_shape
    ):
        start = index_op(c, "arith.addi", start, index_op(c, "arith.muli", offset, stride))
        before = index_op(c, "arith.subi", 0, offset)
        low = _clamp(c, before, n)
        high = _clamp(c, index_op(c, "arith.subi", extent, offset), n)
        lows.append(low)
        sizes.append(index_op(c, "arith.maxsi", index_op(c, "arith.subi", high, low), 0))
    layout = Layout(start, tuple(block_shape), tuple(descriptor.strides))
    return layout, Window(tuple(lows), tuple(sizes))


def _clamp(c, value, n: int):
    """`value` clamped to [0, n]."""
    return index_op(c, "arith.maxsi", index_op(c, "arith.minsi", value, n), 0)


@converts(tt.DescriptorLoadOp)
def _load(c: FunctionConversion, op) -> None:
    descriptor = c.descriptor(op.desc)
    t = op.result.type
    layout, window = _box(c, descriptor, op.indices, t.shape)
    element = t.element_type
    if descriptor.padding == "nan" and isinstance(element, FloatType):
        padding = scalar_constant(c, float("nan"), element)
    else:
        padding = emit.zero_of(c, element)
    c.bind(op.result, load_window(c, descriptor.base, layout, window, padding, t))


@converts(tt.DescriptorStoreOp)
def _store(c: FunctionConversion, op) -> None:
    descriptor = c.descriptor(op.desc)
    layout, window = _box(c, descriptor, op.indices, op.src.type.shape)
    store_window(c, descriptor.base, layout, window, c.value(op.src))
