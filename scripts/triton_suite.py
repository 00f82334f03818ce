"""Run Triton's own test_core.py (or any of its test files) against Naiad, through the switch.

    python scripts/triton_suite.py TRITON_CHECKOUT [--sample N] [--seed S] [--device cpu]
        [--file python/test/unit/language/test_core.py] [--out DIR] [-- pytest args]

Nothing is fetched: TRITON_CHECKOUT is a checkout (or an export) of Triton's repository. The
test ids of the file are collected under `python -m naiad.run`, a fixed random sample of them
(seeded, so runs compare) is run with `--device cpu` (compiled for the CPU: NAIAD_BACKEND=cpu)
and junit XML, and the outcome is printed: counts, and the failures grouped by the first line
of their message (what docs/compat.md records). The runs happen in a copy of the test folder
with Triton's python/conftest.py beside it, so Triton's own fixtures (`device`, ...) apply.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

_TEST_ID = re.compile(r"[\w./-]+\.py::\S")


def _switched(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "naiad.run", "-m", "pytest", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)


def _prepare(checkout: Path, test_file: str, work: Path) -> Path:
    """A copy of the test file's folder, with Triton's python/conftest.py above it and
    python/test/conftest.py in it."""
    source = checkout / test_file
    folder = work / "tests"
    shutil.copytree(source.parent, folder)
    for conftest, into in (("python/conftest.py", work), ("python/test/conftest.py", folder)):
        if (checkout / conftest).exists():
            shutil.copy(checkout / conftest, into / "conftest.py")
    (work / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    return folder / source.name


def collect(test_path: Path, work: Path, env: dict) -> list[str]:
    """The lines of the collection that name a test: its ids, and the few warnings that quote
    one after some words (`Test: tests/test_core.py::test_dtype_tensor, argvalues type: map`).
    Samples are drawn from these lines, as they always were, so a seed keeps its sample; the
    warnings are dropped from a sample afterwards (`is_test_id`)."""
    done = _switched(["--collect-only", "-q", str(test_path)], work, env)
    lines = [line.strip() for line in done.stdout.splitlines() if "::" in line]
    if not any(is_test_id(line) for line in lines):
        raise SystemExit(f"nothing collected:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return lines


def is_test_id(line: str) -> bool:
    return _TEST_ID.match(line) is not None


def _causes(junit: Path) -> tuple[collections.Counter, collections.Counter]:
    outcomes, causes = collections.Counter(), collections.Counter()
    for case in ET.parse(junit).getroot().iter("testcase"):
        failed = case.find("failure") if case.find("failure") is not None else case.find("error")
        if failed is not None:
            outcomes["failed" if case.find("failure") is not None else "error"] += 1
            causes[_first_line(failed.get("message") or failed.text or "")] += 1
        elif case.find("skipped") is not None:
            outcomes["skipped"] += 1
        else:
            outcomes["passed"] += 1
    return outcomes, causes


def _first_line(message: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else "(no message)"
    line = re.sub(r"0x[0-9a-f]+", "0x…", line)
    line = re.sub(r"/[^\s:]+/", "…/", line)
    return line[:200]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--file", default="python/test/unit/language/test_core.py")
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--select", default="", help="a regular expression test ids must match")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("pytest_args", nargs="*")
    options = parser.parse_args(argv)
    env = {**os.environ, "NAIAD_BACKEND": "cpu" if options.device == "cpu" else "auto"}
    work = Path(tempfile.mkdtemp(prefix="naiad-triton-suite-"))
    test_path = _prepare(options.checkout.resolve(), options.file, work)
    ids = [i for i in collect(test_path, work, env) if re.search(options.select, i)]
    drawn = random.Random(options.seed).sample(ids, min(options.sample, len(ids)))
    chosen = sorted(i for i in drawn if is_test_id(i))
    out = options.out or work
    out.mkdir(parents=True, exist_ok=True)
    (out / "ids.txt").write_text("\n".join(chosen) + "\n")
    junit = out / "junit.xml"
    args = [f"--device={options.device}", f"--junitxml={junit}", "-q", "-p", "no:randomly"]
    done = _switched([*args, *options.pytest_args, *chosen], work, env)
    (out / "log.txt").write_text(done.stdout + done.stderr)
    outcomes, causes = _causes(junit)
    collected = sum(is_test_id(i) for i in ids)
    print(f"{collected} collected, {len(chosen)} run (seed {options.seed}): {dict(outcomes)}")
    for cause, count in causes.most_common():
        print(f"{count:5}  {cause}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
