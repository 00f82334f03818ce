"""The GPU side of bench/gpu/tensor_cores.py: load the kernel sources through each compiler, run
each planned case (tables.plan) row by row, print the table as it grows, write it with `--out`.
A case or a row that raises is reported and the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import torch
import triton
from kernels import EXAMPLES, ROOT, through  # bench/gpu/kernels.py (its directory is on the path)

import naiad

from . import attention, matmul, measure, report
from .tables import MatmulCase

OWN_KERNELS = Path(__file__).resolve().parents[1] / "tensor_core_kernels.py"


def sources(planned) -> dict:
    """Each kernel source the plan needs, loaded once per variant (measure.modules)."""
    wanted = {"own"}
    for case, _ in planned:
        if isinstance(case, MatmulCase):
            wanted.add("tutorial")
        else:
            wanted.add("attention")
    paths = {
        "own": OWN_KERNELS,
        "tutorial": EXAMPLES / "03_matmul.py",
        "attention": EXAMPLES / "06_fused_attention.py",
    }
    loaded = {}
    for name in sorted(wanted):
        try:
            loaded[name] = measure.modules(through, paths[name])
        except Exception as exc:  # its cases fail alone (a KeyError each), the others run
            print(f"loading {paths[name].name} failed: {measure.short(exc)}")
    return loaded


def facts() -> dict:
    """The machine and versions of the run."""
    props = torch.cuda.get_device_properties(0)
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = "?"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "device": props.name,
        "capability": f"{props.major}.{props.minor}",
        "sms": props.multi_processor_count,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "naiad_commit": commit or "?",
    }


def emit(row: dict) -> None:
    print(report.line(row))
    for problem in report.problems(row):
        print(problem)
    sys.stdout.flush()


def run(planned, rounds: int, out: Path | None, budget: float | None = None) -> int:
    """Measure every case of `planned` (none started after `budget` seconds); the exit status
    is 1 when a case could not run or a row failed its check, else 0."""
    start = time.perf_counter()
    if os.environ.pop("DISABLE_MMA_V3", None) is not None:  # the default column is Triton's own
        print("DISABLE_MMA_V3 was set: unset for the run (measure.mma_sync sets it per compile)")
    run_facts = facts()
    header = "# tensor cores  " + "  ".join(f"{k} {v}" for k, v in run_facts.items())
    print(header)
    print(report.HEADER)
    print(report.RULE)
    sys.stdout.flush()
    torch.backends.cuda.matmul.allow_tf32 = False  # float64 references: no tf32 anywhere
    torch.manual_seed(0)
    mods = sources(planned)
    rows, broken = [], 0

    def record(row: dict) -> None:
        rows.append(row)
        emit(row)

    for case, configs in planned:
        if budget is not None and time.perf_counter() - start > budget:
            broken += 1
            print(f"| {case.label} | not started: past the budget of {budget:.0f} s |")
            continue
        rows_of = matmul.case_rows if isinstance(case, MatmulCase) else attention.case_rows
        try:
            rows_of(case, configs, rounds, mods, record)
        except Exception as exc:  # report the case and go on with the next
            broken += 1
            rows.append({"case": case.label, "config": "—", "error": measure.short(exc)})
            print(f"| {case.label} | failed: {measure.short(exc)} |")
        torch.cuda.empty_cache()
        if out is not None:  # after each case: a run cut short keeps what it measured
            report.write(out, header, run_facts, rows)
    failed = sum(
        1 for row in rows for v in measure.VARIANTS if row.get(v, {}).get("status") == "FAIL"
    )
    elapsed = time.perf_counter() - start
    run_facts["seconds"] = round(elapsed, 1)
    if out is not None:
        report.write(out, header, run_facts, rows)
    print(
        f"tensor cores: {len(rows)} rows, {failed} failed checks, {broken} cases not run, "
        f"{elapsed:.0f} s (naiad {getattr(naiad, '__version__', '?')})"
    )
    return 1 if failed or broken else 0
