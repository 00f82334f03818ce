"""naiad.ops against torch eager, grouped as issue 19's speed goals, on a GPU or the CPU: one
table, a geometric mean per group, and each case's result checked against torch's first.

    PYTHONPATH=$PWD python bench/ops/op_goals.py --device cuda [--jobs 12] [--pairs 5]
                                                 [--groups products,attention] [--size 4096]
    PYTHONPATH=$PWD python bench/ops/op_goals.py --device cpu --size 64 --pairs 1   # quick

The groups and their goals (issue 19, on an H100/H200; ratio torch time / Naiad time, > 1:
Naiad faster): pointwise, reductions and norms (cpu_ops.py's fp32 cases at --size squared),
their geometric mean together >= 1.0; products (mm, addmm, bmm in fp16 and bf16 against cuBLAS)
and attention (scaled_dot_product_attention forward, and forward + backward, against torch's
flash kernel, SDPBackend.FLASH_ATTENTION) >= 0.9, each case shown again against the backend
torch picks by itself (the "(torch default)" groups, no goal: cuDNN's on an H200); the
Llama-style model's training step (forward + backward, bf16, every ATen op Naiad has switched
on by `naiad.ops.use()` against eager) >= 1.0 in tokens/s. Data
movement (flip, scatter_add, sort, topk) is shown with no GPU goal. On the CPU the cases are
fp32 and smaller, and the issue's goal is the geometric mean over the op set >= 0.8.

Per case, Naiad's result is compared with torch's first (normwise relative error of the floats
against a bound of the output's precision; integers and booleans exactly), in the time shown
beside the verdict (compiles included where the kernels were not compiled yet): a case whose
result differs is timed but left out of the means, one that raises is not timed; both are
listed after the table. Then both sides alternate in this process (cpu_ops.measure: `--pairs`
pairs of batches of calls, about 20 ms of torch's calls a batch), a batch timed between CUDA
events on a GPU (the host clock on the CPU), so a call's time is what an eager program sees of
it: its kernels or its host path, whichever is longer. The ratio is the median over the pairs.

`--jobs N` compiles first in N child processes, each running Naiad's side of its share of the
cases once: they fill the disk cache this process then reads (a compile holds the GIL, so
processes, not threads). Without it each kernel compiles during its case's check. `--budget S`
starts no case after S seconds from the start (the rest are listed as not run), so that a run
under a hard time limit still ends with its means.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # bench/cpu/kernels.py says why
os.environ.setdefault("NAIAD_CPU_TIERING", "off")  # CPU kernels timed compiled, never interpreted

import cpu_ops  # bench/ops/, the script's directory, is first on sys.path
import torch
from goal_cases import GROUPS, Case, build

# (the groups a goal's mean is taken over, the goal on a GPU); the model's goal holds for each
# of its batches, so its line shows the worst case, not the mean.
GPU_GOALS = {
    "pointwise + reductions + norms": (("pointwise", "reductions", "norms"), 1.0),
    "products (cuBLAS)": (("products",), 0.9),
    "attention fwd (flash)": (("attention fwd",), 0.9),
    "attention fwd+bwd (flash)": (("attention fwd+bwd",), 0.9),
    "model tokens/s fwd+bwd, worst batch": (("model",), 1.0),
}
CPU_GOAL = 0.8  # over every case
# The normwise relative error a result may have, by its dtype (products and model steps
# accumulate in fp32 on both sides; the bound covers the last rounding to the output's type).
TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def _flat(result):
    if isinstance(result, torch.Tensor):
        return [result]
    return [t for item in result for t in _flat(item)]


def disagreement(mine, theirs, slack) -> str | None:
    """None where every output agrees, else what differs."""
    mine, theirs = _flat(mine), _flat(theirs)
    if len(mine) != len(theirs):
        return f"{len(mine)} outputs, torch {len(theirs)}"
    for i, (a, e) in enumerate(zip(mine, theirs)):
        if a.shape != e.shape or a.dtype != e.dtype:
            return f"output {i}: {a.dtype}{list(a.shape)}, torch {e.dtype}{list(e.shape)}"
        if not e.is_floating_point():
            if not torch.equal(a, e):
                return f"output {i}: {int((a != e).sum())} of {e.numel()} differ"
            continue
        bound = TOLERANCE.get(e.dtype, 1e-12) * slack
        a, e = a.detach().double(), e.detach().double()
        error = float(
            torch.linalg.vector_norm(a - e) / torch.linalg.vector_norm(e).clamp_min(1e-30)
        )
        if not error <= bound:
            return f"output {i}: normwise error {error:.1e}"
    return None


def _check(case: Case) -> tuple[str, str]:
    """("ok", ""), ("differs", how) or ("error", what was raised): Naiad's result against
    torch's."""
    try:
        with case.around():
            mine = case.ours()
        found = disagreement(mine, case.theirs(), case.slack)
    except Exception as error:
        traceback.print_exc()
        return "error", f"{type(error).__name__}: {error}".splitlines()[0][:100]
    return ("differs", found) if found else ("ok", "")


def cuda_timed(fn, calls: int, clock=None) -> float:
    """Seconds per call of a batch of `calls`, between CUDA events (`clock` is not used)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / calls


def warm_in_children(args, jobs: int) -> str:
    """Naiad's side of every case run once across `jobs` child processes, stopped at half the
    budget if one is set (this process compiles what they left); what happened, in words."""
    start = time.perf_counter()
    argv = [sys.executable, __file__, "--device", args.device, "--size", str(args.size),
            "--groups", ",".join(args.chosen)]  # fmt: skip
    children = [
        subprocess.Popen([*argv, "--warm-part", f"{i}/{jobs}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)  # a failure shows in this process's check
        for i in range(jobs)
    ]  # fmt: skip
    stopped = 0
    try:
        for child in children:
            left = None if not args.budget else start + args.budget / 2 - time.perf_counter()
            try:
                child.wait(timeout=None if left is None else max(left, 0.1))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
                stopped += 1
    finally:  # interrupted (SIGTERM): no child outlives this process
        for child in children:
            if child.poll() is None:
                child.kill()
    seconds = time.perf_counter() - start
    return f"compiled first in {jobs} processes: {seconds:.1f} s, {stopped} stopped unfinished"


def warm_part(args) -> None:
    """A child of warm_in_children: the model's step alone in child 0 (it compiles some 40
    kernels, the longest share), the other cases shared round-robin by the rest."""
    index, jobs = map(int, args.warm_part.split("/"))
    cases = build(args.chosen, args.size, args.device)
    heavy = [case for case in cases if case.group == "model"]
    light = [case for case in cases if case.group != "model"]
    if heavy and jobs > 1:
        mine = heavy if index == 0 else light[index - 1 :: jobs - 1]
    else:
        mine = cases[index::jobs]
    for case in mine:
        with contextlib.suppress(Exception), case.around():
            case.ours()
    if args.device == "cuda":
        torch.cuda.synchronize()


class Stopped(BaseException):
    """SIGTERM, as `timeout` sends it: the run ends with the means of what it measured (a
    BaseException, so that a case's own error handling does not take it)."""


def _stop(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the summary is printed whole
    raise Stopped


def run_cases(args, timer, began, ratios, failed, notes) -> None:
    """Check and time each case, a row each; ratios, failures and notes collected."""
    for case in build(args.chosen, args.size, args.device):
        start = time.perf_counter()
        if args.budget and start - began > args.budget:
            notes.append(f"{case.group} / {case.name}: not run, past --budget {args.budget} s")
            continue
        status, detail = _check(case)
        label = f"{case.group:<18} {case.name:<50}"
        if status != "ok":
            failed[case.group] = failed.get(case.group, 0) + 1
            notes.append(f"{case.group} / {case.name}: {status}: {detail}")
        if status == "error":
            print(f"{label} ERROR: {detail}", flush=True)
            continue
        check = f"{status} {time.perf_counter() - start:4.1f}s"
        ratio, mine, base = cpu_ops.measure(case.ours, case.theirs, args.pairs,
                                            around=case.around, timer=timer)  # fmt: skip
        if status == "ok":
            ratios.setdefault(case.group, []).append(ratio)
        print(f"{label} {check:<12} {ratio:>11.2f} {mine * 1e3:>9.3f} {base * 1e3:>9.3f}",
              flush=True)  # fmt: skip


def _header(args) -> str:
    if args.device == "cuda":
        where = f"{torch.cuda.get_device_name()}, {os.cpu_count()} host cores"
    else:
        where = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, " \
                f"{torch.get_num_threads()} torch threads"  # fmt: skip
    try:
        here = Path(__file__).parent
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here,
                                capture_output=True, text=True).stdout.strip() or "?"  # fmt: skip
    except OSError:
        commit = "?"
    return f"# naiad.ops vs torch eager: {where}, torch {torch.__version__}, naiad at {commit}"


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def summary(ratios: dict[str, list[float]], failed: dict[str, int], device: str) -> None:
    """The geometric mean per group and per goal."""
    print("\n# geometric means of torch time / Naiad time (> 1: Naiad faster); cases that "
          "failed their check are left out")  # fmt: skip
    print(f"{'group':<32} {'cases':>5} {'failed':>6} {'geomean':>7}  goal")
    for group in GROUPS:
        if group in ratios or failed.get(group):
            values = ratios.get(group, [])
            print(f"{group:<32} {len(values):>5} {failed.get(group, 0):>6} "
                  f"{geomean(values):>7.2f}")  # fmt: skip
    goals = GPU_GOALS if device == "cuda" else {"all cases (CPU)": (GROUPS, CPU_GOAL)}
    for label, (groups, goal) in goals.items():
        values = [r for g in groups for r in ratios.get(g, [])]
        if values:
            mean = min(values) if "worst" in label else geomean(values)
            verdict = "met" if mean >= goal else "NOT met"
            print(f"{label:<32} {len(values):>5} {sum(failed.get(g, 0) for g in groups):>6} "
                  f"{mean:>7.2f}  >= {goal} {verdict}")  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--size", type=int, help="n of the n x n operands (4096 cuda, 1024 cpu)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--groups", default=",".join(GROUPS), help="of: " + ", ".join(GROUPS))
    parser.add_argument("--jobs", type=int, default=0, help="compile first in N processes")
    parser.add_argument("--budget", type=float, help="seconds: no case starts after them")
    parser.add_argument("--warm-part", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.size = args.size or (4096 if args.device == "cuda" else 1024)
    args.chosen = [g.strip() for g in args.groups.split(",") if g.strip()]
    if unknown := set(args.chosen) - set(GROUPS):
        raise SystemExit(f"unknown groups {sorted(unknown)}; the groups: {', '.join(GROUPS)}")
    if args.warm_part:
        return warm_part(args)
    began = time.perf_counter()
    print(_header(args), flush=True)
    signal.signal(signal.SIGTERM, _stop)
    timer = cuda_timed if args.device == "cuda" else cpu_ops.timed
    ratios, failed, notes = {}, {}, []
    try:
        if args.jobs:
            print(f"# {warm_in_children(args, args.jobs)}", flush=True)
        print(f"{'group':<18} {'case':<50} {'check, s':<12} {'torch/naiad':>11} "
              f"{'naiad ms':>9} {'torch ms':>9}")  # fmt: skip
        run_cases(args, timer, began, ratios, failed, notes)
    except Stopped:
        notes.append("stopped by SIGTERM (a time limit): the cases after the last row not run")
    if notes:
        print("\n# cases not in the means (a result not torch's, an error, no time left):")
        print("\n".join(notes))
    summary(ratios, failed, args.device)


if __name__ == "__main__":
    main()
