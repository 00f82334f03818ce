"""Small norm and activation ops, forward + backward, through naiad.ops against torch eager on
the CPU: what a model's layer does to a few rows (issue 18: rows <= 16, hidden <= 128).

    PYTHONPATH=$PWD python bench/ops/small_ops.py [--pairs 15] [--only rms_norm,swiglu,softmax]
                                                  [--shapes 16x128,4x64]

Each case runs the forward on leaf tensors that require gradients and the backward with a fixed
random output gradient (`torch.autograd.grad`), warm (the kernels are compiled in the warm-up):
rms_norm and softmax through `naiad.ops.rms_norm` / `naiad.ops.softmax` (autograd functions: a
launch forward, one or two backward); SwiGLU (`silu(gate) * up`) as a library writes it, torch
code run with Naiad's silu and mul switched in (`naiad.ops.use`: torch's autograd calls Naiad's
mul twice and Naiad's silu_backward, torch's own before 07a2373); and both as Triton kernel
libraries write them
(library_style.py: an autograd function per op whose directions launch `kernel[(rows,)](...)`,
a program per row; rows "kernel[grid]"), against the same torch code. Timing as
bench/ops/cpu_ops.py's (alternating batches of calls, the Naiad side's batch inside its switch;
the median of the per-pair ratios torch time / Naiad time: > 1 means Naiad is faster), in
microseconds per call. `--one-thread` runs both sides
on one thread (`NAIAD_NUM_THREADS=1`, `torch.set_num_threads(1)`) in the thread's CPU time, as
bench/cpu/kernels.py's option does: on a shared machine, wall time also measures the neighbours.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # bench/cpu/kernels.py says why
os.environ.setdefault("NAIAD_BACKEND", "cpu")

import cpu_ops  # bench/ops/, the script's directory, is first on sys.path
import library_style
import torch
import torch.nn.functional as F

import naiad.ops as ops
from naiad import knobs

SWIGLU_OPS = ["silu", "mul"]


def swiglu(gate, up):
    return F.silu(gate) * up


def cases(rows: int, hidden: int) -> dict:
    """name -> (Naiad's forward + backward, torch's, the switch Naiad's side runs in), on shared
    random operands."""
    g = torch.Generator().manual_seed(0)

    def leaf(*shape):
        return torch.randn(*shape, generator=g).requires_grad_()

    x, gate, up = leaf(rows, hidden), leaf(rows, hidden), leaf(rows, hidden)
    weight = leaf(hidden)
    grad = torch.randn(rows, hidden, generator=g)

    def fwd_bwd(forward, inputs):
        def run():
            return torch.autograd.grad(forward(), inputs, grad)

        return run

    swiglu_both = fwd_bwd(lambda: swiglu(gate, up), (gate, up))
    torch_rms = fwd_bwd(lambda: F.rms_norm(x, [hidden], weight, 1e-6), (x, weight))
    return {
        "rms_norm": (
            fwd_bwd(lambda: ops.rms_norm(x, [hidden], weight, 1e-6), (x, weight)),
            torch_rms,
            contextlib.nullcontext,
        ),
        "swiglu": (swiglu_both, swiglu_both, lambda: ops.use(include=SWIGLU_OPS)),
        "softmax": (
            fwd_bwd(lambda: ops.softmax(x, 1), (x,)),
            fwd_bwd(lambda: torch.softmax(x, 1), (x,)),
            contextlib.nullcontext,
        ),
        "rms_norm kernel[grid]": (
            fwd_bwd(lambda: library_style.RMSNorm.apply(x, weight, 1e-6), (x, weight)),
            torch_rms,
            contextlib.nullcontext,
        ),
        "swiglu kernel[grid]": (
            fwd_bwd(lambda: library_style.SwiGLU.apply(gate, up), (gate, up)),
            fwd_bwd(lambda: swiglu(gate, up), (gate, up)),
            contextlib.nullcontext,
        ),
    }


def check(ours, theirs, switch) -> None:
    """Both sides' gradients agree (fp32, random inputs)."""
    with switch():
        mine = ours()
    for value, reference in zip(mine, theirs()):
        torch.testing.assert_close(value, reference, rtol=1e-4, atol=1e-5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--only", default="")
    parser.add_argument("--shapes", default="16x128,4x64")
    parser.add_argument("--one-thread", action="store_true", help="one thread, CPU time")
    args = parser.parse_args()
    clock = time.perf_counter
    if args.one_thread:  # kernels.py's --one-thread: what each side does, whoever shares the CPU
        knobs.set_override("NAIAD_NUM_THREADS", 1)
        torch.set_num_threads(1)
        clock = time.thread_time
    chosen = set(filter(None, args.only.split(",")))
    where = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    print(f"# {where}, torch {torch.__version__}, {torch.get_num_threads()} torch threads, fp32, "
          f"{'thread CPU' if args.one_thread else 'wall'} time")  # fmt: skip
    print(f"{'op, forward + backward':<28} {'torch/naiad':>11} {'naiad us':>9} {'torch us':>9}")
    for shape in args.shapes.split(","):
        rows, hidden = map(int, shape.split("x"))
        for name, (ours, theirs, switch) in cases(rows, hidden).items():
            if chosen and name not in chosen:
                continue
            check(ours, theirs, switch)
            ratio, mine, base = cpu_ops.measure(ours, theirs, args.pairs, clock, switch)
            label = f"{name} {rows}x{hidden}"
            print(f"{label:<28} {ratio:>11.2f} {mine * 1e6:>9.1f} {base * 1e6:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
