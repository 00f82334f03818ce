"""Rematerialization through an `scf.if`: a value a branch yields changes layout with what
computes it in both branches, so that a conversion after the branch goes.

A fused persistent loop (fuse-nested-loops) computes its tile's offsets in a branch taken where
a tile starts, and carries them to the K steps that read them; convert-to-ttgir gives the
carried offsets a layout of their own, and without this every K step converted them (tutorial
09's persistent matmul: 384 offsets through shared memory, 4 barriers a K step):

    %o = scf.if %first -> tensor<128xi32, #b2> { ...; scf.yield %rows } else { scf.yield %c }
    %x = ttg.convert_layout %o : #b2 -> #ttg.slice<{dim = 1, parent = #b1}>
    ==>
    %o = scf.if %first -> tensor<128xi32, #slice> { ...; scf.yield %rows1 } else { scf.yield %c1 }

The slice (rematerialization.py) goes on from the result to the value each branch yields for
it; the result is retyped in place, and whatever else reads it reads a conversion back to the
old layout after the branch (a cost, counted by the slice).
"""

from __future__ import annotations

from ....dialects import scf, ttg
from ....ir import Operation, Value


def branch_of(value: Value) -> tuple[scf.IfOp, int] | None:
    """(the `scf.if`, the result's index) of a result of a branch with both blocks."""
    op = value.defining_op
    if not isinstance(op, scf.IfOp) or op.else_block is None:
        return None
    return op, list(op.outs).index(value)


def yielded(value: Value) -> list[Value]:
    """The values the two blocks yield for the branch result `value`."""
    branch, index = branch_of(value)
    return [block.terminator.operands[index] for block in (branch.then_block, branch.else_block)]


def retype(result: Value, encoding, new_yielded: list[Value], copies: set[Operation]) -> None:
    """Give the branch result `result` the layout `encoding`, its blocks yielding
    `new_yielded`; readers other than `copies` keep the old layout through a conversion."""
    branch, index = branch_of(result)
    for block, value in zip((branch.then_block, branch.else_block), new_yielded):
        block.terminator.set_operand(index, value)
    old_type = result.type
    result.type = old_type.clone(encoding=encoding)
    back = ttg.ConvertLayoutOp(result, result=old_type, location=branch.location)
    branch.parent.insert_after(back, branch)
    result.replace_uses_where(back.result, lambda op, _: op is not back and op not in copies)
    if not back.result.users:
        back.erase()
