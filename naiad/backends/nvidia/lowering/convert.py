"""`ttg.convert_layout`, and the shared-memory scratch that conversions and reductions use.

A conversion follows the plan `convert_plan.py` makes from the two linear layouts: a
renumbering of the registers (no instruction), shuffles within warps (`convert_shuffle.py`),
or a round trip through the scratch in the swizzled layout `convert_swizzle.py` chooses:
vector stores of the source's distinct elements (threads holding copies skip theirs), a
barrier, vector loads of the destination's; the barrier that frees the scratch for the next
user is owed and paid before that user writes (barriers.py). On sm_90 the stores of a 16-bit
source are `stmatrix` where the plan found a layout that allows them (an accumulator into a
blocked layout: `convert_plan.py`, `stmatrix.py`), unless the kernel runs under the register
cap of a memory-bound kernel (`occupancy.py`). The `ldmatrix` path of dot
operands (`ldmatrix.py`) is tried before the general plans.

The scratch lies in dynamic shared memory (`@global_smem`) where allocate-shared-memory placed
it for the op (`Context.need_shared`); no user writes it while another's reads may be pending
(a barrier before the write, or the owed one paid). Where the pass gave a round trip less
than its tile (the kernel would not fit the target's shared memory otherwise, or the bytes
would stay taken beside a live buffer), it goes in
rounds (`convert_rounds.py`): the tile's bytes over the planned ones. The scalar helpers
below (row-major positions, one element at a time) serve the reductions, scans and shape ops.
"""

from __future__ import annotations

from . import barriers
from .context import Context, lowers
from .convert_plan import Renumber, Shared, Shuffle, plan_convert, plan_shared
from .convert_shuffle import emit_shuffle
from .emitter import SHARED_PTR, bit_width, from_memory, llvm_type, memory_type, to_memory
from .indexing import emit_thread_coords, layout_of
from .ldmatrix import convert_with_ldmatrix
from .stmatrix import STMATRIX_CAPABILITY, emit_stmatrix
from .thread_addresses import ThreadAddresses


def shared_store(ctx: Context, value: str, t, byte_offset: str) -> None:
    """Write `value` (scalar type `t`) at `byte_offset` of the scratch."""
    mem = memory_type(t)
    value = to_memory(ctx.em, value, t)
    address = ctx.em.shared_address(byte_offset)
    ctx.em.emit(f"store {mem} {value}, {SHARED_PTR} {address}, align {bit_width(t) // 8}")


def shared_load(ctx: Context, t, byte_offset: str) -> str:
    """Read a value of scalar type `t` at `byte_offset` of the scratch."""
    mem = memory_type(t)
    address = ctx.em.shared_address(byte_offset)
    value = ctx.em.op(f"load {mem}, {SHARED_PTR} {address}, align {bit_width(t) // 8}")
    return from_memory(ctx.em, value, t)


def row_major(ctx: Context, coords: list[str], shape) -> str:
    """The row-major index (i32) of the element at `coords` (i32 values) in `shape`."""
    index = "0"
    for coord, extent in zip(coords, shape):
        if index == "0":
            index = coord
        else:
            index = ctx.em.op(f"add i32 {ctx.em.op(f'mul i32 {index}, {extent}')}, {coord}")
    return index


def held_coords(ctx: Context, layout, register: int, dims=None) -> list[str]:
    """The coordinates (i32 values) of the element `register` holds in this thread, along
    `dims` (all by default)."""
    thread = emit_thread_coords(ctx.em, layout)
    constant = layout.apply(register=register)
    dims = range(len(thread)) if dims is None else dims
    return [
        ctx.em.op(f"xor i32 {thread[d]}, {constant[d]}") if constant[d] else thread[d] for d in dims
    ]


def element_offsets(ctx: Context, layout, shape, size: int) -> list[str]:
    """The byte offset, row-major, of the element each register holds (i32 values)."""
    return [
        ctx.em.op(f"mul i32 {row_major(ctx, held_coords(ctx, layout, r), shape)}, {size}")
        for r in range(layout.in_dim_size("register"))
    ]


@lowers("ttg.convert_layout")
def _convert_layout(ctx: Context, op) -> None:
    src_t, dst_t = op.src.type, op.result.type
    # A stmatrix x4 holds four words and an address at once: under a memory-bound kernel's
    # register cap that spilled where vector stores did not (test_convert_lowering.py).
    stmatrix = ctx.capability >= STMATRIX_CAPABILITY and not ctx.register_floor
    plan = plan_convert(layout_of(src_t), layout_of(dst_t), bit_width(src_t), stmatrix)
    registers = ctx[op.src]
    if isinstance(plan, Renumber):
        ctx[op.result] = [registers[r] for r in plan.sources]
        return
    if convert_with_ldmatrix(ctx, op):
        return
    if isinstance(plan, Shuffle):
        ctx[op.result] = emit_shuffle(ctx, plan, registers, src_t.element_type)
        return
    rounds = _rounds(op, plan)
    if rounds > 1:
        src, dst = layout_of(src_t), layout_of(dst_t)
        plan = plan_shared(src, dst, bit_width(src_t) // 8, stmatrix, rounds)
    ctx[op.result] = _round_trip(ctx, plan, registers, src_t.element_type)


def _rounds(op, plan: Shared) -> int:
    """The rounds the round trip goes in: the tile's bytes over the scratch
    allocate-shared-memory gave it (a fraction where the whole tile did not fit)."""
    planned = op.attributes.get("allocation.size")
    if planned is None or not 0 < planned.value < plan.nbytes:
        return 1
    return plan.nbytes // planned.value


def _round_trip(ctx: Context, plan: Shared, registers: list[str], t) -> list[str]:
    """Vector (or `stmatrix`) stores of the source's registers, a barrier (the warp's when the
    plan is warp-local), vector loads; in rounds, the same for each round, a barrier between
    them (the next round writes where this one read); the barrier that frees the scratch is
    owed."""
    ctx.need_shared(plan.nbytes)
    barriers.pay(ctx)  # an earlier user's reads of the scratch may be pending
    loaded: dict[int, str] = {}
    for round_ in range(plan.rounds):
        if round_:
            _wait(ctx, plan)
        _stores(ctx, plan, registers, t, round_)
        _wait(ctx, plan)
        _loads(ctx, plan, t, round_, loaded)
    barriers.owe(ctx)
    return [loaded[r] for r in plan.copies]


def _wait(ctx: Context, plan: Shared) -> None:
    """The barrier between a round's stores and its loads, and between rounds: the warp's
    when each warp reads only what it wrote (and so rewrites only what it read)."""
    if plan.warp_local:
        ctx.em.call("void", "llvm.nvvm.bar.warp.sync", [("i32", "-1")])
    else:
        ctx.em.barrier()


def _stores(ctx: Context, plan: Shared, registers: list[str], t, round_: int) -> None:
    """The stores of one round, by the threads holding no copy of another's elements."""
    em = ctx.em
    join = None
    if plan.skip_mask:  # threads holding copies of other threads' elements do not store
        held = em.op(f"and i32 {em.tid()}, {plan.skip_mask}")
        stores, join = em.label("convert.store"), em.label("convert.stored")
        em.emit(f"br i1 {em.op(f'icmp eq i32 {held}, 0')}, label %{stores}, label %{join}")
        em.start_block(stores)
    if plan.stmatrix is not None:
        emit_stmatrix(ctx, registers, llvm_type(t), plan.stmatrix, round_=round_)
    else:
        _vector_stores(ctx, plan, registers, t, round_)
    if join is not None:
        em.emit(f"br label %{join}")
        em.start_block(join)


def _loads(ctx: Context, plan: Shared, t, round_: int, loaded: dict[int, str]) -> None:
    """The vector loads of one round, each loaded register into `loaded`."""
    em = ctx.em
    nbytes = bit_width(t) // 8
    addresses = ThreadAddresses(ctx, plan.load_offsets, nbytes)
    kind, align = _vector_type(t, plan.load_vec)
    for access in plan.loads:
        if access.round != round_:
            continue
        address = addresses.address(access.offset * nbytes)
        value = em.op(f"load {kind}, {SHARED_PTR} {address}, align {align}")
        for i, r in enumerate(access.registers):
            element = value
            if plan.load_vec > 1:
                element = em.op(f"extractelement {kind} {value}, i32 {i}")
            loaded[r] = from_memory(ctx.em, element, t)


def _vector_stores(ctx: Context, plan: Shared, registers: list[str], t, round_: int) -> None:
    """The stores of one round as `st.shared` vectors of `plan.store_vec` elements."""
    em = ctx.em
    nbytes = bit_width(t) // 8
    addresses = ThreadAddresses(ctx, plan.store_offsets, nbytes)
    kind, align = _vector_type(t, plan.store_vec)
    mem = memory_type(t)
    for access in plan.stores:
        if access.round != round_:
            continue
        values = [to_memory(ctx.em, registers[r], t) for r in access.registers]
        value = values[0]
        if plan.store_vec > 1:
            value = "poison"
            for i, element in enumerate(values):
                value = em.op(f"insertelement {kind} {value}, {mem} {element}, i32 {i}")
        address = addresses.address(access.offset * nbytes)
        em.emit(f"store {kind} {value}, {SHARED_PTR} {address}, align {align}")


def _vector_type(t, vec: int) -> tuple[str, int]:
    """(LLVM type of `vec` elements of `t` in shared memory, its alignment)."""
    mem = memory_type(t)
    return (f"<{vec} x {mem}>" if vec > 1 else mem), vec * (bit_width(t) // 8)
