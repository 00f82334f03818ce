"""`tritongpu-warp-specialize`: a loop marked `tl.range(..., warp_specialize=True)` whose tensor
copies feed `wgmma` runs as two partitions (sm_90a): one more warpgroup, the *producer*, issues
the copies into a ring of shared buffers, and the kernel's own warps, the *consumers*, run the
dots on each slot once its copies land and hand the slot back.

Where it applies (warp_specialize_candidates.py): a persistent matmul's tile loop `L` with
its K loop inside, as Triton specializes on Hopper, or a K loop alone, whose tensor-copy loads
feed only `wgmma`; what follows `L` (an epilogue) the consumers run. Anything else keeps one
partition (the hint changes no value; Triton too leaves attention's loop alone on Hopper).

    full[S], empty[S] = mbarriers (full: one arrival, the producer's expect; empty: one per
                        consumer thread); ring_x[S] per load; then:
    ttg.warp_specialize(bounds, descriptors, rings, full, empty, ...)
    default {                               (consumers: the kernel's warps)
      L' = L carrying a count n of K iterations:
        K': slot = n % S; wait full[slot] at parity (n / S) & 1
            the dot reads ring_x[slot], asynchronously; wait until it alone is in flight;
            if not K's first step: arrive on empty[(n - 1) % S]; n += 1
        wait for the last dot; if K ran: arrive on empty[(n - 1) % S]; the epilogue
    }
    partition0(its captures) num_warps(4) { (producer: 4 warps, one thread issuing)
      L's loop over the same tiles, K's over the same steps, with the same count n:
        wait empty[slot] at parity ((n / S) & 1) ^ 1   (a fresh barrier passes parity 1)
        expect the slot's bytes on full[slot]; copy each block into ring_x[slot]; n += 1
    }

The producer clones only the scalar ops the copies' indices and K's bounds need; what else it
reads from above becomes the op's captures (a partition is isolated from above). The ring is
S = `num_stages` slots deep (at least 2), and one more for the dot in flight where the rings
and the epilogue's largest tensor-copy store fit in shared memory together (the rings live
through the epilogue: the producer fills them for the next tile meanwhile): there K's dot runs
on asynchronously, when it is K's only dot and accumulates into what K carries (a matmul's).
Otherwise the dots are synchronous, and the step hands its own slot back after the last of
them. Measured on an H200 when 8-warp kernels split too (fp16 8192^3, 8 consumer warps, TFLOP/s):
128x256x64 with a split epilogue, asynchronous with S + 1 slots 641 against synchronous 608;
without the split (no slot more fits), synchronous 647 against asynchronous 590.

Which kernels: as Triton's Hopper rule, a kernel of 4 warps only (one consumer warpgroup); at
any other `num_warps` the loop is left as written, pipelined as usual. Measured on an H200
(tutorial 09's descriptor-persistent kernel, 128x256x64 s3 at 8 warps, fp16 8192^3, not
flattened): split into 8 consumer warps and a producer, 651-653 TFLOP/s; as written, 677-704,
and Triton 677-679. With 4 consumer warps and the producer the block has 256 threads, whose
fair share of registers (255) needs no `setmaxnreg`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects import arith, scf, tt, ttg, ttng
from ....dialects.ttg.attributes import SHARED_MEMORY
from ....dialects.ttg.types import MemDescType
from ....ir import (
    IntegerAttr,
    Operation,
    register_pass,
)
from ....ir.attributes import BoolAttr
from ....ir.passes import Pass
from ....ir.types import i1, i32
from ..lowering.tma import block_bytes
from .allocate_shared_memory import alloc_bytes
from .asynchronous_dots import SHARED_BYTES_SM90, accumulates_carried, wait_right_after
from .pipeline_candidates import filled_buffer
from .pipeline_loads import Builder, barrier_ring
from .warp_specialize_candidates import epilogue, is_wgmma, shape

_MARK = "tt.warp_specialize"
PRODUCER_WARPS = 4  # one warpgroup
CONSUMER_WARPS = 4  # the kernel's warps: the loop splits only in a kernel of one warpgroup


@register_pass("tritongpu-warp-specialize")
@dataclass(frozen=True)
class WarpSpecialize(Pass):
    """Split the first qualifying `warp_specialize` loop of the kernel into a producer and
    consumers (module doc); a later one runs in the consumers' region as written."""

    num_stages: int = 3

    def run(self, module: Operation) -> None:
        num_warps = module.attributes["ttg.num-warps"].value
        if num_warps != CONSUMER_WARPS:
            return
        for func in [op for op in module.body.ops if isinstance(op, tt.FuncOp)]:
            for loop in [op for op in func.body.block.ops if isinstance(op, scf.ForOp)]:
                found = shape(loop) if _MARK in loop.attributes else None
                if found is not None:
                    _specialize(loop, *found, max(2, self.num_stages), num_warps)
                    total = num_warps + PRODUCER_WARPS
                    module.attributes["ttg.total-num-warps"] = IntegerAttr(total, i32)
                    break  # what follows the loop now lies in the consumers' region


def _specialize(loop, k_loop, loads, slice_ops, stages: int, num_warps: int) -> None:
    before = Builder(loop, loop.location)
    slot_types = [filled_buffer(load).result.type for load in loads]
    # The dot in flight holds its slot one step longer: asynchronous only with a slot more.
    asynchronous = _lone_accumulating_dot(k_loop) and _fits(loop, slot_types, stages + 1)
    stages += int(asynchronous)
    rings = {}
    for load, alloc_t in zip(loads, slot_types):
        ring_t = MemDescType(
            (stages, *alloc_t.shape), alloc_t.element_type, alloc_t.encoding, SHARED_MEMORY, True
        )
        rings[load] = before.add(ttg.LocalAllocOp(None, result=ring_t))
    full, _ = barrier_ring(before, stages, publish=False)
    empty, _ = barrier_ring(before, stages, arrivals=32 * num_warps)
    op = ttg.WarpSpecializeOp.build([], [PRODUCER_WARPS], loop.location)
    loop.parent.insert_before(op, loop)
    after_loop = epilogue(loop)
    consumer_block, (producer_block,) = op.default_block, op.partition_blocks
    for op_after in [loop, *after_loop]:
        op_after.detach()
        consumer_block.append(op_after)
    consumer_block.append(ttg.WarpYieldOp(location=loop.location))
    producer_block.append(ttg.WarpReturnOp(location=loop.location))
    ends = Builder(producer_block.terminator, loop.location)
    _produce(ends, loop, k_loop, loads, slice_ops, rings, full, empty, stages)
    _capture(op, producer_block)
    _consume(loop, k_loop, loads, rings, full, empty, stages, asynchronous)


def _capture(op: Operation, block) -> None:
    """Make what the partition `block` reads from above (bounds, descriptors, rings, barriers)
    the op's captures and the block's arguments: a partition is isolated from above."""
    partitions = block.parent_op()
    captured: dict = {}
    for inner in block.parent.walk():
        for value in inner.operands:
            owner = value.defining_op or value.owner.parent_op()
            if value not in captured and not partitions.is_ancestor(owner):
                captured[value] = block.add_argument(value.type, op.location)
    for value, argument in captured.items():
        value.replace_uses_where(argument, lambda user, _i: partitions.is_ancestor(user))
    op.set_operands(list(captured))


def _lone_accumulating_dot(k_loop: Operation) -> bool:
    """Whether K's one dot accumulates into what K carries: it can run on asynchronously."""
    dots = [op for op in k_loop.body.ops if is_wgmma(op)]
    return len(dots) == 1 and accumulates_carried(dots[0], k_loop)


def _fits(loop: Operation, slot_types, slots: int) -> bool:
    """Whether rings of `slots` slots and the largest tensor-copy store of the epilogue (its
    staging scratch, live while the producer fills the rings) fit in an sm_90 block's shared
    memory."""
    stores = [op for op in loop.parent_op().walk() if isinstance(op, tt.DescriptorStoreOp)]
    staging = max((block_bytes(op.src.type) for op in stores), default=0)
    rings = slots * sum(alloc_bytes(t) for t in slot_types)
    return rings + staging + 2 * 8 * slots <= SHARED_BYTES_SM90


def _slot_and_parity(b: Builder, count, stages: int):
    """(count % stages, (count / stages) & 1) as i32 values."""
    depth = b.constant(stages, i32)
    slot = b.add(arith.RemUIOp(count, depth))
    parity = b.add(arith.AndIOp(b.add(arith.DivUIOp(count, depth)), b.constant(1, i32)))
    return slot, parity


def _produce(b, loop, k_loop, loads, slice_ops, rings, full, empty, stages: int) -> None:
    """The producer's loops, built before `b`'s anchor: L's and K's bounds, the slice, and
    per K step the wait for a free slot and its copies."""
    mapping: dict = {}
    zero = b.constant(0, i32)

    def clone_slice(body_ops, into: Builder):
        for op in body_ops:
            if op in slice_ops:
                copy = op.clone(mapping)
                into.add(copy)
                mapping.update(zip(op.results, copy.results))

    def k_steps(into: Builder, count):
        inner = _counting_loop(into, k_loop, mapping, count)
        body = Builder(inner.body.terminator, k_loop.location)
        mapping[k_loop.induction_var] = inner.induction_var
        clone_slice(k_loop.body.ops, body)
        (carried,) = inner.body.arguments[1:]
        slot, parity = _slot_and_parity(body, carried, stages)
        free = body.add(arith.XOrIOp(parity, body.constant(1, i32)))
        body.add(ttng.WaitBarrierOp(body.slot(empty, slot), free))
        arrived = body.slot(full, slot)
        on = body.constant(1, i1)
        nbytes = sum(block_bytes(load.result.type) for load in loads)
        body.add(ttng.BarrierExpectOp(arrived, on, size=IntegerAttr(nbytes, i32)))
        for load in loads:
            indices = [mapping.get(v, v) for v in load.indices]
            view = body.slot(rings[load], slot)
            body.add(ttng.AsyncTMACopyGlobalToLocalOp(load.desc, indices, view, arrived, on))
        _finish(inner, body.add(arith.AddIOp(carried, body.constant(1, i32))))
        return inner.outs[0]

    if k_loop is loop:
        k_steps(b, zero)
        return
    outer = _counting_loop(b, loop, mapping, zero)
    body = Builder(outer.body.terminator, loop.location)
    mapping[loop.induction_var] = outer.induction_var
    clone_slice(loop.body.ops, body)
    _finish(outer, k_steps(body, outer.body.arguments[1]))


def _counting_loop(b: Builder, template: Operation, mapping: dict, count) -> Operation:
    """A loop over `template`'s range (its bounds through `mapping`) carrying one i32 count from
    `count`, inserted at `b`; its body ends in a yield that `_finish` fills."""
    bounds = [mapping.get(v, v) for v in (template.lowerBound, template.upperBound, template.step)]
    loop = scf.ForOp(*bounds, [count], location=template.location)
    if "unsignedCmp" in template.attributes:
        loop.attributes["unsignedCmp"] = template.attributes["unsignedCmp"]
    loop.body.append(scf.YieldOp([], location=template.location))
    b.add(loop)
    return loop


def _finish(loop: Operation, count) -> None:
    loop.body.terminator.set_operands([count])


def _consume(loop, k_loop, loads, rings, full, empty, stages: int, asynchronous: bool) -> None:
    """`loop` (L) and `k_loop` (K) carry the count of K steps; each step waits for its slot's
    copies and its dots read the slot. A lone accumulating dot runs on asynchronously: each
    step waits until only its own dot is in flight and hands the slot of the step before back,
    and after K the last dot is waited for and its slot handed back. Other dots are
    synchronous, and the step hands its own slot back after the last of them."""
    zero = Builder(loop, loop.location).constant(0, i32)
    k_count = zero
    if k_loop is not loop:
        loop = scf.carrying_more(loop, [zero])
        k_count = loop.body.arguments[-1]
        k_loop = next(op for op in loop.body.ops if isinstance(op, scf.ForOp))
    k_loop = scf.carrying_more(k_loop, [k_count])
    count = k_loop.body.arguments[-1]
    b = Builder(k_loop.body.first_op, k_loop.location)
    slot, parity = _slot_and_parity(b, count, stages)
    b.add(ttng.WaitBarrierOp(b.slot(full, slot), parity))
    views = [b.slot(rings[load], slot) for load in loads]
    for load, view in zip(loads, views):  # erased only now: the builder inserts before one
        alloc = filled_buffer(load)
        alloc.result.replace_all_uses_with(view)
        alloc.erase()
        load.erase()
    terminator = k_loop.body.terminator
    following = Builder(terminator, k_loop.location)
    after_k = following.add(arith.AddIOp(count, following.constant(1, i32)))
    terminator.set_operands([*terminator.operands, after_k])
    dots = [op for op in k_loop.body.ops if is_wgmma(op)]
    if asynchronous:
        dots[0].attributes["isAsync"] = BoolAttr(True)
        wait = wait_right_after(dots[0])
        step = Builder(wait.next_op, k_loop.location)
        started = step.add(arith.CmpIOp("ne", count, k_count))
        _hand_back(step, started, empty, count, stages)
        end = Builder(k_loop.next_op, k_loop.location)
        index = list(terminator.operands).index(wait.outputs[0])
        last = end.add(ttng.WarpGroupDotWaitOp([k_loop.outs[index]], pendings=IntegerAttr(0, i32)))
        k_loop.outs[index].replace_uses_where(last, lambda user, _i: user is not last.defining_op)
        ran = end.add(arith.CmpIOp("ne", k_loop.outs[-1], k_count))
        _hand_back(end, ran, empty, k_loop.outs[-1], stages)
    else:
        after = Builder(dots[-1].next_op, k_loop.location)
        after.add(ttng.ArriveBarrierOp(after.slot(empty, slot)))
    outer = k_loop.parent_op()
    if isinstance(outer, scf.ForOp) and outer.body is k_loop.parent:
        yielded = outer.body.terminator
        yielded.set_operands([*yielded.operands, k_loop.outs[-1]])


def _hand_back(b: Builder, condition, empty, count, stages: int) -> None:
    """If `condition`: every consumer thread arrives on the *empty* barrier of the slot before
    `count`'s, whose dot is done."""
    before = b.add(arith.AddIOp(count, b.constant(stages - 1, i32)))
    slot, _ = _slot_and_parity(b, before, stages)
    branch = scf.IfOp(condition)
    b.add(branch)
    branch.then_block.append(scf.YieldOp([], location=b.location))
    inside = Builder(branch.then_block.terminator, b.location)
    inside.add(ttng.ArriveBarrierOp(inside.slot(empty, slot)))
