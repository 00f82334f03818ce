"""Naiad's exception hierarchy and the format of a located kernel error.

A user's mistake inside a kernel is a `CompilationError` that names the user's own file:line:column,
shows the line with a caret under the column, the function it is in with the position counted
from that function's `def` (line 1 is the `def`, columns from 0, the count Triton's errors give as
`at L:C:`), and lists the call chain of jit functions that led there:

    kernels.py:42:17: error: `other` needs `mask`
        x = tl.load(ptr + offs, other=0.0)
                    ^
      in `add_kernel` at 5:16: (line 5 from its def, column offset 16)
    help: pass mask=... or drop other=
      called from kernels.py:60:5 in `launch_helper` at 3:4:
"""

from __future__ import annotations

import linecache
import os
import sysconfig
import traceback
from dataclasses import dataclass

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_STDLIB_DIR = sysconfig.get_paths()["stdlib"]


@dataclass(frozen=True)
class SourceLocation:
    """A point in the user's source: absolute file line, 1-based; column 1-based (0 = unknown).
    `def_line` and `def_col` are where the enclosing function's `def` is written (0: unknown)."""

    filename: str
    lineno: int
    col: int = 0
    source_line: str = ""
    function: str = ""
    def_line: int = 0
    def_col: int = 0

    def __str__(self) -> str:
        return (
            f"{self.filename}:{self.lineno}:{self.col}"
            if self.col
            else f"{self.filename}:{self.lineno}"
        )

    @property
    def in_function(self) -> tuple[int, int] | None:
        """(line, column offset) counted from the enclosing function's `def`: its line is 1 and
        the `def` keyword's column is 0. Triton's errors locate with these (`at 2:4:`), so a
        position a Triton user knows, or a test of theirs checks, reads the same here. None where
        the function or the column is unknown."""
        if not (self.function and self.def_line and self.def_col and self.col):
            return None
        if self.lineno < self.def_line or self.col < self.def_col:
            return None  # not inside the function's text (a decorator's line)
        return self.lineno - self.def_line + 1, self.col - self.def_col

    def in_function_text(self) -> str:
        """`` in `fn` at L:C:`` (see `in_function`), or "" where unknown."""
        position = self.in_function
        if position is None:
            return ""
        return f" in `{self.function}` at {position[0]}:{position[1]}:"


class NaiadError(Exception):
    """Base of every error Naiad raises on purpose."""


# Triton's name for the base of its errors: `except triton.TritonError` catches Naiad's.
TritonError = NaiadError


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

    @property
    def error_message(self) -> str:
        """The message without its location (Triton's name)."""
        return self.message

    @property
    def src(self) -> str | None:
        """The source line of the error (Triton: the kernel's source), None where unknown."""
        return self.location.source_line if self.location is not None else None

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
            position = self.location.in_function
            if position is not None:
                line, offset = position
                text += f"\n {self.location.in_function_text()}"
                text += f" (line {line} from its def, column offset {offset})"
        if self.help:
            text += f"\nhelp: {self.help}"
        for caller in self.call_chain:
            what = caller.in_function_text()
            if not what and caller.function:
                what = f" in `{caller.function}`"
            text += f"\n  called from {caller}{what}"
        return text


class KernelTypeError(CompilationError, TypeError):
    """A CompilationError whose cause is a wrong type: also catchable as `TypeError`."""


class KernelNotImplementedError(CompilationError, NotImplementedError):
    """A feature the target does not provide, at the user's line."""


class KernelValueError(CompilationError, ValueError):
    """A value the language refuses (a shape, an axis, an option), at the user's line."""


class KernelIndexError(CompilationError, IndexError):
    """An out-of-bounds or misaligned access, at the user's line."""


class KernelAssertionError(CompilationError, AssertionError, RuntimeError):
    """A failed device-side assertion, at the user's line. An AssertionError, as Triton's
    interpreter raises it, and a RuntimeError, as a device-side assert surfaces from a CUDA
    launch in Triton: code written for either catches it."""


class KernelNameError(CompilationError, NameError):
    """A name a kernel reads that has no value there (or may not be read), at the user's line."""


class CompileTimeAssertionFailure(CompilationError):
    """`tl.static_assert` failed."""


class UnsupportedLanguageConstruct(CompilationError):
    """Python a kernel may not be written in (`try`, `break`, `lambda`, ...), refused as Triton
    refuses it. Not a NotImplementedError: no back end will ever run it, so nothing falls back
    to the interpreter on it (language/constructs.py)."""


def unpacking_error(values: int, names: int) -> ValueError:
    """The error of unpacking `values` values into `names` names, in Python's own words (what
    a kernel author knows from Python, and what Triton's tests look for)."""
    if values > names:
        return ValueError(f"too many values to unpack (expected {names})")
    return ValueError(f"not enough values to unpack (expected {names}, got {values})")


def located_error_class(exc: BaseException) -> type[CompilationError]:
    """The CompilationError subclass that reports `exc` at a user location: it is also an
    instance of `exc`'s builtin kind (TypeError, ValueError, ...), so callers may catch either.
    Shared by the interpreter (runtime/diagnostics.py) and the compiler's frontend."""
    if isinstance(exc, CompileTimeAssertionFailure | UnsupportedLanguageConstruct):
        return type(exc)
    for base, located in (
        (TypeError, KernelTypeError),
        (NotImplementedError, KernelNotImplementedError),
        (IndexError, KernelIndexError),
        (AssertionError, KernelAssertionError),
        (ValueError, KernelValueError),
        (NameError, KernelNameError),
    ):
        if isinstance(exc, base):
            return located
    return CompilationError


def error_message(exc: BaseException) -> str:
    """The text a located error shows for `exc`: its own message, prefixed by its class name
    unless it is one of the kinds a kernel author expects (type, value, ... errors)."""
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    expected = (
        NaiadError,
        TypeError,
        ValueError,
        NotImplementedError,
        IndexError,
        AssertionError,
        NameError,
    )
    if not isinstance(exc, expected):
        message = f"{type(exc).__name__}: {message}"
    return message


class InterpreterError(NaiadError):
    """A kernel failed while running in the interpreter for a reason other than the user's code."""

    @property
    def error_message(self) -> str:
        return str(self)


class PTXASError(NaiadError):
    """ptxas refused the PTX of a kernel (Triton's name; Naiad's NVIDIA back end raises its own
    errors, which name the stage)."""

    @property
    def error_message(self) -> str:
        return str(self)


class AutotunerError(NaiadError, ValueError):
    """The autotuner cannot go on (no config left after pruning); also a ValueError."""

    @property
    def error_message(self) -> str:
        return str(self)


class InvalidLaunchOption(NaiadError, ValueError, AssertionError):
    """A launch option out of its range (`num_warps=3`). A ValueError, and an AssertionError
    too: Triton checks its options with `assert`, and code written for it catches that."""


class OutOfResources(NaiadError):
    """A kernel needs more of a hardware resource (shared memory, registers, threads) than the
    target has."""

    def __init__(self, required: int, limit: int, name: str):
        self.required, self.limit, self.name = required, limit, name
        super().__init__(f"out of resource: {name}, Required: {required}, Hardware limit: {limit}")


class InternalError(NaiadError):
    """A bug in Naiad itself (never the user's fault); names the pass or stage that failed."""


# The pseudo-files holding kernels made from strings (runtime/kernel_source.py): the user's code.
USER_SOURCE_PREFIX = "<naiad source "


def is_user_file(filename: str) -> bool:
    """Whether code in `filename` is the user's: not Naiad's, not Python's standard library, not
    generated (`<string>`), but a kernel made from a string is. Errors are reported at the
    innermost line in such a file."""
    if filename.startswith(USER_SOURCE_PREFIX):
        return True
    if filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    if path.startswith(_PACKAGE_DIR + os.sep):
        return False
    in_stdlib = path.startswith(_STDLIB_DIR + os.sep) and "site-packages" not in path
    return not in_stdlib


def source_location(
    filename: str, lineno: int, byte_col: int, function: str, definition: tuple[int, int] = (0, 0)
) -> SourceLocation:
    """The SourceLocation of an AST position: `byte_col` (Python's `col_offset`) counts UTF-8
    bytes; the location's column counts characters, 1-based. `definition` is the (line, 0-based
    column) of the enclosing function's `def`, from its AST node."""
    line = linecache.getline(filename, lineno).rstrip("\r\n")
    col = len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1
    def_line, def_col = definition
    return SourceLocation(filename, lineno, col, line, function, def_line, def_col + 1)


def definition_position(filename: str, first_line: int) -> tuple[int, int]:
    """(line, 0-based column) of the `def` of a function whose code starts at `first_line`
    (`co_firstlineno`: the first decorator's line when it has any); (0, 0) where none is found
    within a few lines."""
    for lineno in range(first_line, first_line + _DECORATOR_LINES_READ):
        text = linecache.getline(filename, lineno)
        stripped = text.lstrip()
        if stripped.startswith(("def ", "async def ")):
            return lineno, len(text) - len(stripped)
        if not text:
            break
    return 0, 0


def enclosing_definition(filename: str, lineno: int) -> tuple[str, int, int]:
    """(name, line, 1-based column) of the `def` whose body holds line `lineno` of `filename`:
    the nearest `def` above it indented less than it; ("", 0, 0) where none is found. What a
    compiled kernel's fault site (file, line, column) lacks to say where it is counted from its
    function's `def`, as the interpreter's reports do."""
    text = linecache.getline(filename, lineno)
    indent = len(text) - len(text.lstrip())
    for above in range(lineno - 1, 0, -1):
        line = linecache.getline(filename, above)
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        depth = len(line) - len(stripped)
        if depth < indent and stripped.startswith(("def ", "async def ")):
            name = stripped.split("def ", 1)[1].split("(", 1)[0].strip()
            return name, above, depth + 1
        if depth == 0 and not stripped.startswith(("@", ")")):
            break  # a module-level statement: the line is in no function
    return "", 0, 0


# Decorators (with their arguments) read past to reach a `def`: beyond this, the position within
# the function is left out of the message rather than searched for.
_DECORATOR_LINES_READ = 40


def frame_location(frame: traceback.FrameSummary, first_line: int = 0) -> SourceLocation:
    """The SourceLocation of a traceback frame: the whole line (the frame's `line` is stripped)
    and a 1-based character column (the frame's `colno` counts UTF-8 bytes). `first_line` is the
    frame's code's `co_firstlineno`, which finds the function's `def` (0: unknown)."""
    line = linecache.getline(frame.filename, frame.lineno).rstrip("\r\n") or (frame.line or "")
    colno = getattr(frame, "colno", None)
    col = 0
    if colno is not None:
        col = len(line.encode("utf-8")[:colno].decode("utf-8", errors="replace")) + 1
    def_line, def_col = 0, 0
    if first_line and not frame.name.startswith("<"):  # not a module, lambda, comprehension
        def_line, def_col = definition_position(frame.filename, first_line)
    def_col = def_col + 1 if def_line else 0
    return SourceLocation(frame.filename, frame.lineno, col, line, frame.name, def_line, def_col)


def user_frames(exc: BaseException) -> list[SourceLocation]:
    """The user's frames of `exc`'s traceback, outermost first."""
    tb = exc.__traceback__
    frames = traceback.extract_tb(tb)
    first_lines = [frame.f_code.co_firstlineno for frame, _ in traceback.walk_tb(tb)]
    return [
        frame_location(f, first)
        for f, first in zip(frames, first_lines)
        if is_user_file(f.filename)
    ]


def without_naiad_frames(error: BaseException) -> BaseException:
    """`error` as a user sees it: without a traceback, and so are the exceptions that caused it,
    which it keeps as its `__cause__` (Triton's tests read the original message there); no
    frame of Naiad's is shown, only the messages."""
    cause, seen = error.__cause__, set()
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        cause.__traceback__ = None
        cause = cause.__cause__
    error.__suppress_context__ = True
    return error.with_traceback(None)


# The wrapper is compiled under a pseudo file name (`<naiad launch>`, `<naiad compile>`), so that
# a kernel error, already located at the user's line, leaves Naiad through a frame that is not
# one of Naiad's files: the traceback a user sees holds their own frames only.
_ENTRY_SOURCE = """
def make_entry(implementation, show_traceback):
    def entry(*args, **kwargs):
        try:
            return implementation(*args, **kwargs)
        except CompilationError as error:
            if show_traceback():
                raise
            raise without_naiad_frames(error)
    return entry
"""
_ENTRY_MAKERS: dict = {}


def user_facing(implementation, show_traceback, pseudo_file: str):
    """`implementation`, raising located CompilationErrors without Naiad's frames unless
    `show_traceback()` (NAIAD_TRACEBACK=1)."""
    make_entry = _ENTRY_MAKERS.get(pseudo_file)
    if make_entry is None:
        namespace = {
            "CompilationError": CompilationError,
            "without_naiad_frames": without_naiad_frames,
        }
        exec(compile(_ENTRY_SOURCE, pseudo_file, "exec"), namespace)
        make_entry = _ENTRY_MAKERS[pseudo_file] = namespace["make_entry"]
    return make_entry(implementation, show_traceback)
