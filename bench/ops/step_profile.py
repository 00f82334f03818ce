"""Where the Llama-style training step's time goes on a GPU, under naiad.ops and eager.

    PYTHONPATH=$PWD python bench/ops/step_profile.py [--steps 10] [--rows 35] [--no-cprofile]

The step is bench/ops/goal_cases.py's GPU model case (bf16, 4 layers of 1024, 8x512 tokens:
logits, loss and every parameter's gradient), the one op_goals.py times against eager. Printed,
for `naiad.ops.use()` and for eager:

- the wall time of a step (`--steps` steps between two synchronizations, after 3 warm-up ones);
- the host time one step takes to issue (until the Python returns) and to finish (after a
  synchronization): a step whose issue time is its wall time is bound by the host;
- torch.profiler's table of 5 steps (CUPTI sees Naiad's launches too), by self GPU time, with
  the GPU time a step's kernels take in all;
- then, for Naiad's side, cProfile of `--steps` steps: the costliest functions by own time and
  by cumulative time (the launch path, the switch, the ops' plans).

bench/RESULTS.md ("Session of 2026-11-29") holds the first run's numbers on an H200.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ops's modules
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the working tree's naiad

import torch
from goal_cases import model_cases
from torch.profiler import ProfilerActivity, profile

import naiad.ops as ops


def _synchronized_wall(step, around, steps: int) -> float:
    """Milliseconds a step, over `steps` steps after 3 warm-up ones."""
    with around():
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / steps * 1e3


def _issue_and_finish(step, around) -> tuple[float, float]:
    """(ms until one step's Python returns, ms until its GPU work is done)."""
    with around():
        torch.cuda.synchronize()
        start = time.perf_counter()
        step()
        issued = time.perf_counter()
        torch.cuda.synchronize()
        done = time.perf_counter()
    return (issued - start) * 1e3, (done - start) * 1e3


def _gpu_table(step, around, rows: int) -> str:
    with around(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            step()
        torch.cuda.synchronize()
    events = prof.key_averages()
    kernels = sum(e.self_device_time_total for e in events if e.device_type.name == "CUDA")
    table = events.table(sort_by="self_device_time_total", row_limit=rows,
                         max_name_column_width=60)  # fmt: skip
    return f"GPU kernel time a step {kernels / 5 / 1e3:.2f} ms\n{table}"


def _python_profile(step, steps: int, rows: int) -> str:
    with ops.use():
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        profiler.disable()
    text = io.StringIO()
    for order in ("tottime", "cumulative"):
        pstats.Stats(profiler, stream=text).sort_stats(order).print_stats(rows)
    return text.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rows", type=int, default=35)
    parser.add_argument("--no-cprofile", action="store_true")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("step_profile.py needs a CUDA GPU (step_host_time.py is the CPU's)")
    case = model_cases(0, "cuda")[0]
    sides = (("naiad", case.ours, ops.use), ("eager", case.theirs, contextlib.nullcontext))
    print(f"# {case.name} on {torch.cuda.get_device_name()}")
    for name, step, around in sides:
        wall = _synchronized_wall(step, around, args.steps)
        issued, done = _issue_and_finish(step, around)
        print(f"{name}: {wall:.2f} ms a step; one step issued in {issued:.2f} ms, done in "
              f"{done:.2f} ms")  # fmt: skip
    for name, step, around in sides:
        print(f"\n== {name}: {_gpu_table(step, around, args.rows)}")
    if not args.no_cprofile:
        print(f"\n== naiad, cProfile of {args.steps} steps\n")
        print(_python_profile(case.ours, args.steps, args.rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
