"""Host time of naiad.ops calls on tiny tensors: what Python costs per op call, apart from the
kernel (issue 19: a Llama-style training step on the H200 was bound by the host, ~200 op calls
at tens of microseconds each).

    PYTHONPATH=$PWD python bench/ops/host_time.py [--rounds 7] [--calls 300] [--only mm,add]
                                                  [--device cpu|cuda] [--profile mm]

Each case calls one op on tensors so small that its kernel costs next to nothing (a 16 x 16
product, 1000 additions, ...), warm (compiled in the warm-up), `--calls` times per round; the
best of `--rounds` rounds, in microseconds per call, on one thread (thread CPU time on the CPU,
where the neighbours of a shared machine would count in wall time; wall time after a device
synchronization on CUDA). torch eager's time for the same call is printed beside it. The Python
code of a call is the same on both devices, so the CPU finds what a GPU step pays for.
`--profile NAME` runs that case under cProfile instead and prints the 25 costliest functions.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("NAIAD_NUM_THREADS", "1")

import torch
import torch.nn.functional as F

import naiad.ops as ops


def cases(device: str) -> dict:
    """name -> (Naiad's call, torch's call), on shared random operands."""
    g = torch.Generator().manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, generator=g).to(device)

    a, b = randn(16, 16), randn(16, 16)
    x, y = randn(1000), randn(1000)
    rows, column = randn(8, 64), randn(8, 1)
    weight = randn(64)
    batch_a, batch_b = randn(4, 16, 16), randn(4, 16, 16)
    return {
        "mm 16x16": (lambda: ops.mm(a, b), lambda: torch.mm(a, b)),
        "bmm 4x16x16": (lambda: ops.bmm(batch_a, batch_b), lambda: torch.bmm(batch_a, batch_b)),
        "add 1000": (lambda: ops.add(x, y), lambda: torch.add(x, y)),
        "mul 8x64 by 8x1": (lambda: ops.mul(rows, column), lambda: torch.mul(rows, column)),
        "silu 1000": (lambda: ops.silu(x), lambda: F.silu(x)),
        "sum 8x64 dim 1": (lambda: ops.sum(rows, 1), lambda: torch.sum(rows, 1)),
        "mean 8x64 dims [-1]": (  # a dim list, as ATen passes it
            lambda: ops.mean(rows, [-1], True),
            lambda: torch.mean(rows, [-1], True),
        ),
        "add_ 8x64 by 64": (lambda: ops.add_(rows, weight), lambda: rows.add_(weight)),
        "softmax 8x64": (lambda: ops.softmax(rows, -1), lambda: torch.softmax(rows, -1)),
        "rms_norm 8x64": (
            lambda: ops.rms_norm(rows, [64], weight, 1e-6),
            lambda: F.rms_norm(rows, [64], weight, 1e-6),
        ),
    }


def per_call_us(call, rounds: int, calls: int, clock, sync) -> float:
    """The best round's microseconds per call."""
    for _ in range(20):
        call()
    sync()
    best = float("inf")
    for _ in range(rounds):
        start = clock()
        for _ in range(calls):
            call()
        sync()
        best = min(best, (clock() - start) / calls)
    return best * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--only", default="")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--profile", default="", help="a case to run under cProfile")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.device == "cpu":
        clock, sync = time.thread_time, lambda: None
    else:
        clock, sync = time.perf_counter, torch.cuda.synchronize
    chosen = set(filter(None, args.only.split(",")))
    table = cases(args.device)
    if args.profile:
        call = table[args.profile][0]
        per_call_us(call, 1, 10, clock, sync)
        profile = cProfile.Profile()
        profile.runcall(lambda: [call() for _ in range(args.calls)])
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
        return
    where = platform.processor() or platform.machine()
    print(f"# {where}, torch {torch.__version__}, {args.device}, one thread, best of "
          f"{args.rounds} x {args.calls} calls")  # fmt: skip
    print(f"{'op':<22} {'naiad us':>9} {'torch us':>9}")
    for name, (ours, theirs) in table.items():
        if chosen and not any(name.startswith(c) for c in chosen):
            continue
        mine = per_call_us(ours, args.rounds, args.calls, clock, sync)
        base = per_call_us(theirs, args.rounds, args.calls, clock, sync)
        print(f"{name:<22} {mine:>9.1f} {base:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
