"""`tritongpu-pipeline`: software pipelining of the loads that feed a loop's dots, with
`num_stages` buffers in flight (`cp.async`, sm_80 and later). Below, the ring of S slots the
copies of asynchronous `wgmma` loops take; loops of `mma.sync` dots refill the slot an
iteration has just read, at its end, with S - 1 slots (`_refills_read_slot`).

After tritongpu-dot-operands-shared, a matmul's K loop loads each operand tile into registers
and stores it into a shared buffer (`ttg.local_alloc`) that `ldmatrix` reads. Pipelined, the
tile of iteration i + S - 1 is copied straight from global into slot (i + S - 1) % S of a ring
of S buffers while iteration i computes on slot i % S:

    ring = ttg.local_alloc : () -> !ttg.memdesc<S x 128 x 64 x f16, #shared, #smem, mutable>
    for s in 0 .. S-2:                   (prologue, before the loop)
        async copy of iteration s into ring[s], masked off when s >= the trip count
        async_commit_group
    scf.for i ... iter_args(..., p_ahead, write, read) {
        async_wait {num = S - 2}        (iteration i's copies landed; a barrier: every warp
                                          is done reading the slot the next copy overwrites)
        async copy of iteration i + S - 1 into ring[write], masked off past the end
        async_commit_group
        ... ttg.memdesc_index ring[read] replaces the local_alloc ...
        scf.yield ..., advance(p_ahead), (write + 1) % S, (read + 1) % S
    }
    async_wait {num = 0}; ttg.local_dealloc ring

The address of a future iteration is computed by a copy of the ops it depends on in the loop
(pointer arithmetic, masks from the induction variable, and `scf.if`s of such ops: the prologue
of a fused persistent loop, which steps to the next output tile): the values the loop carries
for them (a pointer tensor advanced each iteration, the tile) get a copy of their own, `S - 1`
iterations ahead, started by the prologue's copies of their update. So a fused persistent matmul
(fuse-nested-loops) prefetches the next tile's first K steps while it finishes the current one.
Which loops and loads qualify is pipeline_candidates.py's to say (innermost loops without
atomics whose stores write elsewhere than their loads read; loads that one buffer reads). The
original loads, and the carried values only they used, are left dead for canonicalize. Block
loads through tensor maps fill their slots by tensor copies instead
(`ttng.async_tma_copy_global_to_local`), completing on one `mbarrier` per slot, armed with the
stage's bytes; an iteration waits for its slot's barrier phase (the parity the loop carries,
flipped as the read slot wraps) where cp.async waits for its group. Such loads in loops that are
not pipelined become pointer loads first (descriptor_pointers.py). Correct for every trip count:
copies past the end are masked off (zero-filled, never read), and the loop's results do not
change."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from ....dialects import arith, scf, tt, ttg, ttng
from ....dialects.ttg.attributes import SHARED_MEMORY, SwizzledSharedEncodingAttr
from ....dialects.ttg.barrier import BarrierOp
from ....dialects.ttg.types import ASYNC_TOKEN, MemDescType
from ....ir import IntegerAttr, Operation, register_pass
from ....ir.passes import Pass
from ....ir.types import i1, i32, i64
from ....passes.analysis.axis_info import AxisInfoAnalysis
from ..lowering.tma import block_bytes
from ..target import shared_per_block
from .accelerate_matmul import module_capability
from .allocate_shared_memory import alloc_bytes
from .asynchronous_dots import issue_asynchronously, plan_dots
from .buffered_loads import buffer_dot_inputs, unbuffer
from .descriptor_pointers import to_pointer_load
from .pipeline_candidates import candidates, filled_buffer


@register_pass("tritongpu-pipeline")
@dataclass(frozen=True)
class PipelineLoads(Pass):
    """Pipeline the loads of dot operands in innermost loops (see the module doc)."""

    num_stages: int = 3

    def run(self, module: Operation) -> None:
        loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
        axis_info = SimpleNamespace(axis_info=AxisInfoAnalysis(module))
        copied, buffered = set(), []
        for loop in loops:
            if self._stages(loop) >= 2:
                qualifies = lambda load, loop=loop: _takes(loop, load, axis_info)  # noqa: E731
                buffered += buffer_dot_inputs(loop, qualifies)
            found = candidates(loop, axis_info) if self._stages(loop) >= 2 else None
            copied |= set(found[0]) if found is not None else set()
        for op in [op for op in module.walk() if isinstance(op, tt.DescriptorLoadOp)]:
            if op not in copied and scf.in_loop(op.parent):
                to_pointer_load(op)  # a candidate for cp.async now (descriptor_pointers.py)
        axis_info = SimpleNamespace(axis_info=AxisInfoAnalysis(module))
        taken = set()
        for loop in loops:
            stages = self._stages(loop)
            found = candidates(loop, axis_info) if stages >= 2 else None
            if found is not None:
                taken |= set(found[0])
                _pipeline(loop, *found, stages, shared_per_block(module_capability(module)))
        for load in buffered:
            if load not in taken:
                unbuffer(load)

    def _stages(self, loop) -> int:
        stages = loop.attributes.get("tt.num_stages")
        return self.num_stages if stages is None else stages.value


def _takes(loop, load, axis_info) -> bool:
    """Whether the pipeliner would take `load`, now read by a buffer, with the loop's other
    loads (pipeline_candidates.py)."""
    found = candidates(loop, axis_info)
    return found is not None and load in found[0]


class Builder:
    """Inserts new ops before `anchor`, at `location`."""

    def __init__(self, anchor: Operation, location):
        self.anchor, self.location = anchor, location

    def add(self, op: Operation, location=None):
        """Insert `op`, at `location` where given (the op it copies or stands for), so that
        a profile puts a copy on its load's source line, as Triton's pipeliner does."""
        op.location = self.location if location is None else location
        self.anchor.parent.insert_before(op, self.anchor)
        return op.results[0] if op.results else None

    def constant(self, value: int, t):
        return self.add(arith.ConstantOp(IntegerAttr(value, t)))

    def slot(self, ring, index):
        """The view of slot `index` (an i32 value) of the multi-buffered `ring`."""
        return self.add(ttg.MemDescIndexOp(ring, index, result=slot_type(ring.type)))


def _stage(b: Builder, loop, loads, slice_ops, env: dict, iv, rings, barriers, slot) -> dict:
    """Copy the loads of the iteration whose induction variable is `iv` and whose carried
    values are `env` (argument -> value) into slot `slot` of their rings, masked off past the
    loop's end, and commit them as one group; the carried values of the next iteration."""
    mapping = dict(env)
    mapping[loop.induction_var] = iv
    for op in slice_ops:
        copy = op.clone(mapping)
        b.add(copy, op.location)
        for old, new in zip(op.results, copy.results):
            mapping[old] = new
    predicate = "ult" if loop.attributes.get("unsignedCmp") is not None else "slt"
    in_range = b.add(arith.CmpIOp(predicate, iv, loop.upperBound))
    copies = [load for load in loads if isinstance(load, tt.DescriptorLoadOp)]
    if copies:
        barrier = b.slot(barriers, slot)
        size = sum(block_bytes(load.result.type) for load in copies)
        b.add(ttng.BarrierExpectOp(barrier, in_range, size=IntegerAttr(size, i32)))
    for load in copies:
        view = b.slot(rings[load], slot)
        indices = [mapping.get(v, v) for v in load.indices]
        copy = ttng.AsyncTMACopyGlobalToLocalOp(load.desc, indices, view, barrier, in_range)
        b.add(copy, load.location)
    pointer_loads = [load for load in loads if load not in copies]
    for load in pointer_loads:
        ptr = mapping.get(load.ptr, load.ptr)
        mask_t = ptr.type.clone(element_type=i1)
        mask = b.add(tt.SplatOp(in_range, result=mask_t))
        if load.mask is not None:
            mask = b.add(arith.AndIOp(mapping.get(load.mask, load.mask), mask))
        view = b.slot(rings[load], slot)
        b.add(ttg.AsyncCopyGlobalToLocalOp(ptr, view, mask, token=ASYNC_TOKEN), load.location)
    if pointer_loads:
        b.add(ttg.AsyncCommitGroupOp([], asyncToken=ASYNC_TOKEN))
    terminator = loop.body.terminator
    yielded = [terminator.operands[arg.index - 1] for arg in env]
    return {arg: mapping.get(value, value) for arg, value in zip(env, yielded)}


def slot_type(ring_t: MemDescType) -> MemDescType:
    return MemDescType(
        ring_t.shape[1:],
        ring_t.element_type,
        ring_t.encoding,
        SHARED_MEMORY,
        True,
        ring_t.alloc_shape,
    )


def _pipeline(loop, loads, slice_ops, args, stages: int, shared: int) -> None:
    before = Builder(loop, loop.location)
    dots = plan_dots(loop, loads, stages)
    stages = dots.stages or stages
    slots = stages + dots.extra_slots()
    if _refills_read_slot(loop, loads, stages, shared):
        slots = stages - 1
    rings = {}
    for load in loads:
        alloc_t = filled_buffer(load).result.type
        ring_t = MemDescType(
            (slots, *alloc_t.shape), alloc_t.element_type, alloc_t.encoding, SHARED_MEMORY, True
        )
        rings[load] = before.add(ttg.LocalAllocOp(None, result=ring_t))
    barriers, barrier_slots = None, []
    if any(isinstance(load, tt.DescriptorLoadOp) for load in loads):
        barriers, barrier_slots = barrier_ring(before, slots)
    iv_t = loop.induction_var.type
    env = {arg: loop.initArgs[arg.index - 1] for arg in args}
    for s in range(stages - 1):
        offset = before.add(arith.MulIOp(before.constant(s, iv_t), loop.step))
        iv = before.add(arith.AddIOp(loop.lowerBound, offset))
        slot = before.constant(s, i32)
        env = _stage(before, loop, loads, slice_ops, env, iv, rings, barriers, slot)
    write = (stages - 1) % slots
    new_loop = _with_more_carried(loop, [env[arg] for arg in args], write, barriers is not None)
    refill_after = dots.refill_after()
    _steady_state(new_loop, args, loads, slice_ops, rings, barriers, stages, slots, refill_after)
    after = Builder(new_loop.next_op, new_loop.location)
    issue_asynchronously(dots, new_loop, after)
    # Its barrier: every warpgroup is done with the rings, and with the copies, before any
    # reuses their bytes.
    after.add(ttg.AsyncWaitOp([], num=IntegerAttr(0, i32), retToken=ASYNC_TOKEN))
    for ring in rings.values():
        after.add(ttg.LocalDeallocOp(ring))
    for barrier in barrier_slots:
        after.add(ttng.InvalBarrierOp(barrier))
    if barriers is not None:
        after.add(ttg.LocalDeallocOp(barriers))


def _refills_read_slot(loop, loads, stages: int, shared: int) -> bool:
    """Whether the loop's copies refill the slot the iteration has just read, at its end (after
    a barrier), so that the rings need `stages - 1` slots, not `stages`: the copies of
    iteration i + S - 1 are issued once iteration i's dots have read their operands, still
    S - 1 iterations ahead. Shared memory is what limits how many programs an SM runs on the
    `mma.sync` path (a tf32 128x32x32 tile's four slots take 80 KiB, three 60: two programs
    an SM, or three); Triton's pipeliner sizes its rings so there. Not with `wgmma`, whose
    asynchronous reads of a slot outlast the iteration, nor with tensor copies, whose slots
    complete on barriers of their own; and two stages keep two slots (one slot would leave
    nothing in flight while the dots run). For one chain of dots (a matmul's, cut along K);
    attention's loop, two chains with the softmax between them, measured no faster and spilled
    more with the copies at its end (sm_80 path on an H200, D128 128x128 w8: 8 -> 28 spilled
    words, 329 -> 291 TFLOP/s), so it keeps S slots where they fit the target's `shared` bytes
    a block (target.shared_per_block) beside the kernel's other buffers; where they do not
    (that config's 224 KiB for sm_80, whose A100 gives a block 163 KiB; tutorial 06's D128
    128x64 w4 at 128 KiB on the 99 KiB of sm_86 and sm_89), the kernel could not launch on the
    GPUs it is compiled for, and S - 1 slots are Triton's ring there."""
    if stages < 3 or any(isinstance(load, tt.DescriptorLoadOp) for load in loads):
        return False
    ops = list(loop.walk())
    if any(isinstance(op, ttng.WarpGroupDotOp) for op in ops):
        return False
    dots = [op for op in ops if isinstance(op, tt.DotOp)]
    if sum(not isinstance(dot.c.defining_op, tt.DotOp) for dot in dots) == 1:
        return True
    return _buffer_bytes(loop, loads, stages) > shared


def _buffer_bytes(loop, loads, slots: int) -> int:
    """The shared memory of `loads`' rings of `slots` slots and of the buffers, outside loops,
    that the kernel keeps beside them (attention's Q)."""
    rings = sum(slots * alloc_bytes(filled_buffer(load).result.type) for load in loads)
    func = loop.parent_op()
    while not isinstance(func, tt.FuncOp):
        func = func.parent_op()
    kept = [
        op
        for op in func.walk()
        if isinstance(op, ttg.LocalAllocOp) and op.src is not None and not scf.in_loop(op.parent)
    ]
    return rings + sum(alloc_bytes(op.result.type) for op in kept)


def barrier_ring(b: Builder, slots: int, arrivals: int = 1, publish: bool = True):
    """(the ring, its slots' views): one `mbarrier` per slot, initialized for `arrivals` per
    phase (one: the thread that expects the tensor copies' bytes); with `publish`, seen by
    every thread before any waits on it, the generic writes that last used the rings' bytes
    fenced to the copies' (asynchronous) proxy first."""
    encoding = SwizzledSharedEncodingAttr(1, 1, 1, [0])
    ring = b.add(
        ttg.LocalAllocOp(None, result=MemDescType((slots, 1), i64, encoding, SHARED_MEMORY, True))
    )
    views = [b.slot(ring, b.constant(s, i32)) for s in range(slots)]
    for view in views:
        b.add(ttng.InitBarrierOp(view, count=IntegerAttr(arrivals, i32)))
    if publish:
        b.add(ttng.FenceAsyncSharedOp())  # earlier generic writes of the rings' bytes first
        b.add(BarrierOp("all"))
    return ring, views


def _with_more_carried(loop, extra_inits: list, write: int, phase: bool) -> Operation:
    """`loop` rebuilt to carry `extra_inits` too, then the write and read slots (i32, from
    `write` and 0), and the parity of the read slot's barrier phase where tensor copies fill
    it."""
    b = Builder(loop, loop.location)
    inits = [*extra_inits, b.constant(write, i32), b.constant(0, i32)]
    if phase:
        inits.append(b.constant(0, i32))
    return scf.carrying_more(loop, inits)


def _steady_state(loop, args, loads, slice_ops, rings: dict, barriers, stages, slots, retiring):
    """The body's new start: wait for this iteration's slot (its copies' group, or its
    barrier's phase), copy iteration i + S - 1 into the slot the last iteration read (there, or
    after the dot `retiring` and its wait, asynchronous_dots.py), or into this iteration's slot
    at its end (`_refills_read_slot`), read the operands from this iteration's slot; the yield
    carries the copies' next addresses, the slots and the phase on."""
    body = loop.body
    slots_carried = 2 if barriers is None else 3
    extra = body.arguments[len(body.arguments) - len(args) - slots_carried :]
    ahead, (write, read, *phase) = extra[: len(args)], extra[len(args) :]
    b = Builder(body.first_op, loop.location)
    copied = [load for load in loads if isinstance(load, tt.DescriptorLoadOp)]
    if len(copied) < len(loads):
        b.add(ttg.AsyncWaitOp([], num=IntegerAttr(stages - 2, i32), retToken=ASYNC_TOKEN))
    if copied:
        b.add(ttng.WaitBarrierOp(b.slot(barriers, read), phase[0]))
    issue = b if retiring is None else Builder(retiring.next_op, loop.location)
    if slots < stages:  # the copies refill the slot this iteration reads: at its end
        issue = Builder(body.terminator, loop.location)
    if retiring is not None or len(copied) == len(loads) or slots < stages:
        issue.add(BarrierOp("all"))  # every warp is done with the slot the copies refill
    distance = issue.add(
        arith.MulIOp(issue.constant(stages - 1, loop.induction_var.type), loop.step)
    )
    iv = issue.add(arith.AddIOp(loop.induction_var, distance))
    env = dict(zip(args, ahead))
    next_env = _stage(issue, loop, loads, slice_ops, env, iv, rings, barriers, write)
    views = [b.slot(rings[load], read) for load in loads]
    # Erased only now: a load may be the op the builder inserts before.
    for load, view in zip(loads, views):
        alloc = filled_buffer(load)
        alloc.result.replace_all_uses_with(view)
        between = alloc.src.defining_op  # the load, or a conversion of its value
        alloc.erase()
        if between is not load:
            between.erase()
        load.erase()
    terminator = body.terminator
    at_yield = Builder(terminator, loop.location)
    advanced = [_advance(at_yield, slot, slots) for slot in (write, read)]
    if phase:  # the parity flips as the read slot wraps around
        wraps = at_yield.add(arith.CmpIOp("eq", advanced[1], at_yield.constant(0, i32)))
        flipped = at_yield.add(arith.XOrIOp(phase[0], at_yield.constant(1, i32)))
        advanced.append(at_yield.add(arith.SelectOp(wraps, flipped, phase[0])))
    terminator.set_operands([*terminator.operands, *[next_env[a] for a in args], *advanced])


def _advance(b: Builder, slot, slots: int):
    """(slot + 1) % slots."""
    following = b.add(arith.AddIOp(slot, b.constant(1, i32)))
    wraps = b.add(arith.CmpIOp("eq", following, b.constant(slots, i32)))
    return b.add(arith.SelectOp(wraps, b.constant(0, i32), following))
