"""Loads, stores and atomics, through the interpreter's checked `Memory`.

Tensors of pointers go straight to the interpreter's builder and atomics, so an out-of-bounds
active lane raises the interpreter's error naming the argument. Block pointers
(`tt.make_tensor_ptr`, `tt.advance`) and tensor descriptors (`tt.make_tensor_descriptor`) are
values of their own here; an access through one becomes a block of pointers and a bounds mask
built exactly as the language's `block_ptr` builds them (`naiad/language/memory.py`: int32
coordinates `offset + arange`, widened to int64 and scaled by the strides), so both agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...dialects.tt.attributes import DescriptorReduceKind, PaddingOption, RMWOp
from ...ir import FloatType, element_type
from ..interpreter import atomics, floats
from ..interpreter.memory import Pointers
from .errors import UnsupportedOpError, handles
from .values import (
    canonical,
    host_dtype,
    int_width,
    lang_type,
    scalar_dtype,
    unsigned,
    view_dtype,
)


def _element_bytes(scalar) -> int:
    return max(1, scalar_dtype(scalar).primitive_bitwidth // 8)


def _block_pointers(base: Pointers, element, shape, strides, coords, checks):
    """Pointers (and the bounds mask over dimensions `checks`, None if none) of the block whose
    per-dimension coordinates are `coords` (int64 arrays, one per dimension, broadcastable)."""
    offset = np.zeros((), np.int64)
    mask = None
    for d, c in enumerate(coords):
        offset = offset + c * np.int64(strides[d])
        if d in checks:
            inside = (c >= 0) & (c < shape[d])
            mask = inside if mask is None else mask & inside
    block = np.broadcast_shapes(*(c.shape for c in coords))
    addr = base.addr.astype(np.int64) + np.broadcast_to(offset, block) * _element_bytes(element)
    if mask is not None:
        mask = np.broadcast_to(mask, block)
    return Pointers(addr.astype(np.uint64), base.origin), mask


def _block_coords(offsets, block_shape) -> list:
    """`offset + arange(size)` per dimension (int32 arithmetic, as the language's), shaped to
    broadcast along its own dimension."""
    rank = len(block_shape)
    coords = []
    for d, (offset, size) in enumerate(zip(offsets, block_shape)):
        c = (np.arange(size, dtype=np.int32) + np.int32(offset)).astype(np.int64)
        coords.append(c.reshape([size if i == d else 1 for i in range(rank)]))
    return coords


@dataclass(frozen=True)
class BlockPointer:
    """A `block_shape` window at `offsets` of a strided `shape` tensor at `base`."""

    base: Pointers
    element: object  # the IR element type
    shape: tuple
    strides: tuple
    offsets: tuple
    block_shape: tuple
    order: tuple

    def pointers(self, checks):
        coords = _block_coords(self.offsets, self.block_shape)
        return _block_pointers(self.base, self.element, self.shape, self.strides, coords, checks)


@dataclass(frozen=True)
class Descriptor:
    """A tensor descriptor: every access is bounds-checked on every dimension and reads
    `padding` ("zero" or "nan") out of bounds."""

    base: Pointers
    element: object
    shape: tuple
    strides: tuple
    block_shape: tuple
    padding: str

    def block(self, indices) -> BlockPointer:
        rank = len(self.shape)
        return BlockPointer(
            self.base,
            self.element,
            tuple(self.shape),
            tuple(self.strides),
            tuple(indices),
            tuple(self.block_shape),
            tuple(range(rank))[::-1],
        )


def _padding_fill(ir_type, padding: str):
    """The value of masked-off lanes: NaN for `padding = nan` on floats, else zero."""
    if padding == "nan" and isinstance(element_type(ir_type), FloatType):
        name = scalar_dtype(element_type(ir_type)).name
        return floats.convert(np.array(np.nan), "fp64", name)
    return np.zeros((), host_dtype(ir_type))


def _load(ev, ptrs, mask, other, ir_type):
    if isinstance(other, Pointers):
        other = other.addr
    return ev.builder.load(ptrs, mask, other, lang_type(ir_type))


def _ints(ev, values) -> tuple:
    return tuple(int(ev.value(v)) for v in values)


@handles("tt.load")
def load(ev, op, operands):
    ptr, mask, other = ev.value(op.ptr), ev.value(op.mask), ev.value(op.other)
    if isinstance(ptr, BlockPointer):
        ptrs, mask = ptr.pointers(list(op.boundaryCheck or ()))
        padding = "zero" if op.padding is None else PaddingOption.keyword(op.padding)
        other = None if mask is None else _padding_fill(op.result.type, padding)
        return _load(ev, ptrs, mask, other, op.result.type)
    return _load(ev, ptr, mask, other, op.result.type)


@handles("tt.store")
def store(ev, op, operands):
    ptr, value, mask = ev.value(op.ptr), ev.value(op.value), ev.value(op.mask)
    if isinstance(ptr, BlockPointer):
        ptr, mask = ptr.pointers(list(op.boundaryCheck or ()))
    ev.builder.store(ptr, value, mask)


@handles("tt.atomic_rmw")
def atomic_rmw(ev, op, operands):
    kind = RMWOp.keyword(op.atomic_rmw_op)
    ptr, val, mask = ev.value(op.ptr), ev.value(op.val), ev.value(op.mask)
    ir_type = op.result.type
    if kind in ("umax", "umin"):  # the only ones that read the bits as unsigned
        width = int_width(ir_type)
        old = atomics.atomic_rmw(
            ev.memory, kind, ptr, unsigned(val, width), mask, view_dtype(ir_type, True)
        )
        return canonical(old, width)
    return atomics.atomic_rmw(ev.memory, kind, ptr, np.asarray(val), mask, lang_type(ir_type))


@handles("tt.atomic_cas")
def atomic_cas(ev, op, operands):
    ptr, cmp, val = operands
    return atomics.atomic_cas(
        ev.memory, ptr, np.asarray(cmp), np.asarray(val), lang_type(op.result.type)
    )


@handles("tt.atomic_poll")
def atomic_poll(ev, op, operands):
    ptr, expected = ev.value(op.ptr), ev.value(op.expected)
    timeout = None if op.timeout is None else ev.value(op.timeout)
    expected = np.asarray(expected).astype(host_dtype(op.expected.type))
    return atomics.atomic_poll(ev.memory, ptr, expected, timeout)


@handles("tt.make_tensor_ptr")
def make_tensor_ptr(ev, op, operands):
    block = op.result.type.pointee_type
    return BlockPointer(
        ev.value(op.base),
        block.element_type,
        _ints(ev, op.shape),
        _ints(ev, op.strides),
        _ints(ev, op.offsets),
        block.shape,
        tuple(op.order),
    )


@handles("tt.advance")
def advance(ev, op, operands):
    ptr = ev.value(op.ptr)
    deltas = _ints(ev, op.offsets)
    offsets = tuple(int(np.int32(o) + np.int32(d)) for o, d in zip(ptr.offsets, deltas))
    return BlockPointer(
        ptr.base, ptr.element, ptr.shape, ptr.strides, offsets, ptr.block_shape, ptr.order
    )


@handles("tt.make_tensor_descriptor")
def make_tensor_descriptor(ev, op, operands):
    block = op.result.type.block_type
    padding = "zero" if op.padding is None else PaddingOption.keyword(op.padding)
    return Descriptor(
        ev.value(op.base),
        block.element_type,
        _ints(ev, op.shape),
        _ints(ev, op.strides),
        block.shape,
        padding,
    )


def _descriptor_block(ev, op):
    desc = ev.value(op.desc)
    ptrs, mask = desc.block(_ints(ev, op.indices)).pointers(range(len(desc.shape)))
    return desc, ptrs, mask


@handles("tt.descriptor_load")
def descriptor_load(ev, op, operands):
    desc, ptrs, mask = _descriptor_block(ev, op)
    fill = _padding_fill(op.result.type, desc.padding)
    value = _load(ev, ptrs, mask, fill, op.result.type.clone(shape=desc.block_shape))
    return value.reshape(op.result.type.shape)


@handles("tt.descriptor_store")
def descriptor_store(ev, op, operands):
    desc, ptrs, mask = _descriptor_block(ev, op)
    ev.builder.store(ptrs, np.reshape(ev.value(op.src), desc.block_shape), mask)


_REDUCE_KINDS = ("add", "min", "max", "and", "or", "xor")  # as the RMW kinds of the same names


@handles("tt.descriptor_reduce")
def descriptor_reduce(ev, op, operands):
    kind = DescriptorReduceKind.keyword(op.kind)
    if kind not in _REDUCE_KINDS:
        raise UnsupportedOpError(
            f"the reference evaluator cannot run '{op.name}' with kind {kind}: wrapping "
            "increments have no interpreter meaning"
        )
    desc, ptrs, mask = _descriptor_block(ev, op)
    src = np.reshape(ev.value(op.src), desc.block_shape)
    ty = lang_type(op.src.type.clone(shape=desc.block_shape))
    if isinstance(desc.element, FloatType) and kind == "add":
        kind = "fadd"
    atomics.atomic_rmw(ev.memory, kind, ptrs, src, mask, ty)


def _rows(ev, op):
    """Rows `x_offsets` of a 2-D descriptor from column `y_offset`: pointers and bounds."""
    desc = ev.value(op.desc)
    rows = np.asarray(ev.value(op.x_offsets)).astype(np.int64)[:, None]
    width = desc.block_shape[-1]
    cols = (np.arange(width, dtype=np.int32) + np.int32(ev.value(op.y_offset))).astype(np.int64)
    coords = [rows, cols[None, :]]
    ptrs, mask = _block_pointers(desc.base, desc.element, desc.shape, desc.strides, coords, (0, 1))
    return desc, ptrs, mask


@handles("tt.descriptor_gather")
def descriptor_gather(ev, op, operands):
    desc, ptrs, mask = _rows(ev, op)
    return _load(ev, ptrs, mask, _padding_fill(op.result.type, desc.padding), op.result.type)


@handles("tt.descriptor_scatter")
def descriptor_scatter(ev, op, operands):
    _, ptrs, mask = _rows(ev, op)
    ev.builder.store(ptrs, ev.value(op.src), mask)
