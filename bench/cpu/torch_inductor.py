"""torch.compile of a transformer block on the CPU: Inductor's Triton kernels compiled by Naiad
(`cpu_backend="triton"` under `python -m naiad.run`) against Inductor's default C++ back end,
and a user kernel launched inside torch.compile(fullgraph=True) against its eager launch.

    python bench/cpu/torch_inductor.py [--batch 8 --seq 128 --dim 256 --heads 4 --reps 20]
    python bench/cpu/torch_inductor.py --train     # a training step: forward and backward
    python bench/cpu/torch_inductor.py --device cuda [--train]

On a GPU (`--device cuda`) the block is compiled by Inductor for CUDA, its Triton kernels
compiled by Naiad (under `python -m naiad.run`) against the same kernels compiled by Triton
(Inductor's default where Triton is installed), and eager; each timed call ends with a
synchronization.

Each configuration runs in a fresh process with empty Inductor and Naiad caches, so the compile
time (the first call of the compiled function) is cold. The block is the forward pass of a
pre-norm transformer block under torch.no_grad(); times are medians of `--reps` calls after
3 warm-ups, in wall time and in the CPU time of the whole process. Prints one line per
configuration as it ends, with the wall time of its process (`child_s`: start-up, compile,
timing and exit); a configuration that fails or outlives `--child-timeout` seconds prints
`failed` and the tail of its stderr, and the others still run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE.parents[1] / "tests" / "torch" / "programs"


def measure(args) -> None:
    """In the child process: compile, time, compare with eager; print `key: value` lines."""
    sys.path.insert(0, str(PROGRAMS))
    import torch
    import torch._inductor.config as inductor_config
    from inductor_cpu import Block

    # (importing the tests' program chose "triton"; the C++ back end is Inductor's default)
    inductor_config.cpu_backend = "triton" if args.backend == "naiad" else "cpp"
    torch.manual_seed(0)
    block = Block(args.dim, args.heads).to(args.device)
    x = torch.randn(args.batch, args.seq, args.dim, device=args.device)
    sync = torch.cuda.synchronize if args.device == "cuda" else lambda: None
    if args.train:
        return measure_training_step(args, block, x, sync)
    block.eval()
    with torch.no_grad():
        fn = block if args.backend == "eager" else torch.compile(block, fullgraph=True)
        start = time.perf_counter()
        got = fn(x)
        sync()
        print(f"compile_s: {time.perf_counter() - start:.2f}")
        print(f"max_err: {(got - block(x)).abs().max().item():.2e}")
        for _ in range(3):
            fn(x)
        sync()
        times, cpu_times = [], []
        for _ in range(args.reps):
            start, cpu_start = time.perf_counter(), time.process_time()
            fn(x)
            sync()
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu_start)
    print(f"ms: {statistics.median(times) * 1e3:.3f}")
    # CPU time of every thread of the process: less disturbed than wall time by other jobs on
    # a shared machine, though it counts work, not latency.
    print(f"cpu_ms: {statistics.median(cpu_times) * 1e3:.3f}")


def measure_training_step(args, block, x, sync) -> None:
    """A training step's forward and backward (loss: the sum of the block's output); the
    error is the largest difference of a parameter's gradient from eager's."""
    import torch

    def step(fn):
        block.zero_grad()
        fn(x).sum().backward()
        return [p.grad.clone() for p in block.parameters()]

    expected = step(block)
    fn = block if args.backend == "eager" else torch.compile(block, fullgraph=True)
    start = time.perf_counter()
    got = step(fn)
    sync()
    print(f"compile_s: {time.perf_counter() - start:.2f}")
    print(f"max_err: {max((g - e).abs().max().item() for g, e in zip(got, expected)):.2e}")
    for _ in range(3):
        step(fn)
    times, cpu_times = [], []
    for _ in range(args.reps):
        start, cpu_start = time.perf_counter(), time.process_time()
        step(fn)
        sync()
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
    print(f"ms: {statistics.median(times) * 1e3:.3f}")
    print(f"cpu_ms: {statistics.median(cpu_times) * 1e3:.3f}")


def run_child(backend: str, options: list[str], timeout: float) -> dict:
    """One configuration's `key: value` lines, and `child_s` (its process's wall time). A child
    that fails or outlives `timeout` seconds gives `failed` and the tail of its stderr instead,
    so that one configuration's failure does not hide the others' rows."""
    with tempfile.TemporaryDirectory() as inductor_cache, tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=inductor_cache, NAIAD_CACHE_DIR=cache)
        env.pop("NAIAD_INTERPRET", None)
        prefix = ["-m", "naiad.run"] if backend == "naiad" else []
        command = [sys.executable, *prefix, __file__, "--child", backend, *options]
        start = time.perf_counter()
        try:
            done = subprocess.run(
                command, env=env, capture_output=True, text=True, check=False, timeout=timeout
            )
        except subprocess.TimeoutExpired as expired:
            stderr = expired.stderr or b""
            stderr = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
            return {"failed": f"no result within {timeout:.0f} s", "stderr": stderr[-3000:]}
    seen = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    seen["child_s"] = f"{time.perf_counter() - start:.1f}"
    if done.returncode != 0:
        return {**seen, "failed": f"exit status {done.returncode}", "stderr": done.stderr[-3000:]}
    return seen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--train", action="store_true", help="a training step, fwd + bwd")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--child", choices=("eager", "cpp", "triton", "naiad"))
    parser.add_argument("--backend", default=None)
    parser.add_argument(
        "--child-timeout", type=float, default=300, help="seconds each configuration may take"
    )
    args = parser.parse_args()
    if args.child:
        args.backend = args.child
        measure(args)
        return
    names = ("batch", "seq", "dim", "heads", "reps", "device")
    options = [f"--{k}={getattr(args, k)}" for k in names]
    options += ["--train"] if args.train else []
    what = "training step" if args.train else "forward"
    print(
        f"block {what} on {args.device}: batch {args.batch}, seq {args.seq}, dim {args.dim}, "
        f"heads {args.heads}"
    )
    backends = ("eager", "triton", "naiad") if args.device == "cuda" else ("eager", "cpp", "naiad")
    for backend in backends:
        seen = run_child(backend, options, args.child_timeout)
        stderr = seen.pop("stderr", None)
        print(f"{backend}: {seen}", flush=True)
        if stderr is not None:
            print(f"{backend} stderr (tail):\n{stderr}", flush=True)


if __name__ == "__main__":
    main()
