"""naiad.ops against torch eager on the CPU, op by op, on the same tensors.

    python bench/ops/cpu_ops.py [--pairs 15] [--only add,softmax,...] [--size 1024]
                                [--rows R] [--device cuda] [--one-thread]

Method (issue 19): for each op, Naiad's function and torch's alternate in one process (A B A B
...) after a warm-up that compiles Naiad's kernel, `--pairs` pairs, each side timed over a batch
of calls long enough to read; printed per op: the median of the per-pair ratios torch time /
Naiad time (> 1: Naiad is faster) and the median times; at the end the geometric mean of the
ratios over the op set. Operands are fp32, --size x --size (1024 x 1024 by default: 4 MiB, past
the launch overheads of both), freshly random; torch is asked to let its OpenMP threads wait
passively, as bench/cpu/kernels.py explains. `--device cuda` runs the same on a GPU (each batch
timed between synchronizations). `--rows R` makes the operands R x --size. `--one-thread` runs
both sides on the calling thread alone (`NAIAD_NUM_THREADS=1`, `torch.set_num_threads(1)`) and
times them in its CPU time, as bench/cpu/kernels.py's option does: on a shared machine wall time
also measures the neighbours.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("NAIAD_BACKEND", "cpu")

import torch
import torch.nn.functional as F

import naiad.ops as ops
from naiad import knobs


def cases(n: int, device: str, rows: int | None = None):
    """name -> (Naiad's call, torch's call) on shared operands of `rows` (default n) x n."""
    g = torch.Generator().manual_seed(0)
    m = rows or n
    x = torch.randn(m, n, generator=g).to(device)
    y = torch.randn(m, n, generator=g).to(device)
    row = torch.randn(n, generator=g).to(device)
    w, b = torch.randn(n, generator=g).to(device), torch.randn(n, generator=g).to(device)
    cond = x > 0
    index = torch.randint(0, n, (m, n), generator=g).to(device)
    return {
        "add": (lambda: ops.add(x, y), lambda: torch.add(x, y)),
        "mul scalar": (lambda: ops.mul(x, 1.5), lambda: torch.mul(x, 1.5)),
        "add broadcast": (lambda: ops.add(x, row), lambda: torch.add(x, row)),
        "add transposed": (lambda: ops.add(x.t(), y), lambda: torch.add(x.t(), y)),
        "exp": (lambda: ops.exp(x), lambda: torch.exp(x)),
        "sigmoid": (lambda: ops.sigmoid(x), lambda: torch.sigmoid(x)),
        "gelu": (lambda: ops.gelu(x), lambda: F.gelu(x)),
        "silu": (lambda: ops.silu(x), lambda: F.silu(x)),
        "where": (lambda: ops.where(cond, x, y), lambda: torch.where(cond, x, y)),
        "lt": (lambda: ops.lt(x, y), lambda: torch.lt(x, y)),
        "to fp16": (lambda: ops.to(x, torch.float16), lambda: x.to(torch.float16)),
        "sum rows": (lambda: ops.sum(x, 1), lambda: torch.sum(x, 1)),
        "sum cols": (lambda: ops.sum(x, 0), lambda: torch.sum(x, 0)),
        "amax rows": (lambda: ops.amax(x, 1), lambda: torch.amax(x, 1)),
        "argmax rows": (lambda: ops.argmax(x, 1), lambda: torch.argmax(x, 1)),
        "var rows": (lambda: ops.var(x, 1), lambda: torch.var(x, 1)),
        "logsumexp rows": (lambda: ops.logsumexp(x, 1), lambda: torch.logsumexp(x, 1)),
        "softmax": (lambda: ops.softmax(x, 1), lambda: torch.softmax(x, 1)),
        "log_softmax": (lambda: ops.log_softmax(x, 1), lambda: torch.log_softmax(x, 1)),
        "layer_norm": (
            lambda: ops.layer_norm(x, n, w, b),
            lambda: F.layer_norm(x, (n,), w, b),
        ),
        "rms_norm": (lambda: ops.rms_norm(x, [n], w, 1e-6), lambda: F.rms_norm(x, [n], w, 1e-6)),
        "flip": (lambda: ops.flip(x, (1,)), lambda: torch.flip(x, (1,))),
        "scatter_add": (
            lambda: ops.scatter_add(x, 1, index, y),
            lambda: torch.scatter_add(x, 1, index, y),
        ),
        # Naiad's sort is stable; torch's default is not, and orders equal values' indices
        # differently (a dozen of a million random fp32 values): compare with its stable sort.
        "sort rows": (lambda: ops.sort(x, 1), lambda: torch.sort(x, dim=1, stable=True)),
        "topk rows": (lambda: ops.topk(x, 8, 1), lambda: torch.topk(x, 8, 1)),
    }


def _synchronize():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn, calls: int, clock=time.perf_counter) -> float:
    _synchronize()
    start = clock()
    for _ in range(calls):
        fn()
    _synchronize()
    return (clock() - start) / calls


def measure(
    ours, theirs, pairs: int, clock=time.perf_counter, around=contextlib.nullcontext, timer=timed
) -> tuple[float, float, float]:
    """(median ratio torch/Naiad, median Naiad s, median torch s): `pairs` alternating batches
    of each, about 20 ms of torch's calls a batch, timed by `timer(fn, calls, clock)` (`timed`:
    `clock` read between synchronizations); Naiad's calls run inside the context `around()`
    makes (small_ops.py's switch)."""
    with around():
        ours()
    theirs()
    calls = max(1, int(0.02 / max(timer(theirs, 3, clock), 1e-6)))
    ratios, mine, base = [], [], []
    for _ in range(pairs):
        with around():
            a = timer(ours, calls, clock)
        t = timer(theirs, calls, clock)
        ratios.append(t / a)
        mine.append(a)
        base.append(t)
    return statistics.median(ratios), statistics.median(mine), statistics.median(base)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--only", default="")
    parser.add_argument("--rows", type=int, help="rows of the operands (default --size)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--one-thread", action="store_true", help="one thread, CPU time")
    args = parser.parse_args()
    clock = time.perf_counter
    if args.one_thread:
        knobs.set_override("NAIAD_NUM_THREADS", 1)
        torch.set_num_threads(1)
        clock = time.thread_time
    chosen = set(filter(None, args.only.split(",")))
    where = (
        torch.cuda.get_device_name()
        if args.device == "cuda"
        else f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    )
    print(f"# {where}, torch {torch.__version__}, {torch.get_num_threads()} torch threads, fp32 "
          f"{args.rows or args.size}x{args.size}, {'thread CPU' if args.one_thread else 'wall'} "
          "time")  # fmt: skip
    print(f"{'op':<16} {'torch/naiad':>11} {'naiad ms':>9} {'torch ms':>9}")
    ratios = []
    for name, (ours, theirs) in cases(args.size, args.device, args.rows).items():
        if chosen and name not in chosen:
            continue
        ratio, mine, base = measure(ours, theirs, args.pairs, clock)
        ratios.append(ratio)
        print(f"{name:<16} {ratio:>11.2f} {mine * 1e3:>9.3f} {base * 1e3:>9.3f}", flush=True)
    if not ratios:
        names = ", ".join(cases(8, args.device))
        raise SystemExit(f"no op is named in --only {args.only!r}; the ops: {names}")
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"geometric mean of torch/naiad over {len(ratios)} ops: {geomean:.2f}")


if __name__ == "__main__":
    main()
