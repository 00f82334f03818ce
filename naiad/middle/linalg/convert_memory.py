"""Loads, stores and atomics.

A load or store through a *structured* pointer block (pointer_analysis.py) whose mask is a
*prefix box* (mask_analysis.py) and whose `other` is one value reads or writes a strided view of
its argument:

    %v = memref.reinterpret_cast %arg to offset: [%start], sizes: [128, 64], strides: [%s, 1]
    %buf = memref.alloc() : memref<128x64xf32>
    scf.if (box smaller than the block) { linalg.fill ins(%other) outs(%buf) }
    memref.copy %v[0, 0][%d0, %d1][1, 1] → %buf[0, 0][%d0, %d1][1, 1]      (subviews)
    %t = bufferization.to_tensor %buf restrict writable

and a store `bufferization.materialize_in_destination`s the box of the value into the view.
Offsets that wrap (`% M`, strided.py) are read and written the same way, one view per run of
rows between wrap points (emit_memory.py). Every other access — offsets the analysis cannot
follow, masks that are not boxes, scalar pointers, atomics — goes element by element through
the argument seen as a flat
`memref<?xT>`: a gather is a `linalg.generic` whose body loads under `scf.if %mask`, a scatter
or an atomic is a loop nest over the block (stores are ordered: two lanes writing one address
keep the later lane's value, as the interpreter does).

Masked-off lanes of a load without `other` read 0.
"""

from __future__ import annotations

from ...dialects import arith, tt
from ...dialects.tt.attributes import CacheModifier, EvictionPolicy, RMWOp
from ...ir import BoolAttr, DenseElementsAttr, RankedTensorType, element_type
from . import emit, emit_atomics, emit_memory
from .conversion import FunctionConversion, converts
from .emit_memory import Window, box_window, layout


def _uniform_other(c: FunctionConversion, other):
    """The scalar every element of `other` holds, converted; None if not uniform."""
    op = other.defining_op
    if isinstance(op, tt.SplatOp):
        return c.value(op.src)
    attr = op.value if isinstance(op, arith.ConstantOp) else None
    if isinstance(attr, DenseElementsAttr) and attr.is_splat:
        return emit.scalar_constant(c, attr.splat_value, element_type(other.type))
    return None


@converts(tt.LoadOp)
def _load(c: FunctionConversion, op) -> None:
    result_type = op.result.type
    pointer = c.pointer(op.ptr)
    if not isinstance(result_type, RankedTensorType):
        mask = None if op.mask is None else c.value(op.mask)
        other = None if op.other is None else c.value(op.other)
        c.bind(op.result, emit_memory.load_scalar(c, pointer, result_type, mask, other))
        return
    state = c.analysis.pointer(op.ptr)
    box = None if op.mask is None else c.masks.mask(op.mask)
    other = None if op.other is None else _uniform_other(c, op.other)
    structured = state is not None and (op.mask is None or box is not None)
    if structured and (op.other is None or other is not None):
        shape = result_type.shape
        window = Window.full(shape) if box is None else box_window(c, box, shape)
        padding = other if other is not None else emit.zero_of(c, result_type.element_type)
        loaded = emit_memory.load_window(
            c, pointer.base, layout(c, state.offsets), window, padding, result_type
        )
        c.bind(op.result, loaded)
        return
    mask = None if op.mask is None else c.value(op.mask)
    other_block = None if op.other is None else c.value(op.other)
    c.bind(op.result, emit_memory.gather(c, pointer, mask, other_block, result_type))


# A structured store's cache hints, for a back end that can write around its caches: true for
# `cache_modifier=".cs"` or `eviction_policy="evict_first"` (stream: the data will not be read
# again soon), false for `eviction_policy="evict_last"` (keep it cached); absent, the back end
# chooses (the CPU's, by the bytes a launch stores: backends/cpu/codegen/streaming.py).
NONTEMPORAL_ATTRIBUTE = "naiad.nontemporal"


def store_hints(op) -> dict | None:
    """The attributes that carry `op`'s (a tt.store) hints to its structured writes."""
    cache = CacheModifier.keyword(op.cache) if op.cache is not None else "none"
    evict = EvictionPolicy.keyword(op.evict) if op.evict is not None else "evict_normal"
    if cache == "cs" or evict == "evict_first":
        return {NONTEMPORAL_ATTRIBUTE: BoolAttr(True)}
    if evict == "evict_last":
        return {NONTEMPORAL_ATTRIBUTE: BoolAttr(False)}
    return None


@converts(tt.StoreOp)
def _store(c: FunctionConversion, op) -> None:
    pointer = c.pointer(op.ptr)
    value = c.value(op.value)
    if not isinstance(op.value.type, RankedTensorType):
        mask = None if op.mask is None else c.value(op.mask)
        emit_memory.store_scalar(c, pointer, value, mask)
        return
    state = c.analysis.pointer(op.ptr)
    box = None if op.mask is None else c.masks.mask(op.mask)
    if state is not None and (op.mask is None or box is not None):
        shape = op.value.type.shape
        window = Window.full(shape) if box is None else box_window(c, box, shape)
        hints = store_hints(op)
        emit_memory.store_window(c, pointer.base, layout(c, state.offsets), window, value, hints)
        return
    emit_memory.scatter(c, pointer, value, None if op.mask is None else c.value(op.mask))


@converts(tt.AtomicRMWOp)
def _atomic_rmw(c: FunctionConversion, op) -> None:
    kind = RMWOp.keyword(op.atomic_rmw_op)
    mask = None if op.mask is None else c.value(op.mask)
    result = emit_atomics.atomic(
        c, c.pointer(op.ptr), kind, [c.value(op.val)], mask, op.result.type
    )
    c.bind(op.result, result)


@converts(tt.AtomicCASOp)
def _atomic_cas(c: FunctionConversion, op) -> None:
    operands = [c.value(op.cmp), c.value(op.val)]
    result = emit_atomics.atomic(c, c.pointer(op.ptr), "cas", operands, None, op.result.type)
    c.bind(op.result, result)
