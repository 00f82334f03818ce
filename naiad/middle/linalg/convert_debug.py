"""Assertions, hints and barriers.

    tt.assert %cond, "msg"    cf.assert per element (a loop nest over a block condition), the
                              message and the op's location kept: the CPU back end reports the
                              first failing program at the user's file:line
    llvm.intr.assume          dropped: a hint the CPU code generator has no use for
    ttg.barrier               dropped: a program is one thread on the CPU
"""

from __future__ import annotations

from ...dialects import cf, llvm_min, tt, ttg_min
from ...ir import RankedTensorType
from . import emit
from .conversion import FunctionConversion, converts


@converts(tt.AssertOp)
def _assert(c: FunctionConversion, op) -> None:
    condition = c.value(op.condition)
    message = op.message.value
    if not isinstance(condition.type, RankedTensorType):
        c.emit(cf.AssertOp(condition, message))
        return

    def body(indices, carried):
        c.emit(cf.AssertOp(emit.extract_element(c, condition, indices), message))
        return []

    emit.loop_nest(c, list(condition.type.shape), [], body)


@converts(llvm_min.AssumeOp, ttg_min.BarrierOp)
def _drop(c: FunctionConversion, op) -> None:
    """Nothing to do on the CPU (see the module docstring)."""
