"""The Python a kernel may be written in: the constructs Triton's code generator refuses, found
before a kernel is compiled or interpreted.

Triton compiles a kernel's AST and refuses what it has no meaning for (`try`, `break`, `lambda`,
nested `def`, `yield`, `import`, ...). Naiad's interpreter runs a kernel as Python, where every
such construct has a meaning, and a compile that failed on one used to fall back to the
interpreter: a kernel then ran in one mode and not in the other, and one with `yield` silently
did nothing. Both the frontend (codegen.py) and the interpreter's rewrite (rewrite.py) ask this
module first, so a refused construct is the same located error in every mode, and the CPU back
end's fallback to the interpreter is left to what Triton accepts and Naiad does not compile yet.

Only the user's jit functions are checked: the language's own library keeps Python's meaning.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .. import errors


@dataclass(frozen=True)
class Refusal:
    """A construct a kernel may not use: the node, what it is and what to write instead."""

    node: ast.AST
    message: str
    help: str


_JIT_HELP = "define a @naiad.jit function at module level and call it"
_LOOP_HELP = "loop with `while` on a condition, or mask what the remaining iterations would do"

# node type -> (message, help). Columns are where the construct starts, as Triton reports them.
_REFUSED: dict[type, tuple[str, str]] = {
    ast.Try: ("`try` is not supported in kernels", "a kernel cannot catch exceptions"),
    ast.Break: ("`break` is not supported in kernels", _LOOP_HELP),
    ast.Continue: ("`continue` is not supported in kernels", _LOOP_HELP),
    ast.Lambda: ("`lambda` is not supported in kernels", _JIT_HELP),
    ast.FunctionDef: ("nested function definitions are not supported in kernels", _JIT_HELP),
    ast.AsyncFunctionDef: ("`async def` is not supported in kernels", _JIT_HELP),
    ast.ClassDef: (
        "class definitions are not supported in kernels",
        "define the class at module level",
    ),
    ast.With: (
        "`with` is not supported in kernels",
        "the language has no context managers; write the body without `with`",
    ),
    ast.AsyncWith: ("`async with` is not supported in kernels", "kernels are not coroutines"),
    ast.AsyncFor: ("`async for` is not supported in kernels", "kernels are not coroutines"),
    ast.Await: ("`await` is not supported in kernels", "kernels are not coroutines"),
    ast.Yield: (
        "`yield` is not supported in kernels",
        "a kernel is not a generator: store its results through pointers",
    ),
    ast.YieldFrom: (
        "`yield from` is not supported in kernels",
        "a kernel is not a generator: store its results through pointers",
    ),
    ast.Global: (
        "`global` is not supported in kernels",
        "kernels read module-level `tl.constexpr` globals and cannot rebind them",
    ),
    ast.Nonlocal: (
        "`nonlocal` is not supported in kernels",
        "kernels cannot rebind the names of an enclosing function",
    ),
    ast.Import: ("`import` is not supported in kernels", "import at module level"),
    ast.ImportFrom: ("`import` is not supported in kernels", "import at module level"),
    ast.Match: ("`match` is not supported in kernels", "use `if` / `elif`"),
    ast.Delete: (
        "`del` is not supported in kernels",
        "a name lives to the end of the function; assign a new value instead",
    ),
}
if hasattr(ast, "TryStar"):  # Python 3.11: `try` ... `except*`
    _REFUSED[ast.TryStar] = _REFUSED[ast.Try]


class _Found(Exception):
    def __init__(self, refusal: Refusal):
        self.refusal = refusal


class _Checker(ast.NodeVisitor):
    """Visits a function's body in source order; raises `_Found` at the first refusal."""

    def __init__(self):
        self.loop_depth = 0

    def refuse(self, node, message, help):
        raise _Found(Refusal(node, message, help))

    def generic_visit(self, node):
        refused = _REFUSED.get(type(node))
        if refused is not None:
            self.refuse(node, *refused)
        super().generic_visit(node)

    def visit_For(self, node):
        self._loop(node, "for")

    def visit_While(self, node):
        self._loop(node, "while")

    def _loop(self, node, keyword):
        if node.orelse:
            self.refuse(
                node,
                f"`{keyword} ... else` is not supported in kernels",
                "run the `else` statements after the loop",
            )
        self.loop_depth += 1
        try:
            super().generic_visit(node)
        finally:
            self.loop_depth -= 1

    def visit_Return(self, node):
        if self.loop_depth:
            self.refuse(
                node,
                "Cannot have `return` statements inside `while` or `for` statements",
                "compute the value in the loop and return it after the loop",
            )
        super().generic_visit(node)

    def visit_Starred(self, node):
        if isinstance(node.ctx, ast.Store):
            self.refuse(
                node,
                "starred assignment targets are not supported in kernels",
                "unpack a tuple into as many names as it has elements, or index it",
            )
        super().generic_visit(node)


def first_refusal(definition: ast.FunctionDef) -> Refusal | None:
    """The first construct of `definition`'s body (and of its argument defaults) that a kernel
    may not use, or None."""
    checker = _Checker()
    try:
        for default in (*definition.args.defaults, *definition.args.kw_defaults):
            if default is not None:
                checker.visit(default)
        for stmt in definition.body:
            checker.visit(stmt)
    except _Found as found:
        return found.refusal
    return None


def refusal_error(
    refusal: Refusal, location: errors.SourceLocation, call_chain: tuple = ()
) -> errors.UnsupportedLanguageConstruct:
    """The located error that reports `refusal`."""
    return errors.UnsupportedLanguageConstruct(
        refusal.message, location, help=refusal.help, call_chain=call_chain
    )


def check_function(definition: ast.FunctionDef, filename: str, function: str) -> None:
    """Raise the located error of the first refused construct in `definition`, whose nodes
    carry absolute file lines and columns.

    Raises:
        UnsupportedLanguageConstruct: at the construct's file:line:col.
    """
    refusal = first_refusal(definition)
    if refusal is not None:
        node = refusal.node
        location = errors.source_location(
            filename,
            node.lineno,
            node.col_offset,
            function,
            (definition.lineno, definition.col_offset),
        )
        raise refusal_error(refusal, location)
