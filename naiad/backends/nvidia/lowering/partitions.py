"""`ttg.warp_specialize` (dialects/ttg/partitions.py): each warp takes its region's branch.

    switch warp (tid / 32): warps 0..n-1 -> default, warpGroupStartIds[i].. -> partition i
    default:      the default region; br end
    partition i:  the partition region, its threads numbered from 0
                  (`tid - 32 * warpGroupStartIds[i]`), its arguments the op's captures; br end
    end:

Every warp computes what precedes the op, so its values are there in every region. Inside a
region a barrier (`gpu.barrier`, `ttg.barrier`, a reduction's) is a named one that counts that
region's threads alone: `bar.sync 1, n` for the default region, `bar.sync 2 + i, n` for
partition i; the other regions never reach it. A region's layouts are of its own warps
(`ctx.num_warps` while it is lowered), and its thread-derived values (coordinates, store
predicates) are computed from its own numbering. allocate-warp-groups places the partitions'
warps; allocate-shared-memory keeps their scratch apart, since they run at once.
`ttng.arrive_barrier`, the consumers' hand-back of a slot, is lowered here too.
"""

from __future__ import annotations

import contextlib

from ....errors import InternalError
from ....passes.diagnostics import unsupported
from .context import Context, lowers
from .emitter import SHARED_PTR
from .tma import _address

_DEFAULT_BARRIER = 1  # named barriers; 0 is the whole CTA's, 2 + i partition i's
_NAMED_BARRIERS = 16  # a CTA's hardware barriers


@lowers("ttg.warp_specialize")
def _warp_specialize(ctx: Context, op) -> None:
    em = ctx.em
    blocks, warps = op.partition_blocks, op.partitionNumWarps.values
    _check_lowerable(ctx, op, len(blocks))
    starts = op.warpGroupStartIds.values
    default = em.label("ws.default")
    labels = [em.label(f"ws.partition{i}.") for i in range(len(blocks))]
    end = em.label("ws.end")
    cases = [(w, default) for w in range(ctx.num_warps)]
    for label, start, count in zip(labels, starts, warps):
        cases += [(w, label) for w in range(start, start + count)]
    warp = em.op(f"lshr i32 {em.tid()}, 5")
    table = " ".join(f"i32 {w}, label %{label}" for w, label in cases)
    em.emit(f"switch i32 {warp}, label %{end} [ {table} ]")
    em.start_block(default)
    with _partition(ctx, _DEFAULT_BARRIER, ctx.num_warps):
        ctx.handed_back = _filled_rings(op)
        try:
            _lower_region(ctx, op.default_block)
        finally:
            ctx.handed_back = frozenset()
    em.emit(f"br label %{end}")
    for i, (label, block) in enumerate(zip(labels, blocks)):
        em.start_block(label)
        for arg, capture in zip(block.arguments, op.explicitCaptures):
            ctx.values[arg] = ctx.values[capture]  # registers, or a shared view
        with _partition(ctx, _DEFAULT_BARRIER + 1 + i, warps[i]):
            saved, em.cache = (
                em.cache,
                {"tid": em.entry_op(f"sub i32 {em.tid()}, {32 * starts[i]}")},
            )
            try:
                _lower_region(ctx, block)
            finally:
                em.cache = saved
        em.emit(f"br label %{end}")
    em.start_block(end)


def _check_lowerable(ctx: Context, op, partitions: int) -> None:
    """What the lowering does not take: results, more partitions than named barriers."""
    if op.results:
        unsupported(op, "the NVIDIA back end cannot lower a `ttg.warp_specialize` with results yet")
    if _DEFAULT_BARRIER + partitions >= _NAMED_BARRIERS:
        unsupported(op, f"{partitions} partitions: each needs one of 14 named barriers")
    if op.warpGroupStartIds is None:
        raise InternalError("`ttg.warp_specialize` reached the lowering without its warps placed")
    if ctx.barrier_owed or ctx.stores_pending:
        raise InternalError("`ttg.warp_specialize` reached with a barrier still owed")


def _filled_rings(op) -> frozenset:
    """The rings whose slots the producer's copies fill: the consumers hand each slot back on
    its *empty* barrier once the dot that read it is done, and only then does the producer
    write it again, so the dots reading them owe no barrier of their own (barriers.py)."""
    rings = set()
    for block in op.partition_blocks:  # only a producer issues copies
        for copy in block.parent.walk():
            if copy.name == "ttng.async_tma_copy_global_to_local":
                ring = copy.result.defining_op.src  # the producer's view: its capture
                rings.add(op.explicitCaptures[ring.index] if ring.owner is block else ring)
    return frozenset(rings)


@contextlib.contextmanager
def _partition(ctx: Context, barrier_id: int, warps: int):
    """Barriers within the region count its threads alone, its layouts are of its `warps`;
    it starts and ends owing no barrier."""
    em = ctx.em
    em.partition_barrier = (barrier_id, 32 * warps)
    outer_warps, ctx.num_warps = ctx.num_warps, warps
    try:
        yield
    finally:
        em.partition_barrier = None
        ctx.num_warps = outer_warps
        ctx.barrier_owed = ctx.stores_pending = ctx.async_proxy_stores = False


def _lower_region(ctx: Context, block) -> None:
    for op in block.ops:
        if op is not block.terminator:
            ctx.lower_op(op)


@lowers("ttng.arrive_barrier")
def _arrive_barrier(ctx: Context, op) -> None:
    text = "mbarrier.arrive.shared::cta.b64 _, [$0];"
    ctx.em.asm("void", text, "r", [(SHARED_PTR, _address(ctx, op.alloc))])
