"""Tensors in shared-memory buffers: `ttg.local_alloc`, `ttg.local_load`, the views
`ttg.memdesc_subslice` / `ttg.memdesc_index`, and `ttg.local_dealloc`.

A buffer lives at the byte offset allocate-shared-memory gave its `ttg.local_alloc`
(`allocation.offset`), stored in the layout of its `!ttg.memdesc` encoding (an element ->
offset map, `layouts/conversions.py`). A memdesc value is not registers but a `SharedView`:
the buffer's base, its map, and the view's first element; a view of a view only moves that
origin. Since the map is linear over GF(2) and a view's origin is a multiple of its shape (a
power of two in each dimension, as Triton's subslices are), the offset of element `c` of the
view is `offset(c) XOR offset(origin)`: the thread's part of an address is computed once per
layout, and each view adds a constant.

- `local_alloc %x` stores each element once (threads holding copies skip theirs), in vectors
  of up to 16 bytes (ldmatrix.store_plan), or with `stmatrix` on sm_90 where the registers and
  the buffer's layout fit it (a tensor-core accumulator, stmatrix.py).
- `local_load` into an `mma.sync` operand reads with `ldmatrix` (ldmatrix.load_plan); into any
  other layout, one element per register.

Barriers (barriers.py): a store waits for the owed barrier that frees the bytes from earlier
readers; its own readers need one barrier after the stores, paid by the first `local_load`
(`stores_pending`), so that the two operands of a dot are stored before one barrier; a
`local_load` leaves its barrier owed, as a conversion does.

    %a = ttg.local_alloc %x : (tensor<128x64xf16, #blocked>) -> !ttg.memdesc<128x64xf16, ...>
    %k = ttg.memdesc_subslice %a [0, 16] : ... -> !ttg.memdesc<128x16xf16, ..., 128x64>
    %o = ttg.local_load %k : ... -> tensor<128x16xf16, #ttg.dot_op<{opIdx = 0, ...}>>
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects.ttg.attributes import NVMMASharedEncodingAttr
from ..layouts import LinearLayout
from ..passes.allocate_shared_memory import buffer_alignment
from . import barriers
from .context import Context, lowers
from .emitter import SHARED_PTR, bit_width, from_memory, llvm_type, memory_type
from .indexing import layout_of
from .ldmatrix import emit_loads, fragment_dims, load_plan, shared_offsets
from .stmatrix import store_registers
from .thread_addresses import ThreadAddresses


@dataclass(frozen=True)
class SharedView:
    """A memdesc: the buffer at byte `base` of dynamic shared memory, its element -> offset
    map `to_offset` (over the allocation's shape; of one slot for a multi-buffered one), the
    view's first element, and `dynamic`: the bytes (an i32 value) of the slot
    `ttg.memdesc_index` chose, None before."""

    base: int
    to_offset: LinearLayout
    origin: tuple[int, ...]
    element_bytes: int
    dynamic: str | None = None

    @property
    def slot_bytes(self) -> int:
        return (1 << self.to_offset.total_in_bits) * self.element_bytes

    def offset_of(self, coords) -> int:
        """The element offset the buffer's map gives view coordinates `coords`."""
        return self.to_offset.apply(**dict(zip(self.to_offset.in_dims, coords)))[0]

    def origin_offset(self) -> int:
        """The element offset of the view's first element (XOR-ed into its addresses)."""
        return self.offset_of(self.origin)


def _view_of(ctx: Context, value) -> SharedView:
    return ctx.values[value]


def place_without_reuse(func) -> tuple[dict, int]:
    """Offsets for the buffers of a module allocate-shared-memory did not place (lowering
    tests do not run it): each `ttg.local_alloc` its own bytes, one after another; and the
    bytes they take, above which the scratch goes."""
    offsets, end = {}, 0
    for op in func.walk():
        if op.name == "ttg.local_alloc":
            t = op.result.type
            size = bit_width(t.element_type) // 8
            for extent in t.alloc_shape:
                size *= extent
            alignment = buffer_alignment(t)
            offsets[op] = -(-end // alignment) * alignment
            end = offsets[op] + size
    return offsets, end


@lowers("ttg.local_alloc")
def _local_alloc(ctx: Context, op) -> None:
    t = op.result.type
    # A multi-buffered allocation (the pipeliner's ring) has the slots as a leading dimension
    # its encoding does not name: the map is one slot's.
    slot_shape = t.alloc_shape[len(t.alloc_shape) - len(t.encoding.order) :]
    to_offset = shared_offsets(t.encoding, slot_shape).invert()
    placed = op.attributes.get("allocation.offset")
    view = SharedView(
        ctx.buffer_offsets[op] if placed is None else int(placed.value),
        to_offset,
        (0,) * len(slot_shape),
        bit_width(t.element_type) // 8,
    )
    ctx.values[op.result] = view
    if op.src is not None:
        store_tensor(ctx, view, op.src, t)


def store_tensor(ctx: Context, view: SharedView, value, memdesc) -> None:
    """Store the register tensor `value` into `view` (of type `memdesc`); its readers pay the
    barrier after, fenced to the asynchronous proxy first where wgmma reads the buffer."""
    barriers.pay(ctx)  # earlier readers of these bytes may not be done
    ctx.em.scratch_base = view.base
    store_registers(ctx, value, view.to_offset, view.origin_offset(), view.dynamic)
    ctx.stores_pending = True
    ctx.async_proxy_stores |= isinstance(memdesc.encoding, NVMMASharedEncodingAttr)


@lowers("ttg.local_store")
def _local_store(ctx: Context, op) -> None:
    store_tensor(ctx, _view_of(ctx, op.dst), op.src, op.dst.type)


@lowers("ttg.local_load")
def _local_load(ctx: Context, op) -> None:
    view = _view_of(ctx, op.src)
    barriers.sync_stores(ctx)
    ctx.em.scratch_base = view.base
    t = op.result.type
    elem = llvm_type(t)
    loads = _ldmatrix_plan(view, op.src.type, t)
    if loads is not None:
        base = view.origin_offset()
        ctx[op.result] = emit_loads(ctx, loads, elem, view.element_bytes, base, view.dynamic)
    else:
        ctx[op.result] = _element_loads(ctx, view, t)
    barriers.owe(ctx)


def _ldmatrix_plan(view: SharedView, src_t, dst_t):
    """The `ldmatrix` loads of a dot operand from a buffer whose rows run along its fastest
    dimension, or None."""
    order = getattr(src_t.encoding, "order", None)
    if not order or fragment_dims(dst_t) is None:
        return None
    return load_plan(view.to_offset, dst_t, order[0])


def _element_loads(ctx: Context, view: SharedView, t) -> list[str]:
    """One load per register: the general path, for layouts `ldmatrix` does not make."""
    em = ctx.em
    offsets = layout_of(t).compose(view.to_offset)
    nbytes = view.element_bytes
    addresses = ThreadAddresses(ctx, offsets, nbytes, view.dynamic)
    base = view.origin_offset()
    mem = memory_type(t.element_type)
    registers = []
    for r in range(offsets.in_dim_size("register")):
        address = addresses.address((offsets.apply(register=r)[0] ^ base) * nbytes)
        value = em.op(f"load {mem}, {SHARED_PTR} {address}, align {view.element_bytes}")
        registers.append(from_memory(em, value, t.element_type))
    return registers


@lowers("ttg.memdesc_subslice")
def _memdesc_subslice(ctx: Context, op) -> None:
    view = _view_of(ctx, op.src)
    offsets = [int(o) for o in op.attributes["offsets"].values]
    origin = tuple(a + b for a, b in zip(view.origin, offsets))
    ctx.values[op.result] = SharedView(
        view.base, view.to_offset, origin, view.element_bytes, view.dynamic
    )


@lowers("ttg.memdesc_index")
def _memdesc_index(ctx: Context, op) -> None:
    """One slot of a multi-buffered allocation: its bytes, a multiple of the slot size, are
    added to every address (`thread_bytes`)."""
    view = _view_of(ctx, op.src)
    (index,) = ctx[op.index]
    offset = ctx.em.op(f"mul i32 {index}, {view.slot_bytes}")
    if view.dynamic is not None:
        offset = ctx.em.op(f"add i32 {offset}, {view.dynamic}")
    ctx.values[op.result] = SharedView(
        view.base, view.to_offset, view.origin, view.element_bytes, offset
    )


@lowers("ttg.memdesc_trans")
def _memdesc_trans(ctx: Context, op) -> None:
    """The same bytes with the view's dimensions permuted: the element -> offset map reads
    view dimension i as the source's dimension `order[i]`."""
    view = _view_of(ctx, op.src)
    order = [int(o) for o in op.attributes["order"].values]
    origin = tuple(view.origin[o] for o in order)
    ctx.values[op.result] = SharedView(
        view.base, permuted(view.to_offset, order), origin, view.element_bytes, view.dynamic
    )


def permuted(to_offset: LinearLayout, order: list[int]) -> LinearLayout:
    """The element -> offset map of a view whose dimension i is dimension `order[i]`."""
    names = to_offset.in_dims
    bases = {f"dim{i}": to_offset.bases(names[o]) for i, o in enumerate(order)}
    outs = {name: to_offset.out_dim_size(name) for name in to_offset.out_dims}
    return LinearLayout(bases, outs)


@lowers("ttg.local_dealloc")
def _local_dealloc(ctx: Context, op) -> None:
    """Nothing to emit: allocate-shared-memory already ended the buffer's live range here."""
