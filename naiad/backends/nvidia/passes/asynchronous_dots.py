"""Which wgmma dots of a pipelined loop run on asynchronously across iterations, and where the
loop's copies may then be issued (for pipeline_loads.py).

A `ttng.warp_group_dot` that reads a pipelined operand buffer, and no buffer the iteration
stores from registers, and whose result only goes on to the next iteration need not be waited
for in its own iteration: it is issued with `isAsync` and
keeps the tensor cores busy while the warps go on. What then must hold is that nothing reads
its accumulator before it completes, and that no copy overwrites the slot it reads while it
runs. Two loop shapes give both:

- **Accumulating** (a matmul's K loop): the dot accumulates straight into the value the loop
  carries, and nothing else reads it. A wait right after the dot lets at most this iteration's
  dot run on (`pendings = 1`), so the dot two iterations back is done: the rings get one slot
  more (S + 1, copies still S - 1 iterations ahead), and the copy an iteration issues at its
  start overwrites that one's slot.
- **Retired** (attention's P.V): a synchronous wgmma dot of the body (Q.K^T) comes before the
  asynchronous ones. Its `wait_group 0` retires every dot in flight, the previous iteration's
  included, so the copies of the iteration S - 1 ahead are issued right after it (and a barrier:
  every warpgroup is past its own), into the slot the previous iteration read: S slots, as many
  as without the overlap. The value the loop carries is waited for just before it is first
  read in the next iteration (`pendings = 0`: after the retiring dot a formality, but the wait
  passes the accumulator through, so its readers cannot be moved above it).

- **With an epilogue** (a fused persistent matmul, fuse-nested-loops): the dot accumulates
  into the carried value as above (a new tile's start is its `useC`,
  optimize_accumulator_init.py), and the loop's last iteration of each tile also reads the
  result, in the `scf.if` of the tile's epilogue. The wait right after the dot lets it run on
  (`pendings = 1`); the epilogue's branch waits for it (`pendings = 0`) and yields the waited
  value to the next iteration, so that no register of a dot in flight is read or copied (zeros
  where the next iteration's dot starts a tile: the value is then dead). The
  copies of the iteration S - 1 ahead are issued after that first wait (and a barrier: every
  warpgroup's previous dot is done), into the slot the previous iteration read: S slots, as
  Triton's pipeliner gives this loop; the epilogue's shared buffer lives beside the rings.

Triton's pipeliner gives its attention loop the second shape: P.V runs on across the back edge
and the next iteration's copies are issued after Q.K^T has been waited for.

- **Overlapped** (rotated attention: the retiring dot's result is first read after the
  asynchronous dots are issued): the retiring dot is issued asynchronously too, and its result
  waited for before its first reader, the dots issued since left running (`pendings` = their
  number). The values the asynchronous dots carry are waited for at the iteration's start, so
  nothing is in flight there: the copies after the retiring dot refill a slot no dot reads, and
  the warps rescale the accumulator, issue the copies and the next dot while the tensor cores
  take Q.K^T; the exponentials run beside P.V (FA3's order within a warpgroup).

A dot in flight also reads its A operand where that is in registers (PTX: until a
`wait_group` retires it, no instruction may write them). ptxas keeps the registers of the
value the dot reads until that wait, but a loop reuses one register set for the value each
iteration computes, so the next value must not be written before the wait. In the retired
shape a value computed from the retiring dot's result (attention's P from Q.K^T) comes after
it; one that is not (rotated attention: P.V reads the P the loop carries from the iteration
before, and LLVM converts and packs the carried P at the top of the next iteration, before
Q.K^T) passes through a wait of its own right before the dot, so that its registers are
written only once the dots in flight are done. In the other shapes the dot's own next issue
comes before the wait that retires the last one, so a dot whose A the loop computes stays
synchronous.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ....dialects import scf, ttg, ttng
from ....ir import IntegerAttr, Operation, RankedTensorType
from ....ir.attributes import BoolAttr
from ....ir.types import i32
from .allocate_shared_memory import alloc_bytes
from .epilogue_waits import restarts_after, wait_in_branch
from .pipeline_candidates import filled_buffer
from .scratch_size import scratch_bytes

# The shared memory one block of an sm_90 GPU may use (227 KiB, with the opt-in).
SHARED_BYTES_SM90 = 232448


@dataclass
class DotPlan:
    """The dots issued asynchronously; `retiring`: the synchronous dot after which the loop's
    copies are issued (None: they are issued at the iteration's start)."""

    dots: list = field(default_factory=list)
    retiring: Operation | None = None
    overlapped: bool = False  # the retiring dot asynchronous too (module doc)
    epilogue: Operation | None = None  # the `scf.if` that also reads the dot's result
    stages: int | None = None  # fewer stages than asked, for the epilogue's shared memory

    def extra_slots(self) -> int:
        """The slots the rings need beyond the loop's stages."""
        return 1 if self.dots and self.retiring is None and self.epilogue is None else 0

    def refill_after(self) -> Operation | None:
        """The op after which the loop's copies are issued (None: at the iteration's start)."""
        if self.epilogue is not None:
            return self.dots[0]
        return self.retiring


def plan_dots(loop, loads, stages: int) -> DotPlan:
    """How the dots of `loop` (whose `loads` are pipelined `stages` deep) overlap."""
    buffers = {filled_buffer(load).result for load in loads}
    terminator = loop.body.terminator
    carried = []
    for op in loop.body.ops:
        if not isinstance(op, ttng.WarpGroupDotOp):
            continue
        operands = {buffer_of(op.a), buffer_of(op.b)}
        if not operands & buffers or any(_stored_in(b, loop) for b in operands - buffers):
            continue
        if list(op.d.users) == [terminator] and op.d.has_one_use:
            carried.append(op)
        elif _a_computed_in(op, loop):
            continue
        elif (epilogue := _epilogue(op, loop)) and accumulates_carried(op, loop):
            dots = [d for d in loop.body.ops if isinstance(d, ttng.WarpGroupDotOp)]
            fits = _fitting_stages(buffers, epilogue, stages)
            plan = DotPlan([op], epilogue=epilogue, stages=fits)
            return plan if dots == [op] and fits else DotPlan()
    retiring = next(
        (op for op in loop.body.ops if isinstance(op, ttng.WarpGroupDotOp) and op not in carried),
        None,
    )
    body = list(loop.body.ops)
    if (
        carried
        and retiring is not None
        and all(body.index(retiring) < body.index(d) for d in carried)
    ):
        return DotPlan(carried, retiring, overlapped=_overlaps(retiring, carried, loop))
    if _ring_bytes(buffers, stages + 1) > SHARED_BYTES_SM90:
        return DotPlan()
    carried = [dot for dot in carried if not _a_computed_in(dot, loop)]
    return DotPlan([dot for dot in carried if accumulates_carried(dot, loop)])


def _overlaps(retiring, carried, loop) -> bool:
    """Whether the retiring dot may run on past the `carried` dots' issue: its A is not in
    registers the loop writes, nothing reads its result before the last of them is issued,
    and nothing reads a value they carry before it is issued (attention's rescale comes
    after Q.K^T's issue, where it overlaps it)."""
    body = list(loop.body.ops)
    last = max(body.index(dot) for dot in carried)
    readers = [_in_body(user, loop) for user in retiring.d.users]
    if _a_computed_in(retiring, loop) or not readers:
        return False
    if min(body.index(reader) for reader in readers) <= last:
        return False
    terminator = loop.body.terminator
    for dot in carried:
        argument = loop.body.arguments[list(terminator.operands).index(dot.d) + 1]
        early = [u for u in argument.users if body.index(_in_body(u, loop)) < body.index(retiring)]
        if early:
            return False
    return True


def _a_computed_in(dot, loop) -> bool:
    """Whether `dot` reads A from registers that each iteration of `loop` writes anew (a value
    of the body or one the loop carries)."""
    a = dot.a
    if not isinstance(a.type, RankedTensorType):
        return False
    owner = a.defining_op
    if owner is None:
        return any(a is argument for argument in loop.body.arguments)
    return loop.is_ancestor(owner)


def _depends_on(value, target, loop) -> bool:
    """Whether `value` is computed in `loop`'s body from the result of `target`."""
    seen, pending = set(), [value]
    while pending:
        owner = pending.pop().defining_op
        if owner is None or id(owner) in seen or not loop.is_ancestor(owner):
            continue
        if owner is target:
            return True
        seen.add(id(owner))
        pending.extend(owner.operands)
    return False


def _wait_for_a(dot, pendings: int = 0) -> None:
    """`dot` reads its register A through a wait right before it, for every dot in flight but
    the last `pendings` issued (an overlapped retiring dot, whose A is not in registers): the
    registers are written only once the previous iteration's dot is done reading them."""
    wait = ttng.WarpGroupDotWaitOp([dot.a], pendings=IntegerAttr(pendings, i32))
    wait.location = dot.location
    dot.parent.insert_before(wait, dot)
    dot.a.replace_uses_where(wait.outputs[0], lambda user, _index: user is dot)


def _ring_bytes(buffers, slots: int) -> int:
    return sum(slots * alloc_bytes(buffer.type) for buffer in buffers)


def _fitting_stages(buffers, epilogue, stages: int) -> int | None:
    """The most stages, at most `stages` and at least 2, whose rings fit in shared memory
    beside the epilogue's buffers and scratch (live with them: a nest's epilogue reused the
    rings' bytes, 128x256x64 s4 did then). None where even 2 do not."""
    buffers_in = sum(alloc_bytes(op.result.type) for op in epilogue.walk() if _allocates(op))
    scratch = max((scratch_bytes(op) or 0 for op in epilogue.walk()), default=0)
    for count in range(stages, 1, -1):
        if _ring_bytes(buffers, count) + buffers_in + scratch <= SHARED_BYTES_SM90:
            return count
    return None


def _allocates(op) -> bool:
    return isinstance(op, ttg.LocalAllocOp)


def _epilogue(dot, loop) -> Operation | None:
    """The `scf.if` after `dot` in `loop`'s body that reads its result, where the loop carries
    the result on (one use by the yield) and nothing else reads it; else None."""
    terminator = loop.body.terminator
    readers = [user for user, _ in dot.d.uses if user is not terminator]
    if dot.d.use_count - len(readers) != 1 or not readers:
        return None
    body = list(loop.body.ops)
    branches = {_in_body(user, loop) for user in readers}
    if len(branches) != 1:
        return None
    (branch,) = branches
    return branch if isinstance(branch, scf.IfOp) and body.index(branch) > body.index(dot) else None


def accumulates_carried(dot, loop) -> bool:
    """Whether `dot` accumulates into the value the loop carries for it, read by nothing else."""
    index = list(loop.body.terminator.operands).index(dot.d)
    carried_in = dot.c
    return carried_in is loop.body.arguments[index + 1] and carried_in.has_one_use


def _stored_in(buffer, loop) -> bool:
    """Whether `buffer` is written from registers in each iteration of `loop` (an operand
    no copy can fill, such as an fp8 B stored K-major from a row-major load): a dot reading
    it must be done before the next iteration writes it again."""
    owner = buffer.defining_op
    return isinstance(owner, ttg.LocalAllocOp) and owner.src is not None and loop.is_ancestor(owner)


def buffer_of(memdesc):
    """The buffer a memdesc views (through `ttg.memdesc_trans`)."""
    owner = memdesc.defining_op
    while isinstance(owner, ttg.MemDescTransOp):
        memdesc = owner.src
        owner = memdesc.defining_op
    return memdesc


def issue_asynchronously(plan: DotPlan, loop, after) -> None:
    """Issue the plan's dots of `loop` (rebuilt by the pipeliner: the same body) with
    `isAsync`, each waited for as its shape needs, and once more after the loop (`after`, a
    builder before the barrier that frees the rings) for the last iteration's."""
    terminator = loop.body.terminator
    indices = [list(terminator.operands).index(dot.d) for dot in plan.dots]
    if plan.overlapped:
        _overlap(plan, loop)
    for dot, index in zip(plan.dots, indices):
        dot.attributes["isAsync"] = BoolAttr(True)
        if plan.retiring is None:
            wait = wait_right_after(dot)
            if plan.epilogue is not None:
                restarts = restarts_after(plan.epilogue, dot, loop, index)
                wait_in_branch(plan.epilogue, wait.outputs[0], index, restarts)
        else:
            if not plan.overlapped:  # there at the iteration's start (`_overlap`)
                _wait_before_first_read(loop.body.arguments[index + 1], loop, dot.location)
            if _a_computed_in(dot, loop) and not _depends_on(dot.a, plan.retiring, loop):
                _wait_for_a(dot, pendings=int(plan.overlapped))
        _wait_for_last(loop.outs[index], after)


def _overlap(plan: DotPlan, loop) -> None:
    """The overlapped shape (module doc): the retiring dot issued asynchronously and its result
    waited for before its first reader, the dots issued since left in flight; the values the
    plan's dots carry waited for (`pendings = 0`) at the iteration's start. Where else ptxas
    would undo it: waited for after the retiring dot's issue, it serializes the wgmma (C7514:
    a dot in flight beside reads of an accumulator); waited for at the iteration's end, it
    hoists the wait above the exponentials."""
    retiring, terminator = plan.retiring, loop.body.terminator
    retiring.attributes["isAsync"] = BoolAttr(True)
    body = list(loop.body.ops)
    first = min((_in_body(user, loop) for user in retiring.d.users), key=body.index)
    since = range(body.index(retiring) + 1, body.index(first))
    issued = sum(1 for dot in plan.dots if body.index(dot) in since)
    result = ttng.WarpGroupDotWaitOp([retiring.d], pendings=IntegerAttr(issued, i32))
    result.location = retiring.location
    first.parent.insert_before(result, first)
    retiring.d.replace_uses_where(result.outputs[0], lambda user, _index: user is not result)
    carried = [loop.body.arguments[list(terminator.operands).index(d.d) + 1] for d in plan.dots]
    done = ttng.WarpGroupDotWaitOp(carried, pendings=IntegerAttr(0, i32))
    done.location = retiring.location
    loop.body.insert_before(done, loop.body.first_op)
    for value, waited in zip(carried, done.outputs):
        value.replace_uses_where(waited, lambda user, _index: user is not done)


def wait_right_after(dot) -> Operation:
    """At most this dot in flight once it is issued: the one before it is done. The wait."""
    wait = ttng.WarpGroupDotWaitOp([dot.d], pendings=IntegerAttr(1, i32))
    wait.location = dot.location
    dot.parent.insert_after(wait, dot)
    dot.d.replace_uses_where(wait.outputs[0], lambda user, _index: user is not wait)
    return wait


def _wait_for_last(result, after) -> None:
    """The loop's `result` read after every dot is done."""
    last = after.add(ttng.WarpGroupDotWaitOp([result], pendings=IntegerAttr(0, i32)))
    result.replace_uses_where(last, lambda user, _index: user is not last.defining_op)


def _wait_before_first_read(carried, loop, location) -> None:
    """Wait for every dot in flight right before the body's first reader of `carried` (the
    previous iteration's asynchronous result), which reads the wait's output instead. A value
    the body never reads needs no wait: the retiring dot waits for it before its registers are
    reused."""
    body = list(loop.body.ops)
    readers = [_in_body(user, loop) for user in carried.users]
    if not readers:
        return
    first = min(readers, key=body.index)
    wait = ttng.WarpGroupDotWaitOp([carried], pendings=IntegerAttr(0, i32))
    wait.location = location
    first.parent.insert_before(wait, first)
    carried.replace_uses_where(wait.outputs[0], lambda user, _index: user is not wait)


def _in_body(op: Operation, loop) -> Operation:
    """The op of `loop`'s body that is `op` or holds it."""
    while op.parent is not loop.body:
        op = op.parent_op()
    return op
