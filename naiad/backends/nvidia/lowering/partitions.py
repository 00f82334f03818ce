"""`ttg.warp_specialize` (passes/warp_specialize.py): the warps take their partition's branch.

    is_default = tid < 32 * num_warps
    br is_default, default, partition
    default:   setmaxnreg.inc (if asked); the default region; br end
    partition: setmaxnreg.dec (if asked); the partition region, with its threads numbered
               from 0 (`tid - 32 * num_warps`); br end
    end:

Every warp computes what precedes the op, so its values are there in both regions. Inside a
region a barrier is a named one that counts that region's threads alone (`bar.sync 1, n` for
the default region, `bar.sync 2, n` for the partition): the other partition never reaches it.
`ttng.arrive_barrier`, the consumers' hand-back of a slot, is lowered here too.
"""

from __future__ import annotations

import contextlib

from ....errors import InternalError
from .context import Context, lowers
from .emitter import SHARED_PTR
from .tma import _address

_DEFAULT_BARRIER, _PARTITION_BARRIER = 1, 2  # named barriers; 0 is the whole CTA's


@lowers("ttg.warp_specialize")
def _warp_specialize(ctx: Context, op) -> None:
    em = ctx.em
    default_threads = 32 * ctx.num_warps
    (partition_warps,) = op.partitionNumWarps.values
    if ctx.barrier_owed or ctx.stores_pending:
        raise InternalError("`ttg.warp_specialize` reached with a barrier still owed")
    tid = em.tid()
    default, partition, end = em.label("ws.default"), em.label("ws.partition"), em.label("ws.end")
    em.emit(f"br i1 {em.op(f'icmp ult i32 {tid}, {default_threads}')}, "
            f"label %{default}, label %{partition}")  # fmt: skip
    em.start_block(default)
    # A launch's own `maxnreg` caps every thread: registers then stay where they are (an
    # increase past the cap could never be granted from the block's pool).
    ctx.moves_registers = op.defaultRegisters is not None and ctx.register_cap is None
    if ctx.moves_registers:
        _set_registers(em, "inc", op.defaultRegisters.value)
    with _partition(ctx, _DEFAULT_BARRIER, default_threads):
        ctx.handed_back = _filled_rings(op)
        try:
            _lower_region(ctx, op.defaultRegion.blocks[0])
        finally:
            ctx.handed_back = frozenset()
    em.emit(f"br label %{end}")
    em.start_block(partition)
    if ctx.moves_registers:
        (registers,) = op.requestedRegisters.values
        _set_registers(em, "dec", registers)
    with _partition(ctx, _PARTITION_BARRIER, 32 * partition_warps):
        saved, em.cache = em.cache, {"tid": em.op(f"sub i32 {tid}, {default_threads}")}
        try:
            _lower_region(ctx, op.partitionRegion.blocks[0])
        finally:
            em.cache = saved
    em.emit(f"br label %{end}")
    em.start_block(end)


def _filled_rings(op) -> frozenset:
    """The rings whose slots the producer's copies fill: the consumers hand each slot back on
    its *empty* barrier once the dot that read it is done, and only then does the producer
    write it again, so the dots reading them owe no barrier of their own (barriers.py)."""
    return frozenset(
        copy.result.defining_op.src
        for copy in op.walk()  # only the producer issues copies
        if copy.name == "ttng.async_tma_copy_global_to_local"
    )


def fair_share(threads: int) -> int:
    """Registers a thread of a block of `threads` gets of an sm_90 multiprocessor's 65,536 (a
    multiple of 8, at most 255): where `setmaxnreg` moves registers, the kernel's `.maxnreg`."""
    return min(255, 65536 // threads // 8 * 8)


def _set_registers(em, direction: str, registers: int) -> None:
    em.asm("void", f"setmaxnreg.{direction}.sync.aligned.u32 {registers};", "", [])


@contextlib.contextmanager
def _partition(ctx: Context, barrier_id: int, threads: int):
    """Barriers within the region count its threads alone; it starts and ends owing none."""
    em = ctx.em
    em.partition_barrier = (barrier_id, threads)
    try:
        yield
    finally:
        em.partition_barrier = None
        ctx.barrier_owed = ctx.stores_pending = ctx.async_proxy_stores = False


def _lower_region(ctx: Context, block) -> None:
    for op in block.ops:
        if op is not block.terminator:
            ctx.lower_op(op)


@lowers("ttng.arrive_barrier")
def _arrive_barrier(ctx: Context, op) -> None:
    text = "mbarrier.arrive.shared::cta.b64 _, [$0];"
    ctx.em.asm("void", text, "r", [(SHARED_PTR, _address(ctx, op.alloc))])
