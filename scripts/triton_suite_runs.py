"""One side of scripts/triton_suite.py: the sampled tests run by one pytest command (Naiad
through its switch, or the installed Triton), in parallel where pytest-xdist is installed,
within a per-test limit and a wall-clock budget, and the outcome of every test.

Outcomes come from the log triton_suite_plugin.py writes as tests end, not from a report
written at the end, so a run stopped at its budget or a process ended by the per-test limit
still says what ran. A test that started and never ended is "crashed" (the hard per-test limit,
or a fault of the process); without xdist the tests after it are run again by a new pytest.
The ones the budget left are "not run".
"""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
# What a hard limit adds to pytest-timeout's, which fails the test more gently where it can.
_HARD_MARGIN_S = 30.0
_ENDED = "its process ended during the test (the per-test limit, or a fault)"


@dataclass
class Side:
    """How one side runs pytest: `prefix` (`python -m naiad.run -m pytest`, or `python -m
    pytest`), its environment, and its xdist workers (0: none)."""

    label: str
    prefix: list[str]
    env: dict
    workers: int = 0


@dataclass
class Result:
    outcome: str  # passed, failed, error, skipped, crashed, not run
    message: str = ""
    duration: float = 0.0


@dataclass
class Limits:
    test_timeout_s: float
    deadline: float  # time.monotonic() past which every run is stopped
    extra_args: list[str] = field(default_factory=list)


def has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _arguments(side: Side, log: Path, limits: Limits) -> list[str]:
    args = ["-q", "-p", "no:randomly", "-p", "triton_suite_plugin", f"--suite-log={log}"]
    hard = limits.test_timeout_s
    if has_module("pytest_timeout"):
        args.append(f"--timeout={limits.test_timeout_s:g}")
        hard += _HARD_MARGIN_S
    args.append(f"--suite-hard-timeout={hard:g}")
    if side.workers > 1:
        args += ["-n", str(side.workers)]
    return args + limits.extra_args


def _run_once(side: Side, ids: list[str], work: Path, out: Path, limits: Limits) -> None:
    """One pytest over `ids`, stopped (its whole process group) at the deadline."""
    log = out / f"{side.label}.jsonl"
    env = dict(side.env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SCRIPTS), env.get("PYTHONPATH")]))
    command = side.prefix + _arguments(side, log, limits) + ids
    with open(out / f"{side.label}-log.txt", "a", encoding="utf-8") as text:
        process = subprocess.Popen(
            command,
            cwd=work,
            env=env,
            stdout=text,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            process.wait(timeout=max(1.0, limits.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            text.write(f"\n[triton_suite] budget spent: stopping {side.label}'s run\n")
            _stop(process)


def _stop(process: subprocess.Popen) -> None:
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def read_log(log: Path) -> tuple[dict[str, Result], set[str]]:
    """The results of the tests the log shows ending, and the ids it shows starting."""
    phases: dict[str, dict[str, dict]] = collections.defaultdict(dict)
    started = set()
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["when"] == "start":
                started.add(record["id"])
            else:
                phases[record["id"]][record["when"]] = record
    return {test: _result(records) for test, records in phases.items()}, started


def _result(records: dict[str, dict]) -> Result:
    duration = sum(r.get("duration", 0.0) for r in records.values())
    failing = [r for r in records.values() if r["outcome"] == "failed"]
    if any(r["when"] == "???" for r in failing):  # xdist's report of a worker that died
        return Result("crashed", _ENDED, duration)
    if failing:
        call = records.get("call")
        if call is not None and call["outcome"] == "failed":
            return Result("failed", call["message"], duration)
        return Result("error", failing[0]["message"], duration)
    for when in ("setup", "call"):
        if records.get(when, {}).get("outcome") == "skipped":
            return Result("skipped", records[when]["message"], duration)
    if records.get("call", {}).get("outcome") == "passed":
        return Result("passed", "", duration)
    return Result("crashed", _ENDED, duration)


def run_side(side: Side, ids: list[str], work: Path, out: Path, limits: Limits) -> dict:
    """Every id's Result: pytest runs again over the tests a crash left, while it makes
    progress and the budget lasts."""
    log = out / f"{side.label}.jsonl"
    log.unlink(missing_ok=True)
    remaining = list(ids)
    while remaining and time.monotonic() < limits.deadline:
        _run_once(side, remaining, work, out, limits)
        results, started = read_log(log)
        left = [i for i in remaining if i not in results and i not in started]
        if len(left) == len(remaining):
            break
        remaining = left
    results, started = read_log(log)
    why = "the budget ran out" if time.monotonic() >= limits.deadline else "pytest ran none"
    for test in ids:
        if test not in results:
            ended = "crashed" if test in started else "not run"
            results[test] = Result(ended, _ENDED if test in started else why)
    return {test: results[test] for test in ids}
