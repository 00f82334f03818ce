"""Turning an exception raised while running a kernel into an error at the user's own line.

The innermost frame outside Naiad's package is the user's line (a kernel or a jit function it
called); the user frames above it are the call chain. Naiad's own frames are hidden unless
`NAIAD_TRACEBACK=1`.
"""

from __future__ import annotations

import linecache
import os
import sysconfig
import traceback

from .. import errors, knobs

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STDLIB_DIR = sysconfig.get_paths()["stdlib"]


def _is_user_frame(frame: traceback.FrameSummary) -> bool:
    """Not Naiad's, not Python's standard library, not generated code."""
    filename = os.path.abspath(frame.filename)
    if filename.startswith(_PACKAGE_DIR + os.sep) or frame.filename.startswith("<"):
        return False
    in_stdlib = filename.startswith(_STDLIB_DIR + os.sep) and "site-packages" not in filename
    return not in_stdlib


def _location(frame: traceback.FrameSummary) -> errors.SourceLocation:
    # `frame.line` is stripped of its indentation and `colno` counts UTF-8 bytes: take the whole
    # line from the file and turn the byte offset into a 1-based character column.
    line = linecache.getline(frame.filename, frame.lineno).rstrip("\r\n") or (frame.line or "")
    colno = getattr(frame, "colno", None)
    col = 0
    if colno is not None:
        col = len(line.encode("utf-8")[:colno].decode("utf-8", errors="replace")) + 1
    return errors.SourceLocation(frame.filename, frame.lineno, col, line, frame.name)


class KernelNotImplementedError(errors.CompilationError, NotImplementedError):
    """A feature the target does not provide, at the user's line."""


class KernelValueError(errors.CompilationError, ValueError):
    """A value the language refuses (a shape, an axis, an option), at the user's line."""


class KernelIndexError(errors.CompilationError, IndexError):
    """An out-of-bounds or misaligned access, at the user's line."""


class KernelAssertionError(errors.CompilationError, AssertionError):
    """A failed device-side assertion, at the user's line."""


def _error_class(exc: BaseException):
    if isinstance(exc, errors.CompileTimeAssertionFailure):
        return errors.CompileTimeAssertionFailure
    for base, located in (
        (TypeError, errors.KernelTypeError),
        (NotImplementedError, KernelNotImplementedError),
        (IndexError, KernelIndexError),
        (AssertionError, KernelAssertionError),
        (ValueError, KernelValueError),
    ):
        if isinstance(exc, base):
            return located
    return errors.CompilationError


def located(exc: BaseException, kernel_name: str) -> errors.CompilationError:
    """`exc` as a CompilationError (of a matching builtin type) at the innermost user frame."""
    if isinstance(exc, errors.CompilationError) and exc.location is not None:
        return exc
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _is_user_frame(f)]
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if not isinstance(
        exc,
        (errors.NaiadError, TypeError, ValueError, NotImplementedError, IndexError, AssertionError),
    ):
        message = f"{type(exc).__name__}: {message}"
    location = _location(frames[-1]) if frames else None
    chain = tuple(_location(f) for f in reversed(frames[:-1]))
    if location is None:
        message = f"in kernel `{kernel_name}`: {message}"
    return _error_class(exc)(message, location, call_chain=chain)


def reraise(exc: BaseException, kernel_name: str):
    """Raise `exc` located; with Naiad's frames hidden unless NAIAD_TRACEBACK=1."""
    error = located(exc, kernel_name)
    if knobs.traceback.get():
        raise error from exc
    raise error.with_traceback(None) from None
