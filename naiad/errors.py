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

import ast

# Where a kernel error is in the user's source: kept in source_locations.py, found here by the
# rest of Naiad with the errors themselves.
from .source_locations import (  # noqa: F401
    USER_SOURCE_PREFIX,
    SourceLocation,
    enclosing_definition,
    function_source,
    is_user_file,
    node_at,
    source_location,
    user_frames,
)


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
        self.error_message = message  # Triton's name: the message alone
        self.location = location
        self.help = help
        self.call_chain = call_chain
        super().__init__(self._render())

    @property
    def message(self) -> str:
        """The whole text, as `str(error)` (Triton's `message` is its formatted text too)."""
        return str(self)

    @property
    def src(self) -> str | None:
        """The source of the function the error is in, from its `def` (Triton's: the jit
        function's source); None where unknown."""
        return function_source(self.location) if self.location is not None else None

    @property
    def node(self) -> ast.AST | None:
        """The AST node of the error in `src` (line 1 is the `def`), as Triton's error holds
        the node its code generator was visiting; None where unknown."""
        return node_at(self.location) if self.location is not None else None

    def __reduce__(self):
        """Pickled as what makes it (compile workers send errors back), not its text alone."""
        return _rebuilt, (type(self), self.error_message, self.location, self.help, self.call_chain)

    def _render(self) -> str:
        if self.location is None:
            text = f"error: {self.error_message}"
        else:
            text = f"{self.location}: error: {self.error_message}"
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


def _rebuilt(cls, message, location, help, call_chain) -> CompilationError:
    return cls(message, location, help=help, call_chain=call_chain)


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
    if isinstance(exc, CompilationError):
        own = exc.error_message  # not its `message`: that one is located already
    else:
        own = getattr(exc, "message", None)
    message = own or str(exc) or type(exc).__name__
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
