"""Loads that reach a loop's dots through other ops, or any load of a loop whose stages the
kernel set (`tl.range(..., num_stages=N)`), given a buffer so that the pipeliner takes them too
(tritongpu-pipeline, pipeline_loads.py).

The pipeliner copies a load ahead when a shared buffer is its one reader (a dot operand's tile).
Triton's pipeliner also takes the loads whose values reach a dot by any path: attention
backward's row statistics (`m` and `Di`, read in every iteration of dK/dV's loop and subtracted
from one dot's result before the next dot reads it) wait a global round trip in every iteration
otherwise. Such a load gets a buffer here, read back in its own layout:

    %m = tt.load %ptrs                 ==>   %m = tt.load %ptrs
    ... uses of %m ...                       %buffer = ttg.local_alloc %m   (no swizzle)
                                             %m_read = ttg.local_load %buffer
                                             ... uses of %m_read ...

which makes it a load the pipeliner fills by `cp.async` (pipeline_candidates.py). As Triton's
pipeliner, a loop whose `num_stages` the kernel gave (the `tt.num_stages` attribute) has every
such load copied ahead, dots or not (a vector add over a row's blocks). A load takes
a buffer only where it would then qualify (its vectors at least 4 bytes, its `other` zero, its
address computable iterations ahead) and only when it is small (`MAX_BYTES`: vectors and thin
tiles, not an attention mask's [BLOCK_M, BLOCK_N] tile, whose ring of stages would take the
shared memory the operands' rings need); `unbuffer` takes the buffer back from one the
pipeliner left, so no load pays a round trip through shared memory for nothing.
"""

from __future__ import annotations

from ....dialects import tt, ttg, ttng
from ....dialects.ttg.attributes import SHARED_MEMORY, SwizzledSharedEncodingAttr
from ....dialects.ttg.types import MemDescType
from ....ir import Operation, RankedTensorType

_DOTS = (tt.DotOp, ttng.WarpGroupDotOp)
MAX_BYTES = 4096  # a buffered load's tile, per stage


def buffer_dot_inputs(loop: Operation, qualifies) -> list[Operation]:
    """Give a buffer to each load of `loop`'s body that reaches a dot of the body through
    other ops (any load, in a loop whose stages the kernel set) and `qualifies(load)` once
    buffered; return those loads."""
    every_load = "tt.num_stages" in loop.attributes
    buffered = []
    for load in list(loop.body.ops):
        if not _unbuffered_tile(load) or not (every_load or _reaches_a_dot(load, loop)):
            continue
        _buffer(load)
        if qualifies(load):
            buffered.append(load)
        else:
            unbuffer(load)
    return buffered


def unbuffer(load: Operation) -> None:
    """Undo `_buffer`: the load's readers read it again."""
    alloc = next(iter(load.result.users))
    read = next(iter(alloc.result.users))
    read.result.replace_all_uses_with(load.result)
    read.erase()
    alloc.erase()


def _unbuffered_tile(load: Operation) -> bool:
    """A small tensor load (`MAX_BYTES`) that no buffer reads yet."""
    if not isinstance(load, tt.LoadOp) or not isinstance(load.result.type, RankedTensorType):
        return False
    t = load.result.type
    if t.numel * max(t.element_type.width // 8, 1) > MAX_BYTES:
        return False
    return not any(isinstance(user, ttg.LocalAllocOp) for user in load.result.users)


def _reaches_a_dot(load: Operation, loop: Operation) -> bool:
    """Whether the load's value reaches a dot of the body through other ops of the body."""
    seen, pending = set(), [load.result]
    while pending:
        for user in pending.pop().users:
            while user is not None and user.parent is not loop.body:
                user = user.parent_op()  # an op nested in an `scf.if` of the body
            if user is None or user in seen:
                continue
            if isinstance(user, _DOTS):
                return True
            seen.add(user)
            pending.extend(user.results)
    return False


def _buffer(load: Operation) -> None:
    t = load.result.type
    order = list(reversed(range(len(t.shape))))  # row-major: the last dimension fastest
    encoding = SwizzledSharedEncodingAttr(1, 1, 1, order)
    memdesc = MemDescType(t.shape, t.element_type, encoding, SHARED_MEMORY)
    alloc = ttg.LocalAllocOp(load.result, result=memdesc, location=load.location)
    read = ttg.LocalLoadOp(alloc.result, result=t, location=load.location)
    load.parent.insert_after(alloc, load)
    load.parent.insert_after(read, alloc)
    load.result.replace_uses_where(read.result, lambda user, _: user is not alloc)
