"""The reference evaluator's own errors, and the table of op handlers every op module fills.

A handler is `fn(evaluator, op, operands) -> result`: `operands` are the values of `op.operands`
in order; the result is the value of the op's single result, or a list with one value per
result (None for an op without results). Values are never lists themselves.
"""

from __future__ import annotations

from ...errors import NaiadError
from ...ir.op_table import OpTable


class EvaluationError(NaiadError):
    """The module cannot be evaluated as given (a missing function, wrong arguments, ...)."""


class UnsupportedOpError(EvaluationError, NotImplementedError):
    """An op the evaluator has no meaning for; the message names it and says why."""


HANDLERS = OpTable("evaluator")
handles = HANDLERS.rule  # the decorator: the handler of the ops it names


def unsupported(*names: str, why: str) -> None:
    """Ops that are declared but cannot run here: evaluating one raises, naming it and `why`."""

    def refuse(evaluator, op, operands):
        raise UnsupportedOpError(f"the reference evaluator cannot run '{op.name}': {why}")

    handles(*names)(refuse)
