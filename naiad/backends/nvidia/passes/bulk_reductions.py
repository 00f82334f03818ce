"""`tritongpu-pipeline-bulk-reductions`: a block atomic in a loop (`tt.descriptor_reduce`, one
bulk tensor reduction) leaves its block to the copy engine while the loop goes on.

Lowered where it stands (lowering/tma.py), a reduction writes its block into the op's scratch,
issues the reduction, and its issuing thread waits until the engine has read the scratch, which
the next op may reuse; the issuing warp's next `wgmma` waits with it. Attention backward's dQ,
added by key block in the dK/dV walk, paid that wait on every step. Here the loop gets a
buffer of the block's own, allocated before it: each iteration first waits for the previous
iteration's reduction to have read the buffer (long done by then), writes its block and issues
its reduction without waiting; one wait after the loop lets the buffer go. The reductions of one
loop are ordered among themselves as before (one bulk group each, issued in order), and none is
ordered with the loop's other accesses, as none was: a block atomic orders nothing.

    scf.for ... { ...; tt.descriptor_reduce add, %d[%i, %j], %v }
    ==>
    %buf = ttg.local_alloc : () -> !ttg.memdesc<64x128xf32, #nvmma_shared, #smem, mutable>
    scf.for ... { ...; ttng.async_tma_store_wait {pendings = 0}
                  ttg.local_store %v, %buf; ttng.async_tma_reduce add, %d[%i, %j] %buf }
    ttng.async_tma_store_wait {pendings = 0}

The buffer's layout is the one the copy engine reads (lowering/tma.py's `block_encoding`); the
store into it is fenced to the asynchronous proxy and published by a barrier before the
reduction is issued (lowering/barriers.py), as a tensor copy's store is.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects import scf, tt, ttg, ttng
from ....dialects.ttg.attributes import SHARED_MEMORY
from ....dialects.ttg.types import MemDescType
from ....ir import IntegerAttr, Operation, register_pass
from ....ir.passes import Pass
from ....ir.types import i32
from ..lowering.tma import block_encoding


@register_pass("tritongpu-pipeline-bulk-reductions")
@dataclass(frozen=True)
class PipelineBulkReductions(Pass):
    """Give each `tt.descriptor_reduce` directly in a loop's body a buffer of its own."""

    def run(self, module: Operation) -> None:
        for reduce in [op for op in module.walk() if isinstance(op, tt.DescriptorReduceOp)]:
            loop = reduce.parent.parent_op()
            if isinstance(loop, scf.ForOp) and not _in_partition(loop):
                _asynchronous(reduce, loop)


def _in_partition(op: Operation) -> bool:
    """Whether `op` lies in a warp-specialized partition, whose warps share no buffer made
    outside it (a reduction there stays where it stands)."""
    parent = op.parent_op()
    while parent is not None:
        if parent.name.startswith("ttg.warp_specialize"):
            return True
        parent = parent.parent_op()
    return False


def _asynchronous(reduce: Operation, loop: Operation) -> None:
    t = reduce.src.type
    memdesc = MemDescType(t.shape, t.element_type, block_encoding(t), SHARED_MEMORY, True)
    buffer = ttg.LocalAllocOp(None, result=memdesc, location=loop.location)
    loop.parent.insert_before(buffer, loop)
    replacement = [
        _wait(reduce.location),
        ttg.LocalStoreOp(reduce.src, buffer.result, location=reduce.location),
        ttng.AsyncTMAReduceOp(
            reduce.desc, list(reduce.indices), buffer.result, kind=reduce.kind,
            location=reduce.location,
        ),
    ]  # fmt: skip
    for op in replacement:
        reduce.parent.insert_before(op, reduce)
    reduce.erase()
    if not _waits_after(loop):
        loop.parent.insert_after(_wait(loop.location), loop)


def _wait(location) -> Operation:
    return ttng.TMAStoreWaitOp(pendings=IntegerAttr(0, i32), location=location)


def _waits_after(loop: Operation) -> bool:
    """Whether the op after `loop` is already the wait (a second reduction of the loop's)."""
    following = loop.next_op
    return isinstance(following, ttng.TMAStoreWaitOp)
