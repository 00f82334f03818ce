"""Matching text against FileCheck directives (`CHECK:`, `CHECK-NEXT:`, `CHECK-LABEL:`, ...), as
Naiad's IR tests do (tests/ir), for tests that check a compiler's text from Python.

    check_text(print_module(module), '''
        // CHECK-LABEL: tt.func public @add
        // CHECK: tt.load
    ''')

The directives are read by the `filecheck` package (LLVM FileCheck's rules; a test dependency
of Naiad: `pip install naiad[test]`), run as a program, as the IR tests run it, so its exit and
its report are the program's.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile


class FileCheckError(ValueError):
    """The text does not match the directives: FileCheck's report (which directive, where the
    search went), followed by the text."""


def check_text(text: str, directives: str, name: str = "input") -> None:
    """Raise FileCheckError unless `text` matches the FileCheck `directives` (any text holding
    `CHECK` lines: a test file, a function's source with `# CHECK:` comments).

    Raises:
        FileCheckError: a directive is not matched, or `directives` holds none.
        ModuleNotFoundError: the `filecheck` package is not installed.
    """
    if importlib.util.find_spec("filecheck") is None:
        raise ModuleNotFoundError(
            "checking text with FileCheck directives needs the `filecheck` package "
            "(pip install filecheck, or naiad[test])"
        )
    with tempfile.TemporaryDirectory(prefix="naiad-filecheck-") as folder:
        checks, checked = os.path.join(folder, "checks"), os.path.join(folder, name)
        with open(checks, "w", encoding="utf-8") as file:
            file.write(directives)
        with open(checked, "w", encoding="utf-8") as file:
            file.write(text)
        done = subprocess.run(
            [sys.executable, "-m", "filecheck", checks, "--input-file", checked],
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )
    if done.returncode != 0:
        raise FileCheckError(f"{done.stdout}{done.stderr}\n{text}")
