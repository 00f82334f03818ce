"""Where a dot operand's shared-memory buffer is written, and when two dots share one.

Both tensor-core paths read their operands from buffers (`ttg.local_alloc %x`): `mma.sync`
through `ldmatrix` (dot_operands_shared.py), `wgmma` directly (wgmma_dot.py). As Triton places
them, the buffer is written where its tensor is made, and one buffer serves every dot that
reads the tensor in the same layout:

- an operand made before a loop (attention backward's K and V, the forward's Q) is stored once,
  not in every iteration of the loop that reads it;
- a tile two dots read (the backward's Q^T, read as it is and transposed; its dO) is one
  buffer, so that its load has one reader, the buffer, and the pipeliner can fill it by
  `cp.async` (pipeline_loads.py takes a load one buffer reads).
"""

from __future__ import annotations

from ....dialects import ttg


def operand_buffer(value, memdesc, location):
    """The buffer of type `memdesc` holding `value`: an existing one, or a new one written
    right after `value` is made (at its block's start for a block argument)."""
    for user in value.users:
        if isinstance(user, ttg.LocalAllocOp) and user.result.type == memdesc:
            return user.result
    alloc = ttg.LocalAllocOp(value, result=memdesc, location=location)
    owner = value.defining_op
    if owner is not None:
        owner.parent.insert_after(alloc, owner)
        return alloc.result
    # A block argument's buffer goes at the block's start, after those of the arguments
    # stored before it (in the order the dots read them).
    block = value.parent_block
    anchor = next((op for op in block.ops if not _stores_an_argument(op)), None)
    if anchor is None:
        block.append(alloc)
    else:
        block.insert_before(alloc, anchor)
    return alloc.result


def _stores_an_argument(op) -> bool:
    return isinstance(op, ttg.LocalAllocOp) and op.src is not None and op.src.defining_op is None
