"""What every diagnostic test checks: the error names the user's own file:line:col, shows that line
with a caret under the column, and the traceback a user sees holds none of Naiad's own frames."""

import inspect
import os
import traceback

import naiad

NAIAD_DIR = os.path.dirname(os.path.abspath(naiad.__file__)) + os.sep


def source_position(fn, marker, at=None):
    """(file, absolute line, 1-based column, line text) of the line of `fn` containing `marker`;
    the column is where `at` (default: `marker`) starts in that line."""
    fn = getattr(fn, "fn", fn)
    lines, first = inspect.getsourcelines(fn)
    hits = [i for i, line in enumerate(lines) if marker in line]
    assert len(hits) == 1, f"marker {marker!r} must occur once in {fn.__name__}"
    line = lines[hits[0]].rstrip("\n")
    col = line.index(at if at is not None else marker) + 1
    return fn.__code__.co_filename, first + hits[0], col, line


def traceback_text(exc) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def assert_located(exc, fn, marker, at=None, frames_hidden=True):
    """`exc` is a CompilationError at `marker`'s line of `fn`, shown with a caret at `at`;
    unless not `frames_hidden`, its traceback shows none of Naiad's frames.

    Returns the message (the first line, after `error: `)."""
    assert isinstance(exc, naiad.CompilationError), type(exc)
    filename, lineno, col, line = source_position(fn, marker, at)
    text = str(exc)
    head = f"{filename}:{lineno}:{col}: error: "
    assert text.startswith(head), f"expected {head!r}, got:\n{text}"
    rendered = text.splitlines()
    indent = len(line) - len(line.lstrip())
    assert rendered[1] == "    " + line.strip(), rendered
    caret = rendered[2]
    assert caret.strip() == "^", rendered
    assert caret.index("^") == 4 + (col - 1 - indent), f"caret at the wrong column:\n{text}"
    assert exc.location.lineno == lineno and exc.location.col == col
    assert os.path.samefile(exc.location.filename, filename)
    shown = traceback_text(exc)
    assert NAIAD_DIR not in shown or not frames_hidden, f"Naiad's own frames are shown:\n{shown}"
    return rendered[0][len(head) :]
