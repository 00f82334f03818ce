"""The one LLVM-dialect op that TTIR holds: `llvm.intr.assume` (from `tl.assume`). The rest of
the `llvm` dialect is the back ends' business (they emit LLVM IR through llvmlite)."""

from __future__ import annotations

from ...ir import (
    DenseArrayAttr,
    Operation,
    attribute,
    i32,
    irdl_op,
    operand,
    opt_attribute,
    var_operand,
)
from ..base import I1, DenseI32ArrayAttr


@irdl_op
class AssumeOp(Operation):
    """Let the optimizer assume `cond` holds. Operand bundles (`op_bundle_operands`, sized by
    `op_bundle_sizes`, tagged by `op_bundle_tags`) are what LLVM's `assume` may carry; Triton
    emits none. Its syntax is partly C++ upstream (`custom<OpBundles>`); without bundles it
    is `$cond : type($cond) attr-dict`, attr-dict last."""

    name = "llvm.intr.assume"
    cond = operand(I1)
    op_bundle_operands = var_operand()
    op_bundle_sizes = attribute(DenseI32ArrayAttr)
    op_bundle_tags = opt_attribute()
    custom_syntax = True

    def __init__(self, cond, **fields):
        fields.setdefault("op_bundle_sizes", DenseArrayAttr(i32, ()))
        super().__init__(cond, **fields)
