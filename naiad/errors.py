"""Naiad's exception hierarchy and the format of a located kernel error.

A user's mistake inside a kernel is a `CompilationError` that names the user's own file:line:column,
shows the line with a caret under the column, and lists the call chain of jit functions that led
there:

    kernels.py:42:17: error: `other` needs `mask`
        x = tl.load(ptr + offs, other=0.0)
                    ^
    help: pass mask=... or drop other=
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A point in the user's source: absolute file line, 1-based; column 1-based (0 = unknown)."""

    filename: str
    lineno: int
    col: int = 0
    source_line: str = ""
    function: str = ""

    def __str__(self) -> str:
        return (
            f"{self.filename}:{self.lineno}:{self.col}"
            if self.col
            else f"{self.filename}:{self.lineno}"
        )


class NaiadError(Exception):
    """Base of every error Naiad raises on purpose."""


class CompilationError(NaiadError):
    """A mistake in a kernel, reported at the user's own source location."""

    def __init__(
        self,
        message: str,
        location: SourceLocation | None = None,
        *,
        help: str = "",
        call_chain: tuple[SourceLocation, ...] = (),
    ):
        self.message = message
        self.location = location
        self.help = help
        self.call_chain = call_chain
        super().__init__(self._render())

    def _render(self) -> str:
        if self.location is None:
            text = f"error: {self.message}"
        else:
            text = f"{self.location}: error: {self.message}"
            line = self.location.source_line.rstrip("\r\n")
            if line.strip():
                # Shown without its indentation; the caret moves left by as much.
                indent = len(line) - len(line.lstrip())
                text += f"\n    {line[indent:]}"
                if self.location.col > indent:
                    text += "\n    " + " " * (self.location.col - 1 - indent) + "^"
        if self.help:
            text += f"\nhelp: {self.help}"
        for caller in self.call_chain:
            what = f" in `{caller.function}`" if caller.function else ""
            text += f"\n  called from {caller}{what}"
        return text


class KernelTypeError(CompilationError, TypeError):
    """A CompilationError whose cause is a wrong type: also catchable as `TypeError`."""


class CompileTimeAssertionFailure(CompilationError):
    """`tl.static_assert` failed."""


class InterpreterError(NaiadError):
    """A kernel failed while running in the interpreter for a reason other than the user's code."""


class OutOfResources(NaiadError):
    """A kernel needs more of a hardware resource (shared memory, registers, threads) than the
    target has."""

    def __init__(self, required: int, limit: int, name: str):
        self.required, self.limit, self.name = required, limit, name
        super().__init__(f"out of resource: {name}, Required: {required}, Hardware limit: {limit}")


class InternalError(NaiadError):
    """A bug in Naiad itself (never the user's fault); names the pass or stage that failed."""
