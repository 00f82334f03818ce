"""Canonicalization patterns for `scf` loops and conditionals, the rewrites upstream MLIR's scf
canonicalizers make (Triton's TTIR canonicalizer is MLIR's, so Naiad's output stays comparable):

    scf.for, a carried value the body passes through       -> the init value, no longer carried
      (yields its own argument, or yields its init)
    scf.for, a carried value nothing reads                 -> dropped (result unused, and the
      (its argument only feeds pure ops that feed its yield)   argument only feeds its own update)
    scf.for with constant bounds, lb >= ub                 -> the inits
    scf.for with constant bounds and step, one iteration   -> the body, inlined
    scf.if on a constant condition                         -> the branch taken, inlined
    scf.if results yielded from values defined outside     -> arith.select (the value itself
                                                              when both branches yield it)
    scf.if results nobody uses                             -> dropped
    scf.if without results whose `else` only yields        -> no `else`
    scf.while, an argument the loop carries unchanged      -> its init, no longer carried

    %r:2 = scf.for %i = %lb to %ub step %s iter_args(%a = %x, %b = %y) -> (i32, i32) {
      %n = arith.addi %a, %b : i32
      scf.yield %n, %b : i32, i32
    }
    ==>
    %r = scf.for %i = %lb to %ub step %s iter_args(%a = %x) -> (i32) {
      %n = arith.addi %a, %y : i32
      scf.yield %n : i32
    }
"""

from __future__ import annotations

from collections.abc import Sequence

from ..dialects import arith, scf
from ..dialects.arith.folding import to_unsigned, width_of
from ..ir import (
    BlockArgument,
    BoolAttr,
    IntegerAttr,
    Operation,
    PatternRewriter,
    Pure,
    Region,
    RewritePattern,
    Value,
    constant_value,
)


def _int_constant(value: Value) -> int | None:
    attr = constant_value(value)
    if isinstance(attr, IntegerAttr) and not isinstance(attr, BoolAttr):
        return attr.value
    return None


def _inline_body(op: Operation, block, arg_values: Sequence[Value], rewriter) -> list[Value]:
    """Move `block`'s ops in front of `op`, its arguments replaced by `arg_values`; return what
    its terminator yields. The caller then replaces (and so erases) `op`."""
    for argument, value in zip(block.arguments, arg_values):
        rewriter.replace_all_uses(argument, value)
    terminator = block.last_op
    for inner in list(block):
        if inner is terminator:
            break
        rewriter.insert(inner.detach())
    return list(terminator.operands)


# -- scf.for


def _feeds_only_itself(argument: BlockArgument, index: int, body, terminator) -> list | None:
    """The ops an iteration argument feeds, when all are pure, region-free ops of the body whose
    values reach nothing but the yield at `index` (a dead cycle once the result is unused);
    None otherwise."""
    seen: dict[Operation, None] = {}
    pending = [argument]
    while pending:
        for user, position in pending.pop().uses:
            if user is terminator:
                if position != index:
                    return None
                continue
            if user.parent is not body or Pure not in user.traits or user.regions:
                return None
            if user not in seen:
                seen[user] = None
                pending.extend(user.results)
    return list(seen)


class RemoveRedundantIterArgs(RewritePattern):
    """Stop carrying the values that do not change (the yield passes the argument through, or
    yields the init) and those nobody reads (result unused, the argument only updating
    itself): the first become their init, the second disappear."""

    root = scf.ForOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        body = op.body
        terminator = body.last_op
        invariant: dict[int, Value] = {}
        dead: dict[int, list] = {}
        for i, (init, arg, out) in enumerate(zip(op.initArgs, op.region_iter_args, op.outs)):
            yielded = terminator.operands[i]
            if yielded is arg or yielded is init:
                invariant[i] = init
            elif not out.has_uses:
                feeds = _feeds_only_itself(arg, i, body, terminator)
                if feeds is not None:
                    dead[i] = feeds
        if not invariant and not dead:
            return False
        for i, init in invariant.items():
            rewriter.replace_all_uses(op.region_iter_args[i], init)
        keep = [i for i in range(len(op.outs)) if i not in invariant and i not in dead]
        terminator.set_operands([terminator.operands[i] for i in keep])
        rewriter.notify_modified(terminator)
        doomed = {inner for feeds in dead.values() for inner in feeds}
        for inner in reversed([inner for inner in body if inner in doomed]):
            rewriter.erase_op(inner)
        for i in sorted({*invariant, *dead}, reverse=True):
            body.erase_argument(i + 1)
        loop = scf.ForOp(
            op.lowerBound,
            op.upperBound,
            op.step,
            [op.initArgs[i] for i in keep],
            attributes=dict(op.attributes),
            location=op.location,
            region=Region(),
        )
        loop.region.take_body(op.region)
        rewriter.insert(loop)
        results = dict(zip(keep, loop.outs))
        # A dropped value is its init (an unused one has nothing to replace).
        rewriter.replace_op(op, [results.get(i, init) for i, init in enumerate(op.initArgs)])
        return True


class SimplifyTrivialLoop(RewritePattern):
    """A loop with constant bounds that runs zero times is its inits; one that runs exactly
    once (constant step too) is its body at `iv = lb`. The increment past the first iteration
    must not wrap: a wrapped induction variable would run the loop again."""

    root = scf.ForOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        lower, upper = _int_constant(op.lowerBound), _int_constant(op.upperBound)
        if lower is None or upper is None:
            return False
        width = width_of(op.lowerBound.type)
        unsigned = op.unsignedCmp is not None
        if unsigned:
            lower, upper = to_unsigned(lower, width), to_unsigned(upper, width)
        if lower >= upper:
            rewriter.replace_op(op, list(op.initArgs))
            return True
        step = _int_constant(op.step)
        limit = 1 << (width if unsigned else width - 1)
        if step is None or step <= 0 or lower + step < upper or lower + step >= limit:
            return False
        values = _inline_body(op, op.body, [op.lowerBound, *op.initArgs], rewriter)
        rewriter.replace_op(op, values)
        return True


# -- scf.if


def _rebuild_if(op: Operation, keep: list[int], rewriter: PatternRewriter) -> Operation:
    """A copy of `op` that takes over its regions and yields only the results in `keep`."""
    for block in (op.then_block, op.else_block):
        terminator = block.last_op
        terminator.set_operands([terminator.operands[i] for i in keep])
        rewriter.notify_modified(terminator)
    branch = scf.IfOp(
        op.condition,
        [op.outs[i].type for i in keep],
        attributes=dict(op.attributes),
        location=op.location,
        thenRegion=Region(),
        elseRegion=Region(),
    )
    branch.thenRegion.take_body(op.thenRegion)
    branch.elseRegion.take_body(op.elseRegion)
    return rewriter.insert(branch)


class InlineConstantIf(RewritePattern):
    """`scf.if` on a constant condition is the branch it takes (nothing without an `else`)."""

    root = scf.IfOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        condition = constant_value(op.condition)
        if not isinstance(condition, IntegerAttr):  # `true`, or `1 : i1`
            return False
        block = op.then_block if condition.value else op.else_block
        if block is None:
            rewriter.erase_op(op)
            return True
        rewriter.replace_op(op, _inline_body(op, block, [], rewriter))
        return True


class HoistIfResultsToSelect(RewritePattern):
    """A result whose two yielded values are defined outside the `scf.if` is
    `arith.select %cond, %then, %else` (the value itself when both branches yield the same);
    the `scf.if` keeps the other results."""

    root = scf.IfOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if not op.outs:
            return False
        then_values = op.then_block.last_op.operands
        else_values = op.else_block.last_op.operands
        inside = [
            i
            for i, (t, e) in enumerate(zip(then_values, else_values))
            if t.parent_block is op.then_block or e.parent_block is op.else_block
        ]
        if len(inside) == len(op.outs):
            return False
        hoisted = list(zip(then_values, else_values))
        branch = _rebuild_if(op, inside, rewriter)
        values = dict(zip(inside, branch.outs))
        for i, (t, e) in enumerate(hoisted):
            if i not in values:
                same = t is e
                values[i] = (
                    t if same else rewriter.create(arith.SelectOp, op.condition, t, e).result
                )
        rewriter.replace_op(op, [values[i] for i in range(len(op.outs))])
        return True


class RemoveUnusedIfResults(RewritePattern):
    """Results nobody reads are no longer yielded."""

    root = scf.IfOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        keep = [i for i, out in enumerate(op.outs) if out.has_uses]
        if len(keep) == len(op.outs):
            return False
        branch = _rebuild_if(op, keep, rewriter)
        values = dict(zip(keep, branch.outs))
        # An unused result has nothing to replace: it stands for itself.
        rewriter.replace_op(op, [values.get(i, out) for i, out in enumerate(op.outs)])
        return True


class RemoveEmptyElse(RewritePattern):
    """An `scf.if` without results whose `else` only yields needs no `else`."""

    root = scf.IfOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        block = op.else_block
        if op.outs or block is None or len(block) != 1:
            return False
        rewriter.erase_op(block.last_op)
        block.erase()
        rewriter.notify_modified(op)
        return True


# -- scf.while


class RemoveInvariantWhileArgs(RewritePattern):
    """A `before` argument that `after` yields back unchanged (its init, or the value the
    condition forwarded from that same argument) is its init on every iteration."""

    root = scf.WhileOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        before, after = op.before.block, op.after.block
        forwarded = before.last_op.args
        terminator = after.last_op
        invariant = []
        for j, (init, arg, yielded) in enumerate(
            zip(op.inits, before.arguments, terminator.operands)
        ):
            passed = isinstance(yielded, BlockArgument) and yielded.parent_block is after
            if yielded is init or (passed and forwarded[yielded.index] is arg):
                invariant.append(j)
        if not invariant:
            return False
        for j in invariant:
            rewriter.replace_all_uses(before.arguments[j], op.inits[j])
        keep = [j for j in range(len(op.inits)) if j not in invariant]
        terminator.set_operands([terminator.operands[j] for j in keep])
        rewriter.notify_modified(terminator)
        for j in reversed(invariant):
            before.erase_argument(j)
        loop = scf.WhileOp(
            [op.inits[j] for j in keep],
            [out.type for out in op.outs],
            attributes=dict(op.attributes),
            location=op.location,
            before=Region(),
            after=Region(),
        )
        loop.before.take_body(op.before)
        loop.after.take_body(op.after)
        rewriter.replace_op(op, rewriter.insert(loop))
        return True


def scf_canonicalization_patterns() -> list[RewritePattern]:
    """The patterns `canonicalize` adds for `scf` ops."""
    return [
        RemoveRedundantIterArgs(),
        SimplifyTrivialLoop(),
        InlineConstantIf(),
        HoistIfResultsToSelect(),
        RemoveUnusedIfResults(),
        RemoveEmptyElse(),
        RemoveInvariantWhileArgs(),
    ]
