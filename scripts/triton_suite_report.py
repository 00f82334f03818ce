"""What scripts/triton_suite.py prints: a side's counts and its failures grouped by the first
line of their message; against Triton, what both passed, Naiad's share of Triton's passes, and
what Naiad did instead where Triton passed."""

from __future__ import annotations

import collections
import re

_NOT_PASSED = ("failed", "error", "crashed", "not run")


def first_line(message: str) -> str:
    """A message's first line without addresses and paths, so that causes group."""
    line = message.strip().splitlines()[0] if message.strip() else "(no message)"
    line = re.sub(r"0x[0-9a-f]+", "0x…", line)
    line = re.sub(r"/[^\s:]+/", "…/", line)
    return line[:200]


def counts(results: dict) -> dict:
    return dict(collections.Counter(r.outcome for r in results.values()).most_common())


def _grouped(results: dict, ids, lines: list[str], indent: str = "") -> None:
    """`count  outcome: cause` for the tests `ids`, most common first."""
    causes = collections.Counter((results[i].outcome, first_line(results[i].message)) for i in ids)
    for (outcome, cause), count in causes.most_common():
        lines.append(f"{indent}{count:5}  {outcome}: {cause}")


def _slowest(results: dict, lines: list[str], label: str, how_many: int = 5) -> None:
    timed = sorted(results.items(), key=lambda item: -item[1].duration)[:how_many]
    shown = ", ".join(f"{test.split('::')[-1]} {r.duration:.0f}s" for test, r in timed)
    lines.append(f"{label}'s slowest: {shown}")


def single(results: dict, collected: int, seed: int) -> list[str]:
    """One side's summary (the form docs/compat.md quotes)."""
    lines = [f"{collected} collected, {len(results)} run (seed {seed}): {counts(results)}"]
    failed = [i for i, r in results.items() if r.outcome in _NOT_PASSED]
    _grouped(results, failed, lines)
    _slowest(results, lines, "the run")
    return lines


def against(naiad: dict, triton: dict, uncollected: list[str], collected: int, seed: int):
    """The comparison of the two sides over the tests both ran."""
    lines = [f"{collected} collected by Naiad, {len(naiad)} run (seed {seed})"]
    lines.append(f"Naiad:  {counts(naiad)}")
    lines.append(f"Triton: {counts(triton)}")
    if uncollected:
        lines.append(f"not collected by Triton (not run by it): {len(uncollected)}")
    naiad_passed = {i for i, r in naiad.items() if r.outcome == "passed"}
    triton_passed = {i for i, r in triton.items() if r.outcome == "passed"}
    both = naiad_passed & triton_passed
    share = 100.0 * len(both) / len(triton_passed) if triton_passed else 0.0
    lines.append(f"Naiad passed: {len(naiad_passed)}")
    lines.append(f"Triton passed: {len(triton_passed)}")
    lines.append(f"passed by both: {len(both)}")
    lines.append(
        f"Naiad's pass share of Triton's passes: {len(both)} / {len(triton_passed)} = {share:.1f} %"
    )
    lines.append(f"passed by Naiad only: {len(naiad_passed - triton_passed)}")
    lines.append("where Triton passed and Naiad did not, by Naiad's outcome and cause:")
    _grouped(naiad, sorted(triton_passed - naiad_passed), lines, "  ")
    failed = [i for i, r in naiad.items() if r.outcome in _NOT_PASSED]
    lines.append(f"Naiad's failures, by cause ({len(failed)}):")
    _grouped(naiad, failed, lines, "  ")
    _slowest(naiad, lines, "Naiad")
    _slowest(triton, lines, "Triton")
    return lines


def table(naiad: dict, triton: dict | None) -> str:
    """`id, Naiad's outcome, Triton's (or -), Naiad's cause`, tab-separated, one test a line."""
    rows = []
    for test, result in naiad.items():
        other = triton[test].outcome if triton and test in triton else "-"
        cause = first_line(result.message) if result.outcome != "passed" else ""
        rows.append("\t".join((test, result.outcome, other, cause)))
    return "\n".join(rows) + "\n"
