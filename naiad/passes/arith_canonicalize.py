"""Reassociation of integer constants, as upstream MLIR's arith canonicalization does, so that a
chain of constant offsets (Philox's `key + KEY` per round, an index `(i + 1) + 2`) becomes one
operation on the variable:

    op(op(x, c0), c1)     -> op(x, op(c0, c1))      op: muli, andi, ori, xori
    addi(addi(x, c0), c1) -> addi(x, c0 + c1)
    addi(subi(x, c0), c1) -> addi(x, c1 - c0)       subi(addi(x, c0), c1) -> addi(x, c0 - c1)
    addi(subi(c0, x), c1) -> subi(c0 + c1, x)       subi(c1, addi(x, c0)) -> subi(c1 - c0, x)
    subi(subi(x, c0), c1) -> subi(x, c0 + c1)       subi(subi(c0, x), c1) -> subi(c0 - c1, x)
    subi(c1, subi(x, c0)) -> subi(c0 + c1, x)       subi(c1, subi(c0, x)) -> addi(x, c1 - c0)

Integers only: wrap-around arithmetic is associative, floating point is not. The constant part is
built as an op on the two constants, which folds. The rewritten op carries no overflow flags: a
flag that held for the two steps need not hold for the merged one (dropping one is always safe).
Constants may sit on either side of a commutative op (nothing moves them to the right first).
"""

from __future__ import annotations

from ..dialects import arith
from ..ir import Operation, PatternRewriter, RewritePattern, Value, constant_value


def _split(op: Operation) -> tuple[Value, Value, int, int] | None:
    """`op` (an addi or subi) as `sx * x + sc * c`: (x, c, sx, sc), c a constant and x not;
    None when it is no such op."""
    if not isinstance(op, arith.AddIOp | arith.SubIOp):
        return None
    lhs_constant = constant_value(op.lhs) is not None
    rhs_constant = constant_value(op.rhs) is not None
    if lhs_constant == rhs_constant:
        return None
    negate = -1 if isinstance(op, arith.SubIOp) else 1
    if rhs_constant:
        return op.lhs, op.rhs, 1, negate
    return op.rhs, op.lhs, negate, 1


def _split_same(op: Operation, kind: type) -> tuple[Value, Value] | None:
    """(x, c) for `kind(x, c)` or `kind(c, x)`, c a constant and x not."""
    if not isinstance(op, kind):
        return None
    lhs_constant = constant_value(op.lhs) is not None
    rhs_constant = constant_value(op.rhs) is not None
    if lhs_constant == rhs_constant:
        return None
    return (op.lhs, op.rhs) if rhs_constant else (op.rhs, op.lhs)


class ReassociateConstants(RewritePattern):
    """op(op(x, c0), c1) -> op(x, op(c0, c1)) for an associative, commutative integer op
    other than addi (the subclass's `root`)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        outer = _split_same(op, self.root)
        if outer is None:
            return False
        inner_value, c1 = outer
        inner = _split_same(inner_value.defining_op, self.root)
        if inner is None:
            return False
        x, c0 = inner
        constant = rewriter.create(self.root, c0, c1).result
        rewriter.replace_op(op, rewriter.create(self.root, x, constant))
        return True


class ReassociateMulIConstants(ReassociateConstants):
    root = arith.MulIOp


class ReassociateAndIConstants(ReassociateConstants):
    root = arith.AndIOp


class ReassociateOrIConstants(ReassociateConstants):
    root = arith.OrIOp


class ReassociateXOrIConstants(ReassociateConstants):
    root = arith.XOrIOp


class ReassociateAddSubConstants(RewritePattern):
    """An addi or subi of a constant and of an addi or subi of a constant, written as upstream
    writes the result (the subclass's `root` says which outer op)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        outer = _split(op)
        if outer is None:
            return False
        inner_value, c1, a, b = outer
        inner = _split(inner_value.defining_op)
        if inner is None:
            return False
        x, c0, sx, sc = inner
        # op = a * inner + b * c1 = (a * sx) * x + (a * sc) * c0 + b * c1
        x_sign, p, q = a * sx, a * sc, b
        if x_sign > 0 and p < 0 and q < 0:  # x - c0 - c1 = x - (c0 + c1), kept a subi
            total = rewriter.create(arith.AddIOp, c0, c1).result
            rewriter.replace_op(op, rewriter.create(arith.SubIOp, x, total))
            return True
        if p > 0 and q > 0:
            total = rewriter.create(arith.AddIOp, c0, c1).result
        elif p > 0:
            total = rewriter.create(arith.SubIOp, c0, c1).result
        else:
            total = rewriter.create(arith.SubIOp, c1, c0).result
        if x_sign > 0:
            rewriter.replace_op(op, rewriter.create(arith.AddIOp, x, total))
        else:
            rewriter.replace_op(op, rewriter.create(arith.SubIOp, total, x))
        return True


class ReassociateAddIConstants(ReassociateAddSubConstants):
    root = arith.AddIOp


class ReassociateSubIConstants(ReassociateAddSubConstants):
    root = arith.SubIOp


def arith_canonicalization_patterns() -> list[RewritePattern]:
    """The patterns `canonicalize` adds for `arith` ops."""
    return [
        ReassociateAddIConstants(),
        ReassociateSubIConstants(),
        ReassociateMulIConstants(),
        ReassociateAndIConstants(),
        ReassociateOrIConstants(),
        ReassociateXOrIConstants(),
    ]
