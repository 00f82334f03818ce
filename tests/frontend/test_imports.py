"""The frontend's imports follow STYLE.md: `frontend` -> `language`, `dialects`, `ir` (and the
top-level `errors` and `knobs`), never the runtime, the passes or the back ends."""

import ast
from pathlib import Path

import naiad

FRONTEND = Path(naiad.__file__).resolve().parent / "frontend"
ALLOWED = ("naiad.language", "naiad.dialects", "naiad.ir", "naiad.errors", "naiad.knobs")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names]
    return found


def test_frontend_imports_only_the_language_the_dialects_and_the_ir():
    bad = []
    for path in sorted(FRONTEND.glob("*.py")):
        for name in _imports(path):
            if name.startswith("naiad") and name != "naiad" and not name.startswith(ALLOWED):
                bad.append(f"{path.name}: {name}")
    assert bad == []
