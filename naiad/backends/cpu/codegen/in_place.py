"""Which generic of an `scf.for` body may write a carried tensor's buffer in place.

A tensor carried by a loop lives in a buffer the loop owns (lower_control.py); the generic that
makes its next value (`acc = acc + f(x)`) may write that buffer itself instead of a fresh one
copied in at the `scf.yield`. That overwrites the carried value while the iteration runs, so it
is legal only when every read of the carried value's buffer happens before the write, or is the
generic's own read of the element it is about to write (an identity map). A read may come
through a view of the buffer (`a[:, None]`, a reshape, a split: aliases.py) and may happen
later than its op's place in the block (a generic lowered at its store): both count, where they
run, and a yield of a view is a read at the yield.

Before, only the carried value's own users were checked, so `t = a[:, None] + r; a = a * 10;
b = b + t` read the new `a` once the broadcast was fused into `b`'s generic (issue 13).
"""

from __future__ import annotations

from .aliases import aliases, buffer_readers, runs_after
from .lower_matmul import MATMULS, accumulates_in_place
from .views import View


def update_in_place(fl, block, arguments, buffers) -> None:
    """Record in `fl.into` each generic of loop body `block` that writes a carried tensor's
    buffer itself (see the module); a dot accumulating into the carried tensor does the same
    (lower_matmul.accumulates_in_place), and so do a dot and the generic scaling the carried
    tensor it accumulates into (`scaled_accumulator`)."""
    yielded = block.last_op.operands
    for argument, buffer, value in zip(arguments, buffers, yielded):
        generic = value.defining_op
        if buffer is None:
            continue
        if inserts_in_place(generic, argument, value, block):
            fl.into[generic] = buffer
            continue
        if accumulates_in_place(generic, argument, block) or in_place_target(
            fl.plan, generic, argument, value, block
        ):
            fl.into[generic] = buffer
            continue
        scaling = scaled_accumulator(fl.plan, generic, argument, value, block)
        if scaling is not None:
            fl.into[scaling] = buffer
            fl.into[generic] = buffer


def inserts_in_place(insert, argument, value, block) -> bool:
    """Whether `insert` (a `tensor.insert_slice` or `tensor.insert` making the carried
    `argument`'s next `value`) may write the loop's buffer itself: it inserts into the
    argument, which nothing else reads, and its result is only yielded. A scan's loop (one
    element, or one slice, written per iteration) copied the whole carried tensor twice an
    iteration without this: cumsum of a 1024-lane block, 4 KB copied per element."""
    if insert is None or insert.name not in ("tensor.insert_slice", "tensor.insert"):
        return False
    if insert.parent is not block or insert.dest is not argument:
        return False
    return len(argument.uses) == 1 and len(value.uses) == 1


def scaled_accumulator(plan, dot, argument, value, block):
    """The generic making the accumulator of `dot` (which makes the carried `argument`'s next
    `value`) when both may write the loop's buffer, else None: attention's
    `acc = tl.dot(p, v, acc * alpha[:, None])`. The generic updates the buffer in place (as
    `in_place_target` allows: no read of the old value runs after it), then the dot reads each
    C element before it writes it, as a dot accumulating into the carried tensor does; without
    this the scaled tensor was copied into the dot's own buffer and the dot's result into the
    loop's, two passes over the accumulator per iteration."""
    if dot is None or dot.name not in MATMULS or dot.parent is not block:
        return None
    if len(value.uses) != 1:  # the dot's result: yielded only
        return None
    (init,) = dot.outputs  # read by the dot only (in_place_target: one use)
    scaling = init.defining_op
    return scaling if in_place_target(plan, scaling, argument, init, block) else None


def in_place_target(plan, generic, argument, value, block) -> bool:
    """Whether `generic`, which makes the carried `argument`'s next `value`, may write the
    loop's buffer itself; `plan` (store_plan.StorePlan) says where deferred generics run."""
    if generic is None or generic.name != "linalg.generic":
        return False
    if generic.parent is not block or len(generic.results) != 1 or len(value.uses) != 1:
        return False
    if any(t.value != "parallel" for t in generic.iterator_types):
        return False
    maps = generic.maps()
    if not maps[-1].is_identity:
        return False
    out = generic.body.arguments[len(generic.inputs)]
    if out.has_uses:  # writing the buffer, it would read the buffer, not its init
        return False
    shared = aliases(argument)
    for v, m in zip(generic.inputs, maps):
        # Another element of the buffer, or one through a view, may be written already.
        if any(v is alias for alias in shared) and (v is not argument or not m.is_identity):
            return False
    readers = [user for user in buffer_readers(argument) if user is not generic]
    if any(generic.is_ancestor(user) for user in readers):
        return False  # its body reads any element (a gather's tensor.extract)
    return not any(runs_after(user, generic, plan.lowered_at) for user in readers)


def deferred_inits(fl, op) -> frozenset:
    """Positions of the carried tensors of `scf.for` `op` whose fill before the loop can be
    skipped: the init is a splat constant (a global read with stride 0, which LLVM folds, and
    which nothing can write) and the carried value's only reader is the elementwise generic
    that `update_in_place` lets write the buffer, through an identity map: on the first
    iteration it reads the splat itself (lower_control.FirstIterationView)."""
    block = op.body
    yielded = block.last_op.operands
    deferred = set()
    for i, (init, argument, value) in enumerate(zip(op.initArgs, op.region_iter_args, yielded)):
        maker = init.defining_op
        if maker is None or maker.name != "arith.constant":
            continue
        view = fl.value(init)
        if not isinstance(view, View) or any(stride != 0 for stride in view.strides):
            continue
        generic = value.defining_op
        users = list(argument.users)
        if generic is None or generic.name != "linalg.generic" or users != [generic]:
            continue
        if len(argument.uses) != 1 or argument not in list(generic.inputs):
            continue
        if in_place_target(fl.plan, generic, argument, value, block):
            deferred.add(i)
    return frozenset(deferred)
