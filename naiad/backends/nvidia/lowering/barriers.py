"""The barrier that frees a shared scratch after its last reads, paid where the next write needs it.

A reduction across warps writes one partial per warp, waits at a barrier, and every thread
reads the partials; a layout conversion through shared memory and a scan's exchange step write
the tensor, wait, and read it back. Before those bytes are written again, every warp must have
read them: a second barrier. Emitted right after the reads, it sits on the critical path (each
warp waits for the slowest reader before it computes on), and after the kernel's last scratch
user it serves no one. So these ops leave the barrier *owed* (`owe`, `Context.barrier_owed`),
and the lowering pays it (`bar.sync`) just before the next op that may touch shared memory:

- an op of the `REGISTER_ONLY` families keeps the debt (arith, math, global loads and
  stores, pointer arithmetic, splats and ranges never touch shared memory);
- an op of `PAYS_ITS_OWN` (reductions, scans, layout conversions, broadcasts, expand_dims and
  reshapes) keeps it until it first writes its scratch and pays there (`pay`): a reduction
  after its in-warp steps, a conversion planned as a register renumbering or warp shuffles and
  a shape op that renumbers registers never;
- `scf.for` / `scf.if` / `scf.while` whose regions hold only such ops keep it too, carried
  past the whole op; any other op pays before it is lowered;
- inside a region, a debt still owed before the block's terminator is paid there, so every
  block ends without one: a loop's back edge and an `if`'s other branch start clean; but for a
  loop whose body reaches a barrier before anything writes the scratch and which is followed by
  a `ttg.async_wait` (a pipelined loop): those barriers settle the debt first;
- the kernel's end needs nothing.

Shared-memory buffers (`ttg.local_alloc`, shared_memory.py) add the other direction: their
stores must be seen before their reads. A store leaves `Context.stores_pending`; the first
`ttg.local_load` after it pays with one barrier (so the two operands of a dot share it), and
so does any other op that touches shared memory, a region op, or the end of a block. Stores
into a buffer `wgmma` reads (`Context.async_proxy_stores`) are fenced to the asynchronous
proxy before whichever barrier publishes them (`barrier`).

The other scratch users (shape ops that move elements between threads, atomics returning
values, histograms, device_print) end with their own barrier. Triton places the same barrier
by a dataflow analysis of shared-memory accesses; this is the part of it these ops need.
"""

from __future__ import annotations

_REGISTER_ONLY_DIALECTS = ("arith.", "math.")
_BARRIERS = ("ttg.barrier", "gpu.barrier")  # both lower to the CTA's (or region's) barrier
REGISTER_ONLY = frozenset(
    {
        "tt.addptr",
        "tt.clampf",
        "tt.extern_elementwise",
        "tt.fp_to_fp",
        "tt.get_num_programs",
        "tt.get_program_id",
        "tt.load",
        "tt.make_range",
        "tt.mulhiui",
        "tt.precise_divf",
        "tt.precise_sqrt",
        "tt.return",
        "tt.splat",
        "tt.store",
        "tt.dot",
        "ttg.memdesc_subslice",
        "ttg.memdesc_trans",
        "ttg.memdesc_index",
        "ttg.local_dealloc",
        "ttg.async_commit_group",
        "ttng.fence_async_shared",
        "ttng.warp_group_dot_wait",
    }
)
_BUFFER_OPS = frozenset(
    {
        "ttg.local_alloc",
        "ttg.local_store",
        "ttg.local_load",
        "ttg.async_copy_global_to_local",
        "ttg.async_wait",  # its own barrier after the wait (async_copy.py)
        "ttng.warp_group_dot",  # fences the pending stores before their barrier (wgmma.py)
    }
)
# Shape ops that usually renumber registers and exchange through the scratch only when their
# layouts make them (exchanges.py pays before it writes).
_SHAPE_OPS = frozenset({"tt.broadcast", "tt.expand_dims", "tt.reshape"})
PAYS_ITS_OWN = frozenset({"tt.reduce", "tt.scan", "ttg.convert_layout"}) | _SHAPE_OPS | _BUFFER_OPS
_STORES_WAIT_FOR = _BUFFER_OPS
_REGION_OPS = frozenset({"scf.for", "scf.if", "scf.while"})
_TERMINATORS = frozenset({"scf.yield", "scf.condition"})


def touches_shared(op) -> bool:
    """Whether lowering `op` may read or write shared memory (conservative: unknown ops may)."""
    name = op.name
    if name in REGISTER_ONLY or name.startswith(_REGISTER_ONLY_DIALECTS) or name in _TERMINATORS:
        return False
    if name in _REGION_OPS:
        return any(
            touches_shared(inner)
            for region in op.regions
            for block in region.blocks
            for inner in block.ops
        )
    return True


def owe(ctx) -> None:
    """The scratch was just read: the barrier that frees it is owed, paid before its next
    write (`pay`)."""
    ctx.barrier_owed = True


def pay(ctx) -> None:
    """Emit the owed barrier, if one is owed: before a write of the scratch."""
    if ctx.barrier_owed:
        ctx.em.barrier()
        ctx.barrier_owed = False


def sync_stores(ctx) -> None:
    """Emit the barrier that makes the pending shared-memory stores visible, if any are."""
    if ctx.stores_pending:
        barrier(ctx)


def fence_async_shared(em) -> None:
    """This thread's generic stores to shared memory, visible to the asynchronous proxy."""
    em.asm("void", "fence.proxy.async.shared::cta;", "", [])


def barrier(ctx) -> None:
    """A barrier that publishes every pending store and frees every owed scratch. Stores into
    a buffer `wgmma` reads (the asynchronous proxy) are fenced to that proxy first, by every
    thread: whichever barrier publishes them, the one at the dot or an earlier one (a shape
    op's, a pipelined loop's wait), wgmma must see them."""
    if ctx.stores_pending and ctx.async_proxy_stores:
        fence_async_shared(ctx.em)
    ctx.em.barrier()
    ctx.stores_pending = ctx.async_proxy_stores = False
    ctx.barrier_owed = False  # the same barrier frees the bytes read before


def lower(ctx, op, fn) -> None:
    """Lower `op` by `fn(ctx, op)`, paying or carrying the owed barriers around it."""
    if ctx.stores_pending and op.name not in _STORES_WAIT_FOR and touches_shared(op):
        sync_stores(ctx)
    if ctx.barrier_owed and op.name in _REGION_OPS and not touches_shared(op):
        ctx.barrier_owed = False  # nothing inside pays: the debt is carried past the op
        fn(ctx, op)
        ctx.barrier_owed = True
    else:
        if op.name in _BARRIERS:  # its own barrier settles the debt
            ctx.barrier_owed = False
        elif ctx.barrier_owed and op.name not in PAYS_ITS_OWN and touches_shared(op):
            pay(ctx)
        fn(ctx, op)
    if ctx.barrier_owed or ctx.stores_pending:
        following = op.next_op
        if following is not None and following.name in _TERMINATORS:
            sync_stores(ctx)
            if not _waits_on_both_sides(following):
                pay(ctx)


def _waits_on_both_sides(terminator) -> bool:
    """Whether the loop `terminator` ends reaches a barrier in its body before anything writes
    the scratch, and is followed by a `ttg.async_wait` past the waits for its asynchronous dots
    (the pipeliner's loops): each side waits at a barrier before the scratch is written again,
    so the debt needs no barrier of its own at the back edge or the exit."""
    loop = terminator.parent_op()
    if loop is None or loop.name != "scf.for":
        return False
    after = loop.next_op
    while after is not None and after.name == "ttng.warp_group_dot_wait":
        after = after.next_op
    if after is None or after.name != "ttg.async_wait":
        return False
    return _opens_with_a_barrier(loop.regions[0].blocks[0])


# What a pipelined loop's body may do before its barrier: wait for its copies, view its
# buffers, and run dots that read them (none writes the scratch).
_BEFORE_THE_BARRIER = frozenset(
    {"ttg.memdesc_index", "ttng.wait_barrier", "ttng.warp_group_dot", "ttng.warp_group_dot_wait"}
)


def _opens_with_a_barrier(body) -> bool:
    """Whether `body` reaches a barrier (a `ttg.async_wait`'s or a `ttg.barrier`) with only
    the ops of `_BEFORE_THE_BARRIER` and register-only ops before it: the copies' wait at the
    iteration's start, or the one after the dot that retires the last iteration's dots
    (asynchronous_dots.py)."""
    op = body.first_op
    while op is not None and op.name not in ("ttg.async_wait", *_BARRIERS):
        if op.name not in _BEFORE_THE_BARRIER and touches_shared(op):
            return False
        op = op.next_op
    return op is not None
