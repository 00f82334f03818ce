"""A kernel may not list a `tl.constexpr` parameter in `do_not_specialize`.

A constexpr is a compile-time value: every value it takes is a compile of its own, so asking not
to specialize on it contradicts its annotation, and honouring either would silently ignore the
other. Triton refuses such a kernel when it compiles or launches it; Naiad refuses it before a
compile (the frontend's `generate`) and before the interpreter runs it (`run_grid`), at the
parameter.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from .. import errors


def refuse_unspecialized_constexprs(kernel) -> None:
    """Raise a CompilationError at the first constexpr parameter of `kernel` (a `@naiad.jit`
    function; a plain Python function has no `do_not_specialize`) that it lists in
    `do_not_specialize`."""
    params = getattr(kernel, "params", ())
    listed = [p.name for p in params if p.is_constexpr and p.do_not_specialize]
    if listed:
        name = listed[0]
        raise errors.CompilationError(
            f"{name} marked as constexpr and listed in do_not_specialize: a tl.constexpr "
            f"parameter is always specialized on its value",
            _parameter_location(getattr(kernel, "fn", kernel), name),
            help=f"drop `{name}` from do_not_specialize, or its tl.constexpr annotation",
        )


def _parameter_location(fn, name: str) -> errors.SourceLocation:
    """Where parameter `name` of `fn` is written (its `def` line when the source is unread)."""
    filename = fn.__code__.co_filename
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return errors.SourceLocation(filename, fn.__code__.co_firstlineno, 0, "", fn.__name__)
    indent = len(lines[0]) - len(lines[0].lstrip())
    definition = ast.parse(textwrap.dedent("".join(lines))).body[0]
    arguments = definition.args
    node = next(
        a for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs) if a.arg == name
    )
    def_position = (first_line + definition.lineno - 1, definition.col_offset + indent)
    return errors.source_location(
        filename, first_line + node.lineno - 1, node.col_offset + indent, fn.__name__, def_position
    )
