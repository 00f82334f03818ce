"""Which loops tritongpu-warp-specialize (warp_specialize.py) splits, and the ops the producer
needs of them.

The loop `L` marked `warp_specialize` is in the kernel's body; what follows it (an epilogue) the
consumers will run, so it may not synchronize the whole CTA by a barrier of its own (a polling
vote); what precedes it every warp runs, the producer's too, so it may not hold an op whose
effect a repetition would change (atomics, prints). The loop `K` holding the loads is `L` or the
one loop in `L`'s body, holding no loop itself. K's block loads through tensor maps made before
`L` each fill a buffer that only `wgmma` dots read, and those dots read nothing else: the slots
are what the consumers hand back. The loads' block indices and K's bounds come from pure scalar
arithmetic on the induction variables and values defined before `L` (not from values a loop
carries): the producer clones that arithmetic.
"""

from __future__ import annotations

from ....dialects import scf, tt, ttg, ttng
from ....ir import Operation, Pure, RankedTensorType
from .asynchronous_dots import buffer_of
from .pipeline_candidates import filled_buffer


def shape(loop: Operation):
    """(K, its copied loads, the scalar ops of L and K their indices and K's bounds need), or
    None where `loop` does not qualify (module doc)."""
    if any(_barrier_of_its_own(op) for after in epilogue(loop) for op in after.walk()):
        return None
    if any(_not_repeatable(op) for before in _prologue(loop) for op in before.walk()):
        return None
    inner = [op for op in loop.body.ops if isinstance(op, scf.ForOp | scf.WhileOp)]
    k_loop = loop if not inner else inner[0]
    if len(inner) > 1 or any(
        isinstance(op, scf.ForOp | scf.WhileOp)
        for op in loop.walk()
        if op is not loop and op is not k_loop
    ):
        return None
    if any(_barrier_of_its_own(op) for op in loop.walk()):
        return None
    loads = [op for op in k_loop.body.ops if isinstance(op, tt.DescriptorLoadOp)]
    if not loads or not all(_feeds_wgmma(load) for load in loads):
        return None
    buffers = {filled_buffer(load).result for load in loads}
    if not all(_reads_only(dot, buffers) for dot in k_loop.body.ops if is_wgmma(dot)):
        return None
    if any(_inside(load.desc, loop) for load in loads):
        return None
    needed = [*(v for load in loads for v in load.indices)]
    if k_loop is not loop:
        needed += [k_loop.lowerBound, k_loop.upperBound, k_loop.step]
    ops = _scalar_slice(needed, loop, k_loop)
    return None if ops is None else (k_loop, loads, ops)


def epilogue(loop: Operation) -> list:
    """The ops after `loop` up to the function's return (the consumers run them)."""
    ops, op = [], loop.next_op
    while op is not None and not isinstance(op, tt.ReturnOp):
        ops.append(op)
        op = op.next_op
    return ops


def _prologue(loop: Operation) -> list:
    """The ops of the kernel's body before `loop`: every warp runs them, the producer's too."""
    ops, op = [], loop.prev_op
    while op is not None:
        ops.append(op)
        op = op.prev_op
    return ops


_ONCE_PER_THREAD = (tt.AtomicRMWOp, tt.AtomicCASOp, tt.AtomicPollOp, tt.PrintOp, tt.AssertOp)


def _not_repeatable(op: Operation) -> bool:
    """An op the producer's warps, running the prologue beside the kernel's own, would repeat
    with an effect (an atomic counted twice, a line printed twice); a store of the same values
    to the same addresses is not one."""
    return isinstance(op, _ONCE_PER_THREAD)


def _barrier_of_its_own(op: Operation) -> bool:
    """Ops whose lowering synchronizes the whole CTA by a barrier of its own, not the
    emitter's (which a partition turns into its named barrier): a polling vote."""
    return isinstance(op, tt.AtomicPollOp)


def is_wgmma(op: Operation) -> bool:
    return isinstance(op, ttng.WarpGroupDotOp)


def _reads_only(dot: Operation, buffers: set) -> bool:
    """Whether both of `dot`'s operands are (transposed views of) `buffers`: the slots the
    consumers hand back once the dot is done."""
    return buffer_of(dot.a) in buffers and buffer_of(dot.b) in buffers


def _feeds_wgmma(load: Operation) -> bool:
    """Whether `load` fills a buffer that only `wgmma` dots read (through transposed views)."""
    alloc = filled_buffer(load)
    if alloc is None or alloc.src.defining_op is not load:
        return False
    readers = list(alloc.result.users)
    while readers:
        reader = readers.pop()
        if isinstance(reader, ttg.MemDescTransOp):
            readers += list(reader.result.users)
        elif not isinstance(reader, ttng.WarpGroupDotOp):
            return False
    return True


def _inside(value, loop: Operation) -> bool:
    """Whether `value` is defined in `loop` (an op or block argument of its regions)."""
    owner = value.defining_op if value.defining_op is not None else value.owner.parent_op()
    while owner is not None:
        if owner is loop:
            return True
        owner = owner.parent_op()
    return False


def _scalar_slice(values, loop: Operation, k_loop: Operation):
    """The ops of `loop`'s and `k_loop`'s bodies that `values` depend on, in program order,
    or None where one is not pure scalar arithmetic or a value is carried by a loop."""
    bodies = {loop.body, k_loop.body}
    inductions = {loop.induction_var, k_loop.induction_var}
    needed, pending = set(), list(values)
    while pending:
        value = pending.pop()
        op = value.defining_op
        if op is None:
            if value.owner in bodies and value not in inductions:
                return None  # an iter_arg: its update chain would have to be cloned
            continue
        if op.parent not in bodies or op in needed:
            continue
        if (
            Pure not in op.traits
            or op.regions
            or any(isinstance(r.type, RankedTensorType) for r in op.results)
        ):
            return None
        needed.add(op)
        pending += list(op.operands)
    return [op for body in (loop.body, k_loop.body) for op in body.ops if op in needed]
