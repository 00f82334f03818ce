"""`arith` integer arithmetic (ArithOps.td): the binary ops, their constant folding and the
identities upstream MLIR folds to an operand (`x + 0`, `x * 1`, `x - x`, `x & x`, ...).

Constant folding wraps around; division or remainder by zero, `INT_MIN / -1` and shifts by the
bit width or more are not folded (arith/folding.py).
"""

from __future__ import annotations

from ...ir import (
    Commutative,
    Elementwise,
    Operation,
    Pure,
    SameOperandsAndResultType,
    irdl_op,
    operand,
    opt_attribute,
    result,
)
from ...ir.rewriter import constant_value
from ..base import SignlessIntegerLike, is_splat_value
from . import folding as arith_fold
from .attributes import IntegerOverflowFlagsAttr
from .folding import make_attr, to_unsigned, width_of

ARITH = frozenset({Pure, Elementwise})  # every arith op (MLIR's ElementwiseMappable, no effects)


def _is(value, number) -> bool:
    """Whether `value` is a constant (scalar or splat) equal to `number`."""
    return is_splat_value(constant_value(value), lambda v: v == number)


def _is_all_ones(value) -> bool:
    w = width_of(value.type)
    return is_splat_value(constant_value(value), lambda v: to_unsigned(v, w) == (1 << w) - 1)


def _zero_of(value):
    return make_attr(value.type, [0])


class IntBinaryOp(Operation):
    """The family of integer binary ops: `$lhs, $rhs : type`; folds constants (the rule named
    by the op's mnemonic) and the identities of `_identity`."""

    traits = ARITH | {SameOperandsAndResultType}
    lhs = operand(SignlessIntegerLike)
    rhs = operand(SignlessIntegerLike)
    result = result(SignlessIntegerLike, like="lhs")
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def fold(self):
        folded = arith_fold.fold_int_binary(self, self.name[len("arith.") :])
        if folded is not None:
            return (folded,)
        same = self._identity()
        return None if same is None else (same,)

    def _identity(self):
        return None


class IntBinaryOverflowOp(IntBinaryOp):
    """An integer op that may carry `overflow<nsw, nuw>` flags."""

    overflowFlags = opt_attribute(IntegerOverflowFlagsAttr)  # the ODS name
    assembly_format = "$lhs `,` $rhs (`overflow` `` $overflowFlags^)? attr-dict `:` type($result)"


def commuted(op, test):
    """The other operand when `test` holds for one side (commutative identities)."""
    if test(op.rhs):
        return op.lhs
    if test(op.lhs):
        return op.rhs
    return None


@irdl_op
class AddIOp(IntBinaryOverflowOp):
    name = "arith.addi"
    traits = IntBinaryOp.traits | {Commutative}

    def _identity(self):
        return commuted(self, lambda v: _is(v, 0))


@irdl_op
class SubIOp(IntBinaryOverflowOp):
    name = "arith.subi"

    def _identity(self):
        if self.lhs is self.rhs:
            return _zero_of(self.result)
        return self.lhs if _is(self.rhs, 0) else None


@irdl_op
class MulIOp(IntBinaryOverflowOp):
    name = "arith.muli"
    traits = IntBinaryOp.traits | {Commutative}

    def _identity(self):
        if _is(self.lhs, 0) or _is(self.rhs, 0):
            return _zero_of(self.result)
        return commuted(self, lambda v: _is(v, 1))


@irdl_op
class ShLIOp(IntBinaryOverflowOp):
    name = "arith.shli"

    def _identity(self):
        return self.lhs if _is(self.rhs, 0) else None


def _divisor_one(op):
    return op.lhs if _is(op.rhs, 1) else None


@irdl_op
class DivSIOp(IntBinaryOp):
    """Signed division, rounding toward zero. Upstream it is only conditionally speculatable
    (division by zero is undefined there); Naiad's targets define it and never trap, so it is
    Pure here, as every arith op."""

    name = "arith.divsi"
    _identity = _divisor_one


@irdl_op
class DivUIOp(IntBinaryOp):
    name = "arith.divui"
    _identity = _divisor_one


@irdl_op
class CeilDivSIOp(IntBinaryOp):
    name = "arith.ceildivsi"
    _identity = _divisor_one


@irdl_op
class CeilDivUIOp(IntBinaryOp):
    name = "arith.ceildivui"
    _identity = _divisor_one


@irdl_op
class FloorDivSIOp(IntBinaryOp):
    name = "arith.floordivsi"
    _identity = _divisor_one


def _rem_one(op):
    return _zero_of(op.result) if _is(op.rhs, 1) else None


@irdl_op
class RemSIOp(IntBinaryOp):
    name = "arith.remsi"
    _identity = _rem_one


@irdl_op
class RemUIOp(IntBinaryOp):
    name = "arith.remui"
    _identity = _rem_one


@irdl_op
class AndIOp(IntBinaryOp):
    name = "arith.andi"
    traits = IntBinaryOp.traits | {Commutative}

    def _identity(self):
        if self.lhs is self.rhs:
            return self.lhs
        if _is(self.lhs, 0) or _is(self.rhs, 0):
            return _zero_of(self.result)
        return commuted(self, _is_all_ones)


@irdl_op
class OrIOp(IntBinaryOp):
    name = "arith.ori"
    traits = IntBinaryOp.traits | {Commutative}

    def _identity(self):
        if self.lhs is self.rhs:
            return self.lhs
        if _is_all_ones(self.lhs) or _is_all_ones(self.rhs):
            return make_attr(self.result.type, [-1])
        return commuted(self, lambda v: _is(v, 0))


@irdl_op
class XOrIOp(IntBinaryOp):
    name = "arith.xori"
    traits = IntBinaryOp.traits | {Commutative}

    def _identity(self):
        if self.lhs is self.rhs:
            return _zero_of(self.result)
        return commuted(self, lambda v: _is(v, 0))


def _shift_by_zero(op):
    return op.lhs if _is(op.rhs, 0) else None


@irdl_op
class ShRSIOp(IntBinaryOp):
    name = "arith.shrsi"
    _identity = _shift_by_zero


@irdl_op
class ShRUIOp(IntBinaryOp):
    name = "arith.shrui"
    _identity = _shift_by_zero


def idempotent(op):
    return op.lhs if op.lhs is op.rhs else None


@irdl_op
class MaxSIOp(IntBinaryOp):
    name = "arith.maxsi"
    traits = IntBinaryOp.traits | {Commutative}
    _identity = idempotent


@irdl_op
class MaxUIOp(IntBinaryOp):
    name = "arith.maxui"
    traits = IntBinaryOp.traits | {Commutative}
    _identity = idempotent


@irdl_op
class MinSIOp(IntBinaryOp):
    name = "arith.minsi"
    traits = IntBinaryOp.traits | {Commutative}
    _identity = idempotent


@irdl_op
class MinUIOp(IntBinaryOp):
    name = "arith.minui"
    traits = IntBinaryOp.traits | {Commutative}
    _identity = idempotent
