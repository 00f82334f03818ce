"""The GPU Llama step's op calls, one by one: each Naiad overload's host time inside the step,
the same calls again alone, and torch eager's kernel for them alone (issue 19: the step on the
H200 is bound by the host, and what a call costs inside a step is not what it costs alone).

    PYTHONPATH=$PWD python bench/ops/step_ops_gpu.py [--steps 10] [--calls 20] [--rounds 5]

The model and its sizes are op_goals' GPU case (goal_cases.model_cases: bf16, 4 layers of 1024,
8x512 tokens). Every Naiad ATen implementation is timed where the switch calls it (thread CPU
time: the main thread's in the forward, autograd's device thread's in the backward), over
`--steps` steps after three warm-up steps, and the last step's calls are recorded with their
arguments. Each recorded call is then made `--calls` times in a row, `--rounds` times, with no
gradient recording, through Naiad and through `torch.ops.aten` without the switch (eager's
kernel), keeping each one's best round. The table gives, by overload, the calls a step, the
median call inside the step, alone and eager's alone, in microseconds, and the microseconds a
step of the calls inside it: where inside is far above alone, the step's other work evicted
what the call's Python reads (or, for the products, the step's new activations needed new
tensor maps: runtime/tensor_maps.py).
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

import torch

import naiad.ops as ops
from naiad.ops import registry

sys.path.insert(0, str(Path(__file__).resolve().parent))
from goal_cases import model_cases


def record_step(step, steps: int):
    """({overload: [seconds a call inside the step]}, [(overload, fn, args, kwargs)] of the
    last step)."""
    spent, recorded, recording = collections.defaultdict(list), [], [False]

    def timed(name, fn):
        def call(*args, **kwargs):
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name].append(time.thread_time() - start)
                if recording[0]:
                    recorded.append((name, fn, args, kwargs))

        return call

    original = dict(registry._TABLE)
    registry._TABLE.update({name: timed(name, fn) for name, fn in original.items()})
    try:
        with ops.use():
            for _ in range(3):
                step()
            torch.cuda.synchronize()
            spent.clear()
            for i in range(steps):
                recording[0] = i == steps - 1
                step()
            torch.cuda.synchronize()
    finally:
        registry._TABLE.update(original)
    return spent, recorded


def alone_us(fn, args, kwargs, calls: int, rounds: int) -> float:
    """The best round's host microseconds a call, `calls` calls in a row."""
    best = float("inf")
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.thread_time()
        for _ in range(calls):
            fn(*args, **kwargs)
        best = min(best, (time.thread_time() - start) / calls)
    return best * 1e6


def eager_us(name: str, args, kwargs, calls: int, rounds: int) -> float:
    """`alone_us` of torch's own kernel for the overload; NaN where a call with these arguments
    does not run twice as recorded (an in-place op on a tensor autograd saved, ...)."""
    op, _, overload = name.partition(".")
    aten = getattr(getattr(torch.ops.aten, op), overload or "default")
    try:
        return alone_us(aten, args, kwargs, calls, rounds)
    except RuntimeError:
        return float("nan")


def _median(values) -> float:
    """The median, NaN for none: an overload the other steps called and the recorded one did
    not (seen once: the gradients' `add_`)."""
    return statistics.median(values) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    (case,) = model_cases(0, "cuda")
    spent, recorded = record_step(case.ours, args.steps)
    alone, eager = collections.defaultdict(list), collections.defaultdict(list)
    with torch.no_grad():
        with ops.use():
            for name, fn, call_args, kwargs in recorded:
                alone[name].append(alone_us(fn, call_args, kwargs, args.calls, args.rounds))
        for name, _, call_args, kwargs in recorded:
            eager[name].append(eager_us(name, call_args, kwargs, args.calls, args.rounds))
    rows = []
    for name, times in spent.items():
        per_step = len(times) / args.steps
        inside = statistics.median(times) * 1e6
        rows.append((inside * per_step, name, per_step, inside, _median(alone[name]),
                     _median(eager[name])))  # fmt: skip
    rows.sort(reverse=True)
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}; {case.name}")
    alone_sum = sum(r[2] * r[4] for r in rows)
    eager_sum = sum(r[2] * r[5] for r in rows if r[5] == r[5])  # (not NaN)
    print(f"inside the step {sum(r[0] for r in rows):.0f} us a step; alone {alone_sum:.0f}; "
          f"eager alone {eager_sum:.0f}")  # fmt: skip
    print(f"{'overload':<36} {'calls':>6} {'inside':>8} {'alone':>8} {'eager':>8} {'us/step':>8}")
    for per_step, name, calls, inside, mine, base in rows:
        print(f"{name:<36} {calls:>6.0f} {inside:>8.1f} {mine:>8.1f} {base:>8.1f} {per_step:>8.0f}")


if __name__ == "__main__":
    main()
