"""The table of scalar lowerings, the context they share, and the one entry that dispatches.

A lowering is `fn(b, op, operands, ctx) -> value or list of values`: `b` is the llvmlite
`IRBuilder` positioned where the op's code goes, `operands` the llvmlite values of `op.operands`
(scalars in the storage representation of `types.llvm_type`), `ctx` the `ScalarContext`. Family
modules register theirs with `@lowers("arith.addi", ...)` when the package is imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llvmlite import ir

from ....ir.op_table import OpTable
from ....passes.diagnostics import unsupported

LOWERINGS = OpTable("scalar lowering")


@dataclass
class ScalarContext:
    """What lowerings need beyond the builder: the module that receives declarations of
    intrinsics and math-library functions. `math_functions` caches the latter by (name, type);
    `features` are the target's (LLVM's "+avx512f,..."), which the math library reads."""

    module: ir.Module
    math_functions: dict = field(default_factory=dict)
    features: str = ""


lowers = LOWERINGS.rule  # the decorator: the lowering of the ops it names


def lower_scalar_op(b: ir.IRBuilder, op, operands: list, ctx: ScalarContext) -> list:
    """The llvmlite values of `op`'s results, computed from `operands` at `b`'s position.

    Raises:
        KernelNotImplementedError: the CPU back end has no lowering for the op (or for its
            types, or, for `tt.extern_elementwise`, for its function); the message names it.
    """
    fn = LOWERINGS.get(op.name)
    if fn is None:
        unsupported(op, f"the CPU back end cannot lower '{op.name}' to LLVM IR")
    result = fn(b, op, list(operands), ctx)
    return list(result) if isinstance(result, list | tuple) else [result]


def intrinsic(module: ir.Module, name: str, result: ir.Type, args: list[ir.Type]) -> ir.Function:
    """The declaration of LLVM intrinsic `name` (already mangled: `llvm.umin.i32`), made once
    per module."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(module, ir.FunctionType(result, args), name)
