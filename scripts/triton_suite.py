"""Run Triton's own test_core.py (or any of its test files) against Naiad, through the switch,
and, with `--against-triton`, the same tests against the Triton installed beside it.

    python scripts/triton_suite.py TRITON_CHECKOUT [--sample N] [--seed S] [--device cpu|cuda]
        [--file python/test/unit/language/test_core.py] [--select REGEX] [--out DIR]
        [--against-triton [--triton-path DIR]] [--workers N] [--triton-workers N]
        [--test-timeout S] [--budget S] [--ptx-target cuda:sm_90a] [-- pytest args]

Nothing is fetched: TRITON_CHECKOUT is a checkout (or an export) of Triton's repository. The
test ids of the file are collected under `python -m naiad.run`, a fixed random sample of them
(seeded, so runs compare) is run with `--device DEVICE` (cpu: compiled for the CPU,
NAIAD_BACKEND=cpu; cuda: compiled for the GPU), and the outcome is printed: counts, and the
failures grouped by the first line of their message (what docs/compat.md records). The runs
happen in a copy of the test folder with Triton's conftest files beside it, so Triton's own
fixtures (`device`, ...) apply.

`--against-triton` runs the sample a second time, at the same time, with `python -m pytest`
and no switch: the installed Triton (its interpreter, TRITON_INTERPRET=1, for `--device cpu`),
and prints what both passed and Naiad's share of Triton's passes, with what Naiad did instead
where Triton passed. `--triton-path DIR` (a folder holding a `triton` package, e.g. another
release's) puts DIR first on that side's path alone, and lets a release older than the test
files run them: the hardware predicates it lacks are false (triton_suite_older.py). Each side
runs its tests in parallel where pytest-xdist is installed (the cores split between the
sides), each test within `--test-timeout` (triton_suite_runs.py), and both within `--budget`
seconds. Logs, `ids.txt`, `outcomes.tsv` and `summary.txt` go to --out.

`--ptx-target cuda:sm_90a` (with `--device cpu`, Naiad alone) takes the tests' CUDA branches
without a GPU: kernels run on the CPU and what a test reads of the compiled kernel is the
target's compile (triton_suite_emulation.py): the GPU's compile errors and IR shapes, not its
values.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import triton_suite_report as report
from triton_suite_runs import SCRIPTS, Limits, Side, has_module, run_side

_TEST_ID = re.compile(r"[\w./-]+\.py::\S")


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


def collect(side: Side, test_path: Path, work: Path) -> list[str]:
    """The lines of the collection that name a test: its ids, and the few warnings that quote
    one after some words (`Test: tests/test_core.py::test_dtype_tensor, argvalues type: map`).
    Samples are drawn from these lines, as they always were, so a seed keeps its sample; the
    warnings are dropped from a sample afterwards (`is_test_id`)."""
    command = [*side.prefix, "--collect-only", "-q", str(test_path)]
    done = subprocess.run(command, cwd=work, env=side.env, capture_output=True, text=True)
    lines = [line.strip() for line in done.stdout.splitlines() if "::" in line]
    if not any(is_test_id(line) for line in lines):
        raise SystemExit(f"nothing collected:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return lines


def is_test_id(line: str) -> bool:
    return _TEST_ID.match(line) is not None


def _sides(options) -> tuple[Side, Side | None]:
    """Naiad through its switch, and (`--against-triton`) the installed Triton without it,
    each with its share of the cores where pytest-xdist is installed."""
    cores = os.cpu_count() or 1
    parallel = has_module("xdist")
    naiad_workers = options.workers if options.workers is not None else cores
    if options.against_triton and options.workers is None:
        naiad_workers = max(1, cores * 3 // 4)  # Naiad compiles in Python: the larger share
    triton_workers = options.triton_workers or max(1, cores - naiad_workers)
    backend = "cpu" if options.device == "cpu" else "auto"
    env = {**os.environ, "NAIAD_BACKEND": backend}
    if options.ptx_target:
        if options.device != "cpu" or options.against_triton:
            raise SystemExit("--ptx-target runs Naiad alone, with --device cpu")
        plugin = f"-p triton_suite_emulation {env.get('PYTEST_ADDOPTS', '')}"
        env.update(NAIAD_SUITE_PTX_TARGET=options.ptx_target, PYTEST_ADDOPTS=plugin.strip())
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SCRIPTS), env.get("PYTHONPATH")]))
    naiad = Side(
        "naiad",
        [sys.executable, "-m", "naiad.run", "-m", "pytest"],
        env,
        naiad_workers if parallel else 0,
    )
    if not options.against_triton:
        return naiad, None
    plain = {k: v for k, v in os.environ.items() if not k.startswith("NAIAD_")}
    if options.device == "cpu":
        plain["TRITON_INTERPRET"] = "1"
    if options.triton_path:
        path = [str(options.triton_path.resolve()), str(SCRIPTS), plain.get("PYTHONPATH")]
        plain["PYTHONPATH"] = os.pathsep.join(filter(None, path))
        plain["PYTEST_ADDOPTS"] = f"-p triton_suite_older {plain.get('PYTEST_ADDOPTS', '')}".strip()
    triton = Side("triton", [sys.executable, "-m", "pytest"], plain, triton_workers * parallel)
    return naiad, triton


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--file", default="python/test/unit/language/test_core.py")
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--select", default="", help="a regular expression test ids must match")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--against-triton", action="store_true")
    parser.add_argument("--workers", type=int, default=None, help="Naiad's xdist workers")
    parser.add_argument("--triton-workers", type=int, default=None)
    parser.add_argument("--triton-path", type=Path, default=None, help="Triton's side: a folder")
    parser.add_argument("--test-timeout", type=float, default=300.0, help="seconds a test")
    parser.add_argument("--budget", type=float, default=math.inf, help="seconds for the runs")
    parser.add_argument("--ptx-target", default="", help="e.g. cuda:sm_90a (see the doc)")
    parser.add_argument("pytest_args", nargs="*")
    return parser.parse_intermixed_args(argv)  # pytest args after `--`, options anywhere


def main(argv=None) -> int:
    options = _parse(argv)
    naiad, triton = _sides(options)
    work = Path(tempfile.mkdtemp(prefix="naiad-triton-suite-"))
    test_path = _prepare(options.checkout.resolve(), options.file, work)
    ids = [i for i in collect(naiad, test_path, work) if re.search(options.select, i)]
    drawn = random.Random(options.seed).sample(ids, min(options.sample, len(ids)))
    chosen = sorted(i for i in drawn if is_test_id(i))
    out = (options.out or work).resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "ids.txt").write_text("\n".join(chosen) + "\n")
    known = set(collect(triton, test_path, work)) if triton is not None else set()
    extra = [f"--device={options.device}", *options.pytest_args]
    limits = Limits(options.test_timeout, time.monotonic() + options.budget, extra)
    collected = sum(is_test_id(i) for i in ids)
    if triton is None:
        results = run_side(naiad, chosen, work, out, limits)
        lines = report.single(results, collected, options.seed)
        other = None
    else:
        uncollected = [i for i in chosen if i not in known]
        runs = ((naiad, chosen), (triton, [i for i in chosen if i in known]))
        with ThreadPoolExecutor(2) as pool:
            done = [pool.submit(run_side, side, tests, work, out, limits) for side, tests in runs]
            results, other = (future.result() for future in done)
        lines = report.against(results, other, uncollected, collected, options.seed)
    (out / "outcomes.tsv").write_text(report.table(results, other))
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
