"""No module of the package is named as pytest names test files (`test_*.py`, `*_test.py`).

pytest rewrites the asserts of every module so named when it is imported, parsing its source.
The compiler's modules load with the first compile, which may run in the background compile's
thread, and on CPython 3.11 two threads parsing at once can fail with "AST constructor
recursion depth mismatch" in the other one: a user's pytest run formatting a failure.
"""

from pathlib import Path

import naiad

PACKAGE_DIR = Path(naiad.__file__).resolve().parent


def test_no_module_is_named_as_a_test_file():
    named = [
        path.relative_to(PACKAGE_DIR).as_posix()
        for path in PACKAGE_DIR.rglob("*.py")
        if path.name.startswith("test_") or path.stem.endswith("_test")
    ]
    assert not named, f"modules pytest would rewrite on import (rename them): {named}"
