"""The `cf` dialect (ControlFlowOps.td): unstructured branches between the blocks of a region,
which Triton's code generator emits for an early `return` inside a conditional.

    cf.br ^bb4(%y : tensor<128xf32>)
    cf.cond_br %c, ^bb1, ^bb2(%x : f32)
    cf.assert %ok, "message"      (what the Linalg form makes of tt.assert)
"""

from __future__ import annotations

from ..ir import (
    Operation,
    Pure,
    Terminator,
    attribute,
    irdl_op,
    operand,
    opt_attribute,
    successor,
    var_operand,
)
from .base import I1, DenseI32ArrayAttr, StrAttr, fail, i32_array, str_attr


@irdl_op
class BranchOp(Operation):
    """Jump to `dest`, passing `destOperands` to its arguments."""

    name = "cf.br"
    traits = frozenset({Pure, Terminator})
    destOperands = var_operand()  # the ODS name
    dest = successor()
    assembly_format = "$dest (`(` $destOperands^ `:` type($destOperands) `)`)? attr-dict"

    def __init__(self, dest, dest_operands=(), **fields):
        super().__init__(list(dest_operands), dest=dest, **fields)

    def successor_operands(self, index: int):
        return self.destOperands


@irdl_op
class CondBranchOp(Operation):
    """Jump to `trueDest` or `falseDest` on `condition`, each with its own operands."""

    name = "cf.cond_br"
    traits = frozenset({Pure, Terminator})
    condition = operand(I1)
    trueDestOperands = var_operand()  # the ODS names
    falseDestOperands = var_operand()
    branch_weights = opt_attribute(DenseI32ArrayAttr)
    trueDest = successor()
    falseDest = successor()
    assembly_format = (
        "$condition (`weights` `(` $branch_weights^ `)` )? `,` "
        "$trueDest (`(` $trueDestOperands^ `:` type($trueDestOperands) `)`)? `,` "
        "$falseDest (`(` $falseDestOperands^ `:` type($falseDestOperands) `)`)? attr-dict"
    )

    def __init__(
        self,
        condition,
        true_dest,
        false_dest,
        true_operands=(),
        false_operands=(),
        *,
        branch_weights=None,
        **fields,
    ):
        super().__init__(
            condition,
            list(true_operands),
            list(false_operands),
            trueDest=true_dest,
            falseDest=false_dest,
            branch_weights=None if branch_weights is None else i32_array(branch_weights),
            **fields,
        )

    def successor_operands(self, index: int):
        return self.trueDestOperands if index == 0 else self.falseDestOperands

    def verify_(self) -> None:
        weights = self.branch_weights
        if weights is not None and len(weights) != 2:
            fail(
                self,
                f"expects number of branch weights to match number of successors: "
                f"{len(weights)} vs 2",
            )


@irdl_op
class AssertOp(Operation):
    """Abort (on the CPU: fail the launch with `msg` at the op's location) unless `arg`."""

    name = "cf.assert"
    arg = operand(I1)
    msg = attribute(StrAttr)
    assembly_format = "$arg `,` $msg attr-dict"

    def __init__(self, arg, msg, **fields):
        super().__init__(arg, msg=str_attr(msg), **fields)
