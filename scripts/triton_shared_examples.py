"""Run triton-shared's python examples (its `python/examples` folder of pytest files) on Naiad.

    python scripts/triton_shared_examples.py EXAMPLES_DIR [--only test_mask,test_reduce]
        [--timeout 900] [--out DIR] [--scripts]

Nothing is fetched: EXAMPLES_DIR is that folder of a triton-shared checkout (or export), with its
conftest.py. The files run unmodified, as triton-shared's CI runs them (`pytest .` in the folder,
every test on the CPU: its conftest's `device` fixture is "cpu"), one pytest process per file,
through Naiad's switch (`naiad.install_as_triton()`) and compiled for this machine's CPU unless
NAIAD_BACKEND says otherwise. NAIAD_BACKEND=cpu (the default here) makes every launch wait for
its compiled kernel: most examples launch a kernel once on a small grid, which with the default
`auto` tiering would run in the interpreter while the compile finishes in the background, and
the compiled code would go unchecked (NAIAD_BACKEND=auto measures what a user gets).

One module is stood in: the examples select triton-shared's CPU back end with
`from triton.backends.triton_shared.driver import CPUDriver` and
`triton.runtime.driver.set_active(CPUDriver())`. That plugin package is triton-shared's, not
Triton's; the harness makes it a module whose `CPUDriver` is Naiad's CPU driver, the part it
plays here. Everything else the examples import is Naiad's answer to Triton's API.

The table printed gives, per file, the counts of passed / failed / skipped tests, and for each
failing test the line of its error (a file that does not import counts as one failed test).
With --scripts, every file with a `__main__` block (the examples' CPU benchmarks, timed by
triton-shared's `benchmark.measure`; bare_matmul.py checks its product there) is then run as a
script too: passed when it runs to the end.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

_STAND_IN = """
import sys, types
import naiad
naiad.install_as_triton()
import triton
from naiad.runtime.driver import CpuDriver
plugin = types.ModuleType("triton.backends.triton_shared")
plugin.driver = types.ModuleType("triton.backends.triton_shared.driver")
plugin.driver.CPUDriver = CpuDriver
sys.modules[plugin.__name__] = plugin
sys.modules[plugin.driver.__name__] = plugin.driver
triton.backends.triton_shared = plugin
"""

_PYTEST = (
    _STAND_IN
    + """
import pytest
sys.exit(pytest.main({args!r}))
"""
)

_SCRIPT = (
    _STAND_IN
    + """
import runpy
sys.path.insert(0, {folder!r})
sys.argv = [{path!r}]
runpy.run_path({path!r}, run_name="__main__")
"""
)


def _switched(code: str, folder: Path, timeout: float) -> subprocess.CompletedProcess | None:
    """Run `code` in a fresh Python in `folder`; None when it ran past `timeout` seconds."""
    env = {**os.environ, "NAIAD_BACKEND": os.environ.get("NAIAD_BACKEND", "cpu")}
    try:
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None


def _last_line(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    return lines[-1][:240] if lines else f"exit status {done.returncode}"


def run_script(path: Path, timeout: float) -> str:
    """'passed', 'failed: <last line>' or 'timed out' for a file run as `__main__` (the
    examples' benchmarks; bare_matmul.py checks its product there)."""
    done = _switched(_SCRIPT.format(folder=str(path.parent), path=str(path)), path.parent, timeout)
    if done is None:
        return f"timed out after {timeout:.0f} s"
    return "passed" if done.returncode == 0 else f"failed: {_last_line(done)}"


def _reason(problem: ET.Element) -> str:
    """The error line of a failed test: pytest's `E   ` line (a collection error's message is
    only "collection failure"), else the last line of its message."""
    raised = [line[1:].strip() for line in (problem.text or "").splitlines() if line[:2] == "E "]
    if raised:
        return raised[-1][:200]
    lines = [line for line in (problem.get("message") or "").splitlines() if line.strip()]
    return lines[-1][:200] if lines else "?"


def run_file(path: Path, timeout: float, junit: Path) -> tuple[dict, list[tuple[str, str]], str]:
    """(counts by outcome, [(failing test, last line of its error)], note) for one file."""
    args = ["-q", "-p", "no:cacheprovider", f"--junitxml={junit}", path.name]
    done = _switched(_PYTEST.format(args=args), path.parent, timeout)
    if done is None:
        return {}, [], f"timed out after {timeout:.0f} s"
    if not junit.exists():
        return {}, [], _last_line(done)
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    failures = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            counts["failed"] += 1
            failures.append((case.get("name", "?"), _reason(problem)))
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return counts, failures, ""


def _has_main(path: Path) -> bool:
    return '__name__ == "__main__"' in path.read_text()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", type=Path, help="triton-shared's python/examples folder")
    parser.add_argument("--only", default="", help="comma-separated file stems")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a file")
    parser.add_argument("--out", type=Path, help="keep each file's junit XML here")
    parser.add_argument(
        "--scripts", action="store_true", help="also run each file's __main__ (benchmarks)"
    )
    options = parser.parse_args(argv)
    wanted = {n.strip() for n in options.only.split(",") if n.strip()}
    folder = options.examples.resolve()
    out = options.out or Path(tempfile.mkdtemp(prefix="naiad-triton-shared-"))
    out.mkdir(parents=True, exist_ok=True)
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    for path in sorted(folder.glob("test_*.py")):
        if wanted and path.stem not in wanted:
            continue
        counts, failures, note = run_file(path, options.timeout, out / f"{path.stem}.xml")
        for outcome, count in counts.items():
            totals[outcome] += count
        summary = " ".join(f"{outcome} {count}" for outcome, count in counts.items() if count)
        print(f"{path.name:40} {summary or note}", flush=True)
        for name, reason in failures:
            print(f"    FAILED {name}: {reason}", flush=True)
    print(" ".join(f"{outcome} {count}" for outcome, count in totals.items()) + " (tests in all)")
    if options.scripts:
        scripts = [
            p
            for p in sorted(folder.glob("*.py"))
            if _has_main(p) and (not wanted or p.stem in wanted)
        ]
        passed = 0
        for path in scripts:
            outcome = run_script(path, options.timeout)
            passed += outcome == "passed"
            print(f"{path.name + ' as __main__':40} {outcome}", flush=True)
        print(f"{passed} of {len(scripts)} files with a __main__ ran to the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
