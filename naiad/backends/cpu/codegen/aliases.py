"""Which tensors of the Linalg form share a buffer once lowered, and where an op really runs.

The code generator gives a view op's result the buffer of its source (lower_tensor.py: slices
always, reshapes when the source is contiguous), so a read of the view is a read of the source's
buffer, at the reader's position. An optimization that overwrites a buffer before the end of its
tensor's life (a loop's carried tensor updated in place, lower_control.py) must know every such
read, not only the source's own users: a broadcast `a[:, None]` fused into a later generic reads
`a` where that generic runs.

Where an op runs is its position in its block, but for a generic that store_plan.py lowers at
its store: its reads happen there.
"""

from __future__ import annotations

# Ops whose result is a view of their first operand's buffer.
VIEW_OPS = frozenset(
    {
        "tensor.extract_slice",
        "tensor.expand_shape",
        "tensor.collapse_shape",
        "tensor.reshape",
        "tensor.cast",
    }
)


def aliases(value) -> list:
    """`value` and every tensor that is a view of it, through any chain of view ops."""
    found, pending = [], [value]
    while pending:
        v = pending.pop()
        found.append(v)
        for user, index in v.uses:
            if user.name in VIEW_OPS and index == 0:
                pending.append(user.results[0])
    return found


def buffer_readers(value) -> list:
    """The ops that use the buffer of tensor `value` other than by making a view of it: the
    users of `value` and of each of its views (each op once)."""
    readers = []
    for alias in aliases(value):
        for user, index in alias.uses:
            if (user.name in VIEW_OPS and index == 0) or user in readers:
                continue
            readers.append(user)
    return readers


def runs_after(op, anchor, lowered_at) -> bool:
    """Whether `op` runs after `anchor`, an op of the same block as the op holding `op` or as
    `op` itself: `lowered_at` maps an op the code generator lowers elsewhere (a generic
    lowered at its store) to the op where it is lowered."""
    block = anchor.parent
    while op is not None:
        op = lowered_at.get(op, op)
        if op.parent is block:
            break
        op = op.parent_op()
    if op is None:
        return False
    cursor = anchor.next_op
    while cursor is not None:
        if cursor is op:
            return True
        cursor = cursor.next_op
    return False
