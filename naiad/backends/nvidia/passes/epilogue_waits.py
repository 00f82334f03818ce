"""The waits of a fused persistent matmul's accumulator (asynchronous_dots.py's shape "with an
epilogue"): the dot runs on across the back edge, and the `scf.if` of a tile's epilogue, the
loop's last iteration of the tile, waits for it before it reads or yields the result."""

from __future__ import annotations

from ....dialects import arith, scf, ttng
from ....ir import IntegerAttr, IntegerType, Operation, Region
from ....ir.attributes import DenseElementsAttr
from ....ir.rewriter import constant_value
from ....ir.types import i1, i32
from ....passes.combine import is_zero

__all__ = ["restarts_after", "wait_in_branch"]


def wait_in_branch(branch, value, index: int, restarts: bool = False) -> None:
    """Each block of the epilogue's `branch` that reads `value` (the accumulator of a dot in
    flight) first waits for every dot, and yields the waited value; the other block yields
    `value`; the loop's yield (operand `index`) carries the branch's new result. Where the
    next iteration starts over (`restarts`, `_restarts_after`), the then block yields zeros
    instead: carried on, the last tile's accumulator kept its 128 registers a thread live
    through the whole epilogue, beside the values it converts and stores (240 registers for
    tutorial 09's 128x256 tile, 198 with the zeros). `ub.poison` would spare the zeros'
    moves, but LLVM folds a phi of poison and a value into the value, which is live again."""
    blocks = [block for block in (branch.then_block, branch.else_block) if block is not None]
    yielded = {}
    for block in blocks:
        readers = [user for user, _ in value.uses if _within(user, block)]
        if not readers:
            continue
        wait = ttng.WarpGroupDotWaitOp([value], pendings=IntegerAttr(0, i32))
        wait.location = branch.location
        block.prepend(wait)
        value.replace_uses_where(
            wait.outputs[0],
            lambda user, _index, b=block, w=wait: user is not w and _within(user, b),
        )
        yielded[block] = wait.outputs[0]
    if restarts:
        zero = 0 if isinstance(value.type.element_type, IntegerType) else 0.0
        zeros = arith.ConstantOp(DenseElementsAttr(value.type, zero), location=branch.location)
        branch.then_block.insert_before(zeros, branch.then_block.terminator)
        yielded[branch.then_block] = zeros.result
    routed = _with_result(branch, lambda block: yielded.get(block, value), value.type)
    routed.parent.terminator.set_operand(index, routed.outs[-1])


def restarts_after(branch, dot, loop, index: int) -> bool:
    """Whether nothing reads the accumulator the loop carries for `dot` once `branch`'s then
    block has run: the loop's result is unread, and the next iteration's dot starts over,
    its `useC` being `counter != 0` (or `not counter == 0`) for a counter the loop resets to
    0 where `branch`'s condition holds (a fused persistent matmul's tile end,
    fuse-nested-loops)."""
    if loop.outs[index].has_uses or dot.useC is None:
        return False
    counter = _restart_counter(dot.useC)
    arguments = list(loop.body.arguments)
    if counter is None or counter not in arguments[1:]:
        return False
    reset = loop.body.terminator.operands[arguments.index(counter) - 1].defining_op
    return (
        isinstance(reset, arith.SelectOp)
        and reset.condition is branch.condition
        and is_zero(reset.true_value)
    )


def _restart_counter(use):
    """The counter `c` of a `useC` computed as `c != 0` or `(c == 0) ^ true`; else None."""
    op = use.defining_op
    negated = False
    if isinstance(op, arith.XOrIOp):
        ones = [v for v in op.operands if constant_value(v) == IntegerAttr(1, i1)]
        others = [v for v in op.operands if v not in ones]
        if len(ones) != 1 or len(others) != 1:
            return None
        op, negated = others[0].defining_op, True
    if not isinstance(op, arith.CmpIOp) or op.predicate_name != ("eq" if negated else "ne"):
        return None
    lhs, rhs = op.lhs, op.rhs
    if is_zero(rhs):
        return lhs
    return rhs if is_zero(lhs) else None


def _with_result(branch, value_of, t):
    """`branch` rebuilt in place with one more result of type `t`, each block yielding
    `value_of(block)` for it (an else block made where there was none); the new op."""
    new = scf.IfOp(
        branch.condition,
        [*(r.type for r in branch.outs), t],
        thenRegion=Region(),
        elseRegion=Region(),
        attributes=dict(branch.attributes),
        location=branch.location,
    )
    new.thenRegion.take_body(branch.thenRegion)
    if branch.else_block is None:
        branch.elseRegion.add_block().append(scf.YieldOp([]))
    new.elseRegion.take_body(branch.elseRegion)
    for block in (new.then_block, new.else_block):
        terminator = block.terminator
        terminator.set_operands([*terminator.operands, value_of(block)])
    branch.parent.insert_before(new, branch)
    for old, result in zip(branch.outs, new.outs):
        old.replace_all_uses_with(result)
    branch.erase()
    return new


def _within(op: Operation, block) -> bool:
    """Whether `op` lies in `block`, at any depth."""
    while op is not None:
        if op.parent is block:
            return True
        op = op.parent_op()
    return False
