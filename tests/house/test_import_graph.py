"""The import directions of STYLE.md ("Layout and imports"), checked on the source of every module.

Every `import` and `from ... import` statement is read from the AST (those inside functions too),
relative imports are resolved against the importing module, and each rule lists what a room must
never import.
"""

import ast
import os
import sys
from pathlib import Path

import pytest

import naiad

PACKAGE_DIR = Path(os.path.dirname(os.path.abspath(naiad.__file__)))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name a `from <level dots><module> import ...` in `importer` refers to."""
    if level == 0:
        return module or ""
    package = importer.split(".") if is_package else importer.split(".")[:-1]
    if level - 1 > len(package) - 1:
        raise ValueError(f"relative import beyond the top-level package in {importer}")
    base = package[: len(package) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imported_names(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in the file; `from X import a` yields both
    X and X.a, since `a` may be a submodule."""
    importer = module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = resolve(importer, is_package, node.level, node.module)
            found.append((node.lineno, base))
            found += [
                (node.lineno, f"{base}.{alias.name}" if base else alias.name)
                for alias in node.names
                if alias.name != "*"
            ]
    return found


def modules_under(room: str) -> list[Path]:
    return sorted((PACKAGE_DIR / room).rglob("*.py"))


def violations(room: str, forbidden) -> list[str]:
    bad = []
    for path in modules_under(room):
        for line, name in imported_names(path):
            if forbidden(name):
                bad.append(f"{path.relative_to(PACKAGE_DIR.parent)}:{line}: imports {name}")
    return bad


def _is(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


# language/ knows nothing of NumPy, of the IR or of whoever runs it (builders are injected).
LANGUAGE_FORBIDDEN = (
    "numpy",
    "ml_dtypes",
    "torch",
    "llvmlite",
    "naiad.runtime",
    "naiad.ir",
    "naiad.dialects",
    "naiad.frontend",
    "naiad.passes",
    "naiad.middle",
    "naiad.backends",
)


def test_language_never_imports_numpy_runtime_or_ir():
    assert modules_under("language"), "naiad/language has no modules?"
    assert violations("language", lambda name: _is(name, *LANGUAGE_FORBIDDEN)) == []


def test_ir_imports_nothing_else_of_naiad():
    if not (PACKAGE_DIR / "ir").is_dir():
        pytest.skip("naiad/ir does not exist yet")
    bad = violations("ir", lambda name: _is(name, "naiad") and not _is(name, "naiad.ir"))
    assert bad == []


# Each room and the rooms above it, which it must never import (STYLE.md, "Layout and imports":
# ir <- dialects <- passes, middle <- backends <- runtime; frontend -> language, dialects, ir;
# tools and testing sit on top). A back end may read the language's target rules only.
_ABOVE = {
    "dialects": ("passes", "middle", "backends", "frontend", "runtime", "language"),
    "passes": ("middle", "backends", "frontend", "runtime", "language"),
    "middle": ("backends", "frontend", "runtime", "language"),
    "backends": ("frontend", "runtime"),
    "frontend": ("passes", "middle", "backends", "runtime"),
    "runtime": (),
}
_TOP = ("naiad.tools", "naiad.testing", "naiad.ops", "naiad.triton", "naiad.run", "naiad.torch")


@pytest.mark.parametrize("room", sorted(_ABOVE))
def test_rooms_never_import_the_rooms_above_them(room):
    forbidden = tuple(f"naiad.{above}" for above in _ABOVE[room]) + _TOP
    allowed = ("naiad.language.target",) if room == "backends" else ()

    def bad(name: str) -> bool:
        return _is(name, *forbidden) and not _is(name, *allowed)

    assert violations(room, bad) == []
    if room == "backends":  # nothing of the language but its target rules
        assert (
            violations(
                room, lambda n: _is(n, "naiad.language") and not bad(n) and not _is(n, *allowed)
            )
            == []
        )


def test_the_interpreter_never_imports_the_frontend():
    assert violations("runtime/interpreter", lambda name: _is(name, "naiad.frontend")) == []


def test_the_package_imports_itself_relatively():
    """One import style: inside the package, Naiad's modules import each other relatively, so
    a module's imports say at a glance how far up the rooms they reach."""
    bad = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            absolute = (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module) or (
                isinstance(node, ast.Import) and node.names[0].name
            )
            if absolute and _is(absolute, "naiad"):
                bad.append(f"{path.relative_to(PACKAGE_DIR.parent)}:{node.lineno}")
    assert bad == []


# -- the checker itself ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "importer, is_package, level, module, expected",
    [
        (
            "naiad.language.semantic.arith",
            False,
            1,
            "promotion",
            "naiad.language.semantic.promotion",
        ),
        ("naiad.language.semantic.arith", False, 2, "core", "naiad.language.core"),
        ("naiad.language.semantic.program", False, 3, None, "naiad"),
        ("naiad.language.semantic", True, 1, "arith", "naiad.language.semantic.arith"),
        ("naiad.language.semantic", True, 2, None, "naiad.language"),
        ("naiad.language", True, 0, "numpy", "numpy"),
    ],
)
def test_resolve_relative_imports(importer, is_package, level, module, expected):
    assert resolve(importer, is_package, level, module) == expected


def test_checker_sees_relative_and_nested_imports(tmp_path, monkeypatch):
    room = tmp_path / "naiad" / "language"
    room.mkdir(parents=True)
    (room / "bad.py").write_text(
        "from ..runtime import jit\ndef f():\n    import numpy as np\n    from .. import ir\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE_DIR", tmp_path / "naiad")
    bad = violations("language", lambda name: _is(name, *LANGUAGE_FORBIDDEN))
    assert [b.split(": imports ")[1] for b in bad] == [
        "naiad.runtime",
        "naiad.runtime.jit",
        "numpy",
        "naiad.ir",
    ]
