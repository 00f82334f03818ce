"""Where a kernel error is in the user's source: a `SourceLocation` (file, line, column, the
enclosing function's `def`), found from an AST position or from a traceback's frames, and the
function's source and AST node there, as Triton's errors carry them (`src`, `node`).

Only the user's files count: not Naiad's, not Python's standard library, not generated code;
a kernel made from a string is the user's (its pseudo file is in `linecache`).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import linecache
import os
import sysconfig
import textwrap
import threading
import tokenize
import traceback
from dataclasses import dataclass

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_refusing = threading.local()


class ParseRefused(RuntimeError):
    """A source would be parsed in a thread that may not parse (`refusing_parses`)."""


@contextlib.contextmanager
def refusing_parses():
    """Inside the block, this thread parses no source (`ast.parse`): `check_parse` raises
    ParseRefused. CPython 3.11's AST converter keeps one recursion count per interpreter, so
    two threads parsing at once can fail with 'AST constructor recursion depth mismatch' (the
    background compiles of cpu_tiering.py run the frontend on sources parsed beforehand)."""
    _refusing.depth = getattr(_refusing, "depth", 0) + 1
    try:
        yield
    finally:
        _refusing.depth -= 1


def check_parse() -> None:
    """Raise ParseRefused where this thread may not parse (`refusing_parses`)."""
    if getattr(_refusing, "depth", 0):
        raise ParseRefused("no source is parsed in this thread")


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


# The pseudo-files holding kernels made from strings (runtime/kernel_source.py): the user's code.
USER_SOURCE_PREFIX = "<naiad source "


@functools.lru_cache(maxsize=512)
def source_lines(fn) -> tuple[tuple[str, ...], int]:
    """`inspect.getsourcelines(fn)`, read once per function object: `inspect` finds a
    function's lines by tokenizing them (about a millisecond a kernel), and a kernel's first
    launch asks three times (its cache key, the code generator, the interpreter's rewrite).
    A function compiled under "<string>", the name every `exec` and `python -c` shares, has
    none to read: lines `linecache` holds under that name are another program's (Python 3.13
    keeps `python -c`'s text there; pytest-xdist's workers start so)."""
    code = getattr(fn, "__code__", None)
    if code is not None and code.co_filename == "<string>":
        raise OSError(f"could not get the source code of {fn.__qualname__} (made by exec)")
    lines, first_line = inspect.getsourcelines(fn)
    return tuple(lines), first_line


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


def function_source(location: SourceLocation) -> str | None:
    """The source of the function holding `location`, from its `def` line to its end and
    dedented (decorators left out, as a jit function's `src`); None where it is unknown."""
    if not location.def_line:
        return None
    lines = linecache.getlines(location.filename)
    if len(lines) < location.def_line:
        return None
    try:
        block = inspect.getblock(lines[location.def_line - 1 :])
    except (SyntaxError, tokenize.TokenError):  # lines that are not Python (changed since)
        return None
    return textwrap.dedent("".join(block))


def node_at(location: SourceLocation) -> ast.AST | None:
    """The AST node at `location` in its function's source (`function_source`), positioned as
    in that source (line 1 is the `def`): the outermost expression that starts there, else the
    statement; None where the function or the column is unknown."""
    source, position = function_source(location), location.in_function
    if source is None or position is None or getattr(_refusing, "depth", 0):
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    line, column = position
    text = source.splitlines()[line - 1] if line <= len(source.splitlines()) else ""
    byte_column = len(text[:column].encode("utf-8"))  # AST columns count UTF-8 bytes
    starting = [
        node
        for node in ast.walk(tree)  # breadth first: outer nodes before the nodes they hold
        if isinstance(node, ast.expr | ast.stmt)
        and (node.lineno, node.col_offset) == (line, byte_column)
    ]
    expressions = [node for node in starting if isinstance(node, ast.expr)]
    return (expressions or starting or [None])[0]
