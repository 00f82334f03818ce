"""The size rules of STYLE.md ("Size"), checked on the source of every module of the package.

A module stays under MAX_MODULE_LINES lines and a function (a method, a nested function) under
MAX_FUNCTION_LINES, counted from its `def` line to its last line. Tables are the exception: data
that reads best whole, each listed below with the reason it is one. Anything else that grows past
a limit is split along an idea it holds, not exempted.
"""

import ast
import os
from pathlib import Path

import naiad

PACKAGE_DIR = Path(os.path.dirname(os.path.abspath(naiad.__file__)))
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

# Module (relative to naiad/) -> why it is a table, not code.
TABLE_MODULES = {
    "language/extra/libdevice_signatures.py": "the 198 names of Triton's libdevice, each with its "
    "dtype tuples and __nv_ symbols, one row per name",
}

# "module.py:qualified.name" -> why the function is a table, not code.
TABLE_FUNCTIONS: dict[str, str] = {}


def package_modules() -> list[Path]:
    return sorted(PACKAGE_DIR.rglob("*.py"))


def relative(path: Path) -> str:
    return path.relative_to(PACKAGE_DIR).as_posix()


def functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, first line, last line) of every function in `tree`, nested ones too."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{node.name}"
            yield name, node.lineno, node.end_lineno
            yield from functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")
        else:
            yield from functions(node, prefix)


def test_no_module_is_too_long():
    offenders = []
    for path in package_modules():
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES and relative(path) not in TABLE_MODULES:
            offenders.append(f"naiad/{relative(path)}: {lines} lines")
    assert not offenders, (
        f"modules over {MAX_MODULE_LINES} lines (split each along an idea it holds):\n"
        + "\n".join(offenders)
    )


def test_no_function_is_too_long():
    offenders = []
    for path in package_modules():
        tree = ast.parse(path.read_text(), filename=str(path))
        for name, first, last in functions(tree):
            size = last - first + 1
            key = f"{relative(path)}:{name}"
            if size > MAX_FUNCTION_LINES and key not in TABLE_FUNCTIONS:
                offenders.append(f"naiad/{relative(path)}:{first} {name}: {size} lines")
    assert not offenders, (
        f"functions over {MAX_FUNCTION_LINES} lines (split them into named steps):\n"
        + "\n".join(offenders)
    )


def test_the_exceptions_still_need_to_be():
    """An entry whose module or function is gone, or back under the limit, is dropped."""
    stale = []
    for module in TABLE_MODULES:
        path = PACKAGE_DIR / module
        if not path.exists() or len(path.read_text().splitlines()) <= MAX_MODULE_LINES:
            stale.append(module)
    for key in TABLE_FUNCTIONS:
        module, name = key.split(":")
        path = PACKAGE_DIR / module
        sizes = {}
        if path.exists():
            tree = ast.parse(path.read_text(), filename=str(path))
            sizes = {qualified: last - first + 1 for qualified, first, last in functions(tree)}
        if sizes.get(name, 0) <= MAX_FUNCTION_LINES:
            stale.append(key)
    assert not stale, "exceptions no longer needed: " + ", ".join(stale)
