"""Asynchronous copies from global to shared memory (`cp.async`, sm_80 and later):
`ttg.async_copy_global_to_local`, `ttg.async_commit_group`, `ttg.async_wait`.

A copy moves each thread's vectors of the pointer tensor straight into the buffer, without
registers: one `cp.async` per vector, 16 bytes with `.cg` (cached in L2 only, as Triton
issues them), 4 or 8 bytes with `.ca`. A masked-off vector copies 0 source bytes, which
zero-fills its destination (the `other` of such a load is 0: the pipeliner only makes copies
of loads whose `other` is zero). Vectors take the width the load would have (memory.py's
`vector_width`, from AxisInfo), bounded by the run of consecutive offsets in the buffer's
layout (ldmatrix.store_plan); the pipeliner only makes copies of at least 4 bytes, and none
in debug mode, whose bounds checks see the loads.

The copies a thread issued since its last `cp.async.commit_group` form a group;
`cp.async.wait_group N` waits until at most N of its groups are in flight. Where several threads
hold an element (a row statistic in a slice of the dot's layout), only the thread with the
layout's free lane and warp bits zero copies it. The copies of the
other threads become visible at the barrier that follows the wait (emitted with it), which
also tells the copies of the next stage that every warp is done reading the slot they
overwrite.

The ops' `!ttg.async.token`s only order them in the IR (Triton's TTGIR threads them through
loops and branches): a token lowers to no registers, so it costs no phi wherever it flows.
"""

from __future__ import annotations

from ....errors import InternalError
from . import barriers
from .context import Context, lowers
from .emitter import GLOBAL_PTR, SHARED_PTR
from .indexing import layout_of, redundant_thread_mask
from .ldmatrix import store_plan
from .memory import vector_width
from .thread_addresses import ThreadAddresses

COPY_BYTES = (4, 8, 16)  # what one `cp.async` moves


def copy_plan(ctx, ptr, mask, to_offset, nbytes: int):
    """(the buffer offsets of each register, elements per `cp.async`) of copying the tensor
    at `ptr` under `mask` into a buffer whose element -> offset map is `to_offset` (see the
    module doc); `ctx` needs only its `axis_info`, so the pipeliner asks it too."""
    offsets, vector, _ = store_plan(layout_of(ptr.type), to_offset, nbytes)
    return offsets, min(vector_width(ctx, ptr, mask), vector)


@lowers("ttg.async_copy_global_to_local")
def _async_copy(ctx: Context, op) -> None:
    view = ctx.values[op.dst]
    nbytes = view.element_bytes
    offsets, width = copy_plan(ctx, op.src, op.mask, view.to_offset, nbytes)
    size = width * nbytes
    if size not in COPY_BYTES:
        raise InternalError(f"cp.async of {size} bytes: the pipeliner must not make this copy")
    em = ctx.em
    barriers.pay(ctx)  # earlier readers of the slot must be done
    ctx.em.scratch_base = view.base
    ptrs = ctx[op.src]
    masks = ctx[op.mask] if op.mask is not None else None
    if ctx.bounds:
        raise InternalError("debug mode checks every load: the compiler does not pipeline it")
    addresses = ThreadAddresses(ctx, offsets, nbytes, view.dynamic)
    origin = view.origin_offset()
    kind = "cg" if size == 16 else "ca"
    layout = layout_of(op.src.type)
    redundant = layout.free_variable_masks().get("register", 0)
    copies_held_elsewhere = redundant_thread_mask(layout)
    unique = None  # this thread's copies are the only ones of their elements
    if copies_held_elsewhere:
        held = em.op(f"and i32 {em.tid()}, {copies_held_elsewhere}")
        unique = em.op(f"icmp eq i32 {held}, 0")
    for first in range(0, len(ptrs), width):
        if first & redundant:
            continue
        address = addresses.address((offsets.apply(register=first)[0] ^ origin) * nbytes)
        source_bytes = str(size)
        if masks is not None:
            source_bytes = em.op(f"select i1 {masks[first]}, i32 {size}, i32 0")
        text = f"cp.async.{kind}.shared.global [ $0 + 0 ], [ $1 + 0 ], {size}, $2;"
        args = [(SHARED_PTR, address), (GLOBAL_PTR, ptrs[first]), ("i32", source_bytes)]
        if unique is None:
            em.asm("void", text, "r,l,r", args)
        else:
            em.asm("void", "@$3 " + text, "r,l,r,b", [*args, ("i1", unique)])
    ctx[op.token] = []


@lowers("ttg.async_commit_group")
def _commit_group(ctx: Context, op) -> None:
    ctx.em.asm("void", "cp.async.commit_group;", "", [])
    ctx[op.asyncToken] = []


@lowers("ttg.async_wait")
def _wait(ctx: Context, op) -> None:
    ctx.em.asm("void", f"cp.async.wait_group {op.num.value};", "", [])
    barriers.barrier(ctx)
    ctx[op.retToken] = []
