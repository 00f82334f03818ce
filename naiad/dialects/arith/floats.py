"""`arith` float arithmetic (ArithOps.td): the binary ops and `negf`, folded in the precision
of their type, with IEEE-754 NaN and signed-zero rules (arith/folding.py)."""

from __future__ import annotations

import math

from ...ir import (
    Commutative,
    Operation,
    SameOperandsAndResultType,
    irdl_op,
    operand,
    opt_attribute,
    result,
)
from ...ir.rewriter import constant_value
from ..base import FloatLike, is_splat_value
from . import folding as arith_fold
from .attributes import FastMathFlagsAttr
from .integers import ARITH, commuted, idempotent


class FloatBinaryOp(Operation):
    """The family of float binary ops: `$lhs, $rhs (fastmath<...>)? : type`."""

    traits = ARITH | {SameOperandsAndResultType}
    lhs = operand(FloatLike)
    rhs = operand(FloatLike)
    fastmath = opt_attribute(FastMathFlagsAttr)
    result = result(FloatLike, like="lhs")
    assembly_format = "$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($result)"

    def fold(self):
        folded = arith_fold.fold_float_binary(self, self.name[len("arith.") :])
        if folded is not None:
            return (folded,)
        same = self._identity()
        return None if same is None else (same,)

    def _identity(self):
        return None


def _is_float(value, number: float, negative: bool = False) -> bool:
    """A float constant equal to `number`, with the given sign (so -0.0 is not 0.0)."""
    return is_splat_value(
        constant_value(value),
        lambda v: v == number and (math.copysign(1.0, v) < 0) == negative,
    )


@irdl_op
class AddFOp(FloatBinaryOp):
    name = "arith.addf"
    traits = FloatBinaryOp.traits | {Commutative}

    def _identity(self):
        # x + -0.0 is x for every x (x + +0.0 is not: -0.0 + 0.0 is +0.0).
        return commuted(self, lambda v: _is_float(v, 0.0, negative=True))


@irdl_op
class SubFOp(FloatBinaryOp):
    name = "arith.subf"

    def _identity(self):
        return self.lhs if _is_float(self.rhs, 0.0) else None


@irdl_op
class MulFOp(FloatBinaryOp):
    name = "arith.mulf"
    traits = FloatBinaryOp.traits | {Commutative}

    def _identity(self):
        return commuted(self, lambda v: _is_float(v, 1.0))


@irdl_op
class DivFOp(FloatBinaryOp):
    name = "arith.divf"

    def _identity(self):
        return self.lhs if _is_float(self.rhs, 1.0) else None


@irdl_op
class RemFOp(FloatBinaryOp):
    name = "arith.remf"


@irdl_op
class MaximumFOp(FloatBinaryOp):
    """max with NaN propagation and -0 < +0 (Triton's `propagate_nan=ALL` maximum)."""

    name = "arith.maximumf"
    traits = FloatBinaryOp.traits | {Commutative}
    _identity = idempotent


@irdl_op
class MinimumFOp(FloatBinaryOp):
    name = "arith.minimumf"
    traits = FloatBinaryOp.traits | {Commutative}
    _identity = idempotent


@irdl_op
class MaxNumFOp(FloatBinaryOp):
    """max where a NaN operand loses (Triton's default `tl.maximum`)."""

    name = "arith.maxnumf"
    traits = FloatBinaryOp.traits | {Commutative}
    _identity = idempotent


@irdl_op
class MinNumFOp(FloatBinaryOp):
    name = "arith.minnumf"
    traits = FloatBinaryOp.traits | {Commutative}
    _identity = idempotent


@irdl_op
class NegFOp(Operation):
    """Flip the sign bit (NaN and zero included): `-(0.0)` is `-0.0`."""

    name = "arith.negf"
    traits = ARITH | {SameOperandsAndResultType}
    operand = operand(FloatLike)
    fastmath = opt_attribute(FastMathFlagsAttr)
    result = result(FloatLike, like="operand")
    assembly_format = "$operand (`fastmath` `` $fastmath^)? attr-dict `:` type($result)"

    def fold(self):
        folded = arith_fold.fold_elementwise((self.operand,), self.result.type, lambda v: -v)
        if folded is not None:
            return (folded,)
        inner = self.operand.defining_op
        if isinstance(inner, NegFOp):
            return (inner.operand,)
        return None
