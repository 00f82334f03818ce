"""How the CPU back end's kernels scale with threads, against torch with as many (issue 18, item 4).

    PYTHONPATH=$PWD python3 bench/cpu/scaling.py [--threads 1,2,4,8,16] [--pairs 9]
        [--only add,softmax,matmul,attention_fp16,attention_f32] [--out DIR]

For each thread count (capped at the CPUs this process may run on), a fresh process runs the
kernels with `NAIAD_NUM_THREADS` and `torch.set_num_threads` both set to it: the pool's workers
and torch's OpenMP team are sized when they start, and a process that kept a larger team from an
earlier count would measure its leftovers. Each process times Naiad and torch alternately in wall
time (bench/cpu/kernels.py's `pairs`: the median of the per-pair ratios and of each side's
times). The table printed gives, per kernel and thread count, Naiad's and torch's median ms and
the ratio torch time / Naiad time (> 1: Naiad is faster), and each side's speed-up over its own
one-thread time; `--out DIR` writes it as scaling.md and, with the machine, scaling.json.

Kernels (bench/cpu/kernels.py's, the tutorials' own source): vector add f32 2^24, fused softmax
f32 4096x1024, the tutorial matmul f32 1024^3, tutorial 06's attention forward fp16 Z1 H8 N1024
D64 against `scaled_dot_product_attention`; and the attention forward on f32 at the same shape
through `naiad.ops.scaled_dot_product_attention` (tutorial 06 is fp16 only), as
bench/ops/attention.py measures it on the CPU.

A kernel that fails (or a process that runs past `CHILD_S`) is a row saying so, with its
traceback on stderr; the other rows are still measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ALL = ("add", "softmax", "matmul", "attention_fp16", "attention_f32")
CHILD_S = 150  # one thread count's process: about 40 s at one thread on the 2-core EPYC


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it (lscpu's "Model name")."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity), and no more than a cgroup's CPU quota
    allows: a container may see all of its host's CPUs and be given the time of a few."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
    except (OSError, ValueError):
        return cpus or 1
    if quota == "max":
        return cpus or 1
    return max(1, min(cpus or 1, int(quota) // int(period)))


def bench_attention_f32(count: int) -> dict:
    """naiad.ops.scaled_dot_product_attention on f32 Z1 H8 N1024 D64 (non-causal, forward)
    against torch's on the same tensors."""
    import kernels
    import torch

    import naiad.ops as ops

    q, k, v = (torch.randn(1, 8, 1024, 64) for _ in range(3))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    out = ops.scaled_dot_product_attention(q, k, v)
    ref = sdpa(q.double(), k.double(), v.double())
    assert ((out.double() - ref).norm() / ref.norm()) < 1e-4
    return {
        "attention fwd f32 Z1 H8 N1024 D64 (naiad.ops)": kernels.pairs(
            lambda: ops.scaled_dot_product_attention(q, k, v), lambda: sdpa(q, k, v), count
        )
    }


def child(threads: int, only: list[str], count: int) -> None:
    """Run the chosen kernels at `threads` threads (NAIAD_NUM_THREADS is already set) and print
    their results as one JSON line."""
    import kernels  # this script's directory is first on sys.path
    import torch

    torch.set_num_threads(threads)
    benches = dict(kernels.BENCHES, attention_f32=bench_attention_f32)
    results = {}
    for name in only:
        try:
            results.update(benches[name](count))
        except Exception as error:  # reported in the table; the other kernels still run
            traceback.print_exc()
            results[name] = {"error": f"{type(error).__name__}: {error}"[:200]}
    print(json.dumps(results), flush=True)


def measure(threads: int, only: list[str], count: int) -> dict:
    """The results of a fresh process at `threads` threads."""
    env = dict(os.environ)
    env.update(
        NAIAD_NUM_THREADS=str(threads),
        OMP_NUM_THREADS=str(threads),
        NAIAD_BACKEND="cpu",
    )
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # kernels.py says why
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(threads)]
    command += ["--only", ",".join(only), "--pairs", str(count)]
    try:
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, timeout=CHILD_S)
    except subprocess.TimeoutExpired:
        return {name: {"error": f"no result within {CHILD_S} s"} for name in only}
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {name: {"error": f"the process exited with {done.returncode}"} for name in only}
    return json.loads(lines[-1])


def table(rows: dict, counts: list[int]) -> list[str]:
    """Markdown: one row per kernel and thread count."""
    lines = [
        "| kernel | threads | Naiad ms | torch ms | torch / Naiad (spread) "
        "| Naiad speed-up | torch speed-up |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, by_count in rows.items():
        one = by_count.get(counts[0])
        for threads in counts:
            r = by_count.get(threads, {"error": "not measured"})
            if "error" in r:
                lines.append(f"| {label} | {threads} | failed: {r['error']} | | | | |")
                continue
            if one is None or "error" in one:
                one = r
            lo, hi = r["spread"]
            ups = (one["naiad_ms"] / r["naiad_ms"], one["base_ms"] / r["base_ms"])
            lines.append(
                f"| {label} | {threads} | {r['naiad_ms']:.3f} | {r['base_ms']:.3f} | "
                f"**{r['ratio']:.2f}** ({lo:.2f}-{hi:.2f}) | {ups[0]:.2f}x | {ups[1]:.2f}x |"
            )
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2,4,8,16")
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--only", default=",".join(ALL))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    only = [name for name in args.only.split(",") if name]
    if unknown := set(only) - set(ALL):
        parser.error(f"unknown kernels {sorted(unknown)}; choose from {','.join(ALL)}")
    if args.child:
        child(args.child, only, args.pairs)
        return
    cpus = usable_cpus()
    counts = sorted({min(int(t), cpus) for t in args.threads.split(",")})
    import torch

    header = (
        f"{time.strftime('%Y-%m-%d')} {cpu_model()}, {cpus} CPUs usable "
        f"({os.cpu_count()} online), torch {torch.__version__}, Python {sys.version.split()[0]}, "
        f"{args.pairs} pairs per row, wall time"
    )
    print(f"# {header}", flush=True)
    rows: dict[str, dict[int, dict]] = {}
    started = time.perf_counter()
    for threads in counts:
        for label, result in measure(threads, only, args.pairs).items():
            rows.setdefault(label, {})[threads] = result
        print(f"# {threads} threads done at {time.perf_counter() - started:.0f} s", flush=True)
    lines = table(rows, counts)
    print("\n".join(lines))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "scaling.md").write_text(f"{header}\n\n" + "\n".join(lines) + "\n")
        machine = {
            "cpu": cpu_model(),
            "usable_cpus": cpus,
            "online_cpus": os.cpu_count(),
            "torch": torch.__version__,
            "python": sys.version.split()[0],
            "commit": _commit(),
            "pairs": args.pairs,
        }
        rows_json = {label: {str(t): r for t, r in by.items()} for label, by in rows.items()}
        text = json.dumps({"machine": machine, "rows": rows_json}, indent=1)
        (args.out / "scaling.json").write_text(text + "\n")
        print(f"# written: {args.out / 'scaling.md'}, {args.out / 'scaling.json'}")


def _commit() -> str:
    """The checkout's commit, or "" where there is no git."""
    try:
        done = subprocess.run(
            ["git", "-C", str(HERE), "rev-parse", "HEAD"], capture_output=True, text=True
        )
    except OSError:
        return ""
    return done.stdout.strip()


if __name__ == "__main__":
    main()
