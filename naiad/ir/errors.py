"""Errors of the IR core. `naiad.ir` imports nothing else of Naiad, so the compiler's own
hierarchy (naiad/errors.py) wraps these where it reports them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .locations import file_line_col

if TYPE_CHECKING:
    from .operation import Operation


class IRError(Exception):
    """Base of the IR core's errors."""


class VerificationError(IRError):
    """An op breaks a rule of the IR. The message reads as MLIR's diagnostics do:
    `kernel.py:12:8: error: 'arith.addi' op requires the same type for all operands and results`.
    """

    def __init__(self, message: str, op: Operation):
        self.message = message
        self.op = op
        super().__init__(f"{location_prefix(op.location)}: error: '{op.name}' op {message}")


def location_prefix(location) -> str:
    """`file:line:col` of a location (looking through names and call sites), or its spelling."""
    position = file_line_col(location)
    if position is None:
        return str(location)
    return f"{position.filename}:{position.line}:{position.col}"
