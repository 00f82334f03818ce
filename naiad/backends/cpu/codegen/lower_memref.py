"""`memref` and `bufferization` ops: views of kernel arguments and scratch buffers.

memref.reinterpret_cast   a View of an argument's memory (offset, sizes, strides)
memref.subview            a View of a View
memref.cast               the same memory (an unranked argument seen as `memref<?xT>`)
memref.view, memref.extract_aligned_pointer_as_index   addresses (lower_addresses.py)
memref.alloc / alloca     a scratch buffer (static shape; per program, no malloc)
memref.copy               a loop of row copies (row_copies.py), else an element loop
memref.load / store       one element
bufferization.to_tensor   the tensor *is* the buffer (the conversion only wraps fresh
                          buffers that are never written again)
bufferization.materialize_in_destination   a copy of the tensor into the view
"""

from __future__ import annotations

from llvmlite import ir

from ....dialects.view_like import kept_dimensions
from ....ir import DYNAMIC, MemRefType, UnrankedMemRefType, Value
from ..lower_scalar.types import llvm_type
from .chunked_loads import lower_chunked_copy, lower_chunked_tensor
from .function import I64, FunctionLowering, lowers
from .lower_addresses import AddressView
from .lower_linalg import _generic, copy_view
from .lower_matmul import reads_rows_in_place
from .prefetch import prefetch_next_iteration
from .row_copies import copy_rows, in_scratch
from .snapshots import store_copy
from .streaming import stream_mode, streamed
from .views import View


def index_value(fl: FunctionLowering, entry) -> object:
    """A mixed list entry (int, or an index SSA value) as an int or an i64 value."""
    return fl.value(entry) if isinstance(entry, Value) else int(entry)


def _indices(fl: FunctionLowering, values) -> list:
    return [fl.value(v) for v in values]


@lowers("memref.reinterpret_cast")
def _reinterpret_cast(fl: FunctionLowering, op) -> None:
    source = fl.value(op.source)
    pointer = source.pointer if isinstance(source, View) else source
    (offset,) = [index_value(fl, x) for x in op.mixed_offsets]
    sizes = [index_value(fl, x) for x in op.mixed_sizes]
    strides = [index_value(fl, x) for x in op.mixed_strides]
    element = llvm_type(op.results[0].type.element_type)
    view = View(pointer, element, offset, sizes, strides)
    fl.bind(op.results[0], view)
    prefetch_next_iteration(fl, op, view)


@lowers("memref.subview")
def _subview(fl: FunctionLowering, op) -> None:
    source: View = fl.value(op.source)
    offsets = [index_value(fl, x) for x in op.mixed_offsets]
    sizes = [index_value(fl, x) for x in op.mixed_sizes]
    strides = [index_value(fl, x) for x in op.mixed_strides]
    keep = kept(sizes, op.results[0].type.shape)
    fl.bind(op.results[0], source.subview(fl.builder, offsets, sizes, strides, keep))


def kept(sizes, result_shape) -> list[int]:
    """The dimensions a (possibly rank-reducing) slice of `sizes` keeps: the rule of the
    dialects' verifiers, a size given as a value being dynamic."""
    static = [size if isinstance(size, int) else DYNAMIC for size in sizes]
    dimensions = kept_dimensions(static, result_shape)
    if dimensions is None:
        raise AssertionError(f"internal: {result_shape} is no rank reduction of {static}")
    return dimensions


@lowers("memref.cast")
def _cast(fl: FunctionLowering, op) -> None:
    source = fl.value(op.source)
    result_type = op.results[0].type
    if isinstance(source, AddressView):  # memory, ranked or not: its addresses stay integers
        fl.bind(op.results[0], source)
        return
    pointer = source.pointer if isinstance(source, View) else source
    if isinstance(result_type, UnrankedMemRefType):
        fl.bind(op.results[0], pointer)
        return
    if isinstance(source, View):
        fl.bind(op.results[0], source)
        return
    # An unranked argument as `memref<?xT>`: its elements from the base, unit stride.
    element = llvm_type(result_type.element_type)
    fl.bind(op.results[0], View(pointer, element, 0, [ir.Constant(I64, 0)], [1]))


@lowers("memref.alloc", "memref.alloca")
def _alloc(fl: FunctionLowering, op) -> None:
    t: MemRefType = op.results[0].type
    fl.bind(op.results[0], fl.buffer(t.shape, t.element_type))


@lowers("memref.dealloc")
def _dealloc(fl: FunctionLowering, op) -> None:
    """Scratch buffers live as long as the program: nothing to free."""


@lowers("memref.copy")
def _copy(fl: FunctionLowering, op) -> None:
    chunked = _chunked(fl, op)
    if chunked is not None:  # a run of a load's rows, maybe the whole block (chunked_loads.py)
        lower_chunked_copy(fl, chunked, lambda source, target: _copy_views(fl, source, target))
        return
    _copy_views(fl, fl.value(op.source), fl.value(op.target))


def _chunked(fl: FunctionLowering, key):
    """The chunked load (chunked_loads.py) of a copy or tensor, where the target's dot reads
    operands in place well (lower_matmul.reads_rows_in_place)."""
    load = fl.plan.chunked.get(key)
    return load if load is not None and reads_rows_in_place(fl.module.triple) else None


def _copy_views(fl: FunctionLowering, source, target) -> None:
    if not copy_rows(fl.builder, source, target):
        copy_view(fl, source, target)


@lowers("memref.load")
def _load(fl: FunctionLowering, op) -> None:
    view: View = fl.value(op.memref)
    fl.bind(op.results[0], view.load(fl.builder, _indices(fl, op.indices)))


@lowers("memref.store")
def _store(fl: FunctionLowering, op) -> None:
    view: View = fl.value(op.memref)
    view.store(fl.builder, fl.value(op.value), _indices(fl, op.indices))


@lowers("bufferization.to_tensor")
def _to_tensor(fl: FunctionLowering, op) -> None:
    chunked = _chunked(fl, op.results[0])
    if chunked is not None:  # chunked_loads.py: the block's view where one run was all of it
        lower_chunked_tensor(fl, chunked, fl.value(op.operands[0]))
        return
    read = fl.plan.in_place.get(op.results[0])  # store_plan.py: read the loaded view itself
    fl.bind(op.results[0], fl.value(read if read is not None else op.operands[0]))


@lowers("bufferization.materialize_in_destination")
def _materialize(fl: FunctionLowering, op) -> None:
    source, dest = op.operands[0], op.operands[1]
    producer = fl.plan.stores.get(op)
    target = fl.value(dest)
    mode = stream_mode(op, target) if isinstance(target, View) and not op.results else None
    copy = fl.plan.copy_stores.get(op)
    if copy is not None:  # store_plan.py: a load stored as it is, from the loaded view
        store_copy(fl, copy, target, lambda block: _write(fl, op, target, mode, block))
        return
    if mode is not None:  # streaming.py: non-temporal stores, always or as the launch says
        block = None if producer is not None else fl.value(source)
        streamed(fl, op, target, mode, block, producer)
        return
    if producer is not None:  # store_plan.py: compute the block right into the destination
        _generic(fl, producer, into=target)
        return
    block = fl.value(source)
    disjoint = in_scratch(fl, block) and not in_scratch(fl, target)
    if not (disjoint and copy_rows(fl.builder, block, target)):
        copy_view(fl, block, target)
    for result in op.results:
        fl.bind(result, fl.value(dest))


def _write(fl: FunctionLowering, op, target, mode, block: View) -> None:
    """Copy `block` into `target`, streaming as `mode` says (None: normal stores)."""
    if mode is not None:
        streamed(fl, op, target, mode, block)
    else:
        copy_view(fl, block, target)


@lowers("builtin.unrealized_conversion_cast")
def _same_memory(fl: FunctionLowering, op) -> None:
    """An argument seen with another element type of the same size: the same address."""
    fl.bind(op.results[0], fl.value(op.operands[0]))
