"""The error of a construct a compiler stage cannot lower, reported at the user's own line.

An op the middle layer or a back end has no lowering for is a limit of the target the user can
act on (rewrite the kernel, pick another target), not a bug of Naiad: it is a
`KernelNotImplementedError` located where the op came from, the same for every stage:

    kernel.py:12:8: error: inline_asm_elementwise holds PTX, which only GPU targets run
"""

from __future__ import annotations

from typing import NoReturn

from ..errors import KernelNotImplementedError, SourceLocation
from ..ir import file_line_col


def source_location(op) -> SourceLocation | None:
    """Where the user wrote `op` (through names and call sites), or None when it is unknown."""
    loc = file_line_col(op.location) if op is not None else None
    return None if loc is None else SourceLocation(loc.filename, loc.line, loc.col)


def unsupported(
    op, message: str, error: type[KernelNotImplementedError] = KernelNotImplementedError
) -> NoReturn:
    """Raise `error(message)` at `op`'s source location (`op` may be None: no location)."""
    raise error(message, source_location(op))
