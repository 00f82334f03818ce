"""Runs every `// RUN:` line of the `.mlir` tests under tests/ir with FileCheck (`filecheck`).

`naiad-opt` and `filecheck` in RUN lines are this interpreter's modules, so the tests use the
checkout under test whatever is on PATH. `%s` is the test file, `%R` the repository's root.
"""

import pathlib
import re
import shlex
import subprocess
import sys

import pytest

_ROOT = pathlib.Path(__file__).parent
_REPOSITORY = _ROOT.parents[1]
_TESTS = sorted(p for p in _ROOT.rglob("*.mlir") if "// RUN:" in p.read_text())
_TOOLS = {
    "naiad-opt": f"{shlex.quote(sys.executable)} -m naiad.tools.opt",
    "filecheck": f"{shlex.quote(sys.executable)} -m filecheck",
}


def _commands(path: pathlib.Path):
    for line in path.read_text().splitlines():
        if line.startswith("// RUN:"):
            command = line[len("// RUN:") :].strip().replace("%s", shlex.quote(str(path)))
            command = command.replace("%R", shlex.quote(str(_REPOSITORY)))
            for name, replacement in _TOOLS.items():
                command = " | ".join(
                    replacement + part.strip()[len(name) :]
                    if part.strip().startswith(name)
                    else part
                    for part in command.split("|")
                )
            yield command


@pytest.mark.parametrize("path", _TESTS, ids=[str(p.relative_to(_ROOT)) for p in _TESTS])
def test_filecheck(path):
    for command in _commands(path):
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"


def test_every_pass_is_reachable_and_has_a_filecheck_file():
    """A pass Naiad registers is listed by `naiad-opt` (in a fresh process: only the package's
    own passes) and run by the RUN line of at least one FileCheck file."""
    listed = subprocess.run(
        [sys.executable, "-m", "naiad.tools.opt", "--list-passes"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    passes = {line.split()[0] for line in listed.splitlines() if line and not line[0].isspace()}
    assert {"canonicalize", "tt-to-linalg", "cpu-fuse-elementwise", "coalesce"} <= passes
    run_lines = " ".join(
        line for path in _TESTS for line in path.read_text().splitlines() if "// RUN:" in line
    )
    ran = set()
    for spec in re.findall(r"-p\s+[\"']?([^\s\"']+)", run_lines):
        ran |= {part.partition("{")[0] for part in spec.split(",")}
    assert sorted(passes - ran) == []
