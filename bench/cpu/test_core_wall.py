"""Issue 18's first latency row: the wall time of a fixed sample of Triton's test_core.py through
Naiad (an empty cache each run) against Triton's interpreter (TRITON_INTERPRET=1), the same
runner and the same number of pytest-xdist workers, one side at a time and alternated so that
both meet the same load.

    .venv/bin/python bench/cpu/test_core_wall.py TRITON --triton-path SITE_PACKAGES
        [--sample 1500] [--seed 16] [--subset 300] [--workers 1] [--rounds 2]
        [--naiad-backend auto|cpu|interpreter] [--only naiad|triton] [--out DIR]

TRITON is a checkout of Triton's tests (as for scripts/triton_suite.py); SITE_PACKAGES holds the
installed Triton its side imports. The sample is scripts/triton_suite.py's for the same
`--sample` and `--seed`, less the ids Triton's side does not collect; `--subset N` takes a
seeded N of it. Naiad runs with the default settings (`auto`: small launches tiered), with
the runner's NAIAD_BACKEND=cpu, which compiles every launch, or in its interpreter alone
(`interpreter`). Each run counts its outcomes from the runner's log; each round prints every
run's wall time and the ratio Naiad / Triton.
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import random
import sys
import tempfile
import time
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import triton_suite as suite  # noqa: E402
from triton_suite_runs import Limits, Side, run_side  # noqa: E402


def _sides(triton_path: str, workers: int, backend: str) -> tuple[Side, Side]:
    """Naiad through its switch (NAIAD_BACKEND=`backend`: `cpu`, the runner's, compiles every
    launch; `auto`, the default, lets small launches run in the interpreter while they compile,
    runtime/cpu_tiering.py), and Triton's interpreter, both seeing the same PYTHONPATH."""
    path = os.pathsep.join(filter(None, [triton_path, os.environ.get("PYTHONPATH")]))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NAIAD_", "TRITON_"))}
    base["PYTHONPATH"] = path
    switched = [sys.executable, "-m", "naiad.run", "-m", "pytest"]
    naiad = Side("naiad", switched, base | {"NAIAD_BACKEND": backend})
    triton = Side("triton", [sys.executable, "-m", "pytest"], base | {"TRITON_INTERPRET": "1"})
    naiad.workers = triton.workers = workers
    return naiad, triton


def _sample(options, naiad: Side, triton: Side, work: Path, test_path: Path) -> list[str]:
    """triton_suite.py's sample for the seed, kept to what both sides collect."""
    ids = suite.collect(naiad, test_path, work)
    drawn = random.Random(options.seed).sample(ids, min(options.sample, len(ids)))
    chosen = sorted(i for i in drawn if suite.is_test_id(i))
    known = set(suite.collect(triton, test_path, work))
    both = [i for i in chosen if i in known]
    if options.subset:
        both = sorted(random.Random(options.seed).sample(both, min(options.subset, len(both))))
    return both


def _run(side: Side, ids: list[str], work: Path, out: Path) -> tuple[float, dict]:
    """One run with empty caches: its wall time and its outcomes counted."""
    caches = tempfile.mkdtemp(prefix=f"wall-{side.label}-")
    env = side.env | {"NAIAD_CACHE_DIR": caches, "TRITON_CACHE_DIR": caches}
    fresh = Side(side.label, side.prefix, env, side.workers)
    out.mkdir(parents=True, exist_ok=True)
    limits = Limits(300.0, math.inf, ["--device=cpu"])
    start = time.monotonic()
    results = run_side(fresh, ids, work, out, limits)
    spent = time.monotonic() - start
    return spent, collections.Counter(r.outcome for r in results.values())


def _rounds(options, sides: tuple[Side, Side], ids: list[str], work: Path, out: Path) -> None:
    """`options.rounds` runs of each side (or of `options.only`), the order swapped each
    round, each run's time and outcomes printed, and the round's ratio."""
    for round_ in range(options.rounds):
        order = sides if round_ % 2 == 0 else sides[::-1]
        spent = {}
        for side in (s for s in order if options.only in (None, s.label)):
            spent[side.label], counts = _run(side, ids, work, out / f"round{round_}")
            took = f"{spent[side.label]:.1f} s"
            print(f"round {round_} {side.label}: {took} {dict(counts)}", flush=True)
        if len(spent) == 2:
            ratio = spent["naiad"] / spent["triton"]
            print(f"round {round_} naiad / triton: {ratio:.2f}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--triton-path", required=True)
    parser.add_argument("--file", default="python/test/unit/language/test_core.py")
    parser.add_argument("--sample", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--subset", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--only", choices=("naiad", "triton"), help="run one side alone")
    parser.add_argument("--naiad-backend", default="auto", choices=("auto", "cpu", "interpreter"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    options = parser.parse_args(argv)
    naiad, triton = _sides(options.triton_path, options.workers, options.naiad_backend)
    work = Path(tempfile.mkdtemp(prefix="naiad-test-core-wall-"))
    test_path = suite._prepare(options.checkout.resolve(), options.file, work)
    ids = _sample(options, naiad, triton, work, test_path)
    out = (options.out or work).resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "ids.txt").write_text("\n".join(ids) + "\n")
    print(
        f"{len(ids)} tests, seed {options.seed}, {options.workers} worker(s) a side, "
        f"NAIAD_BACKEND={options.naiad_backend}",
        flush=True,
    )
    _rounds(options, (naiad, triton), ids, work, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
