"""Autotuning tutorial 03's matmul over its eight NVIDIA configs, Naiad against Triton (issue 15):
the first call's time with fresh caches, and the speed of the config each side picks.

    python bench/gpu/autotune_first_call.py [--rounds 2] [--size 4096]

Each side runs in a process of its own (so neither finds the other's compiled kernels, nor its
own from an earlier round), with an empty cache directory (`NAIAD_CACHE_DIR`, `TRITON_CACHE_DIR`)
and `CUDA_CACHE_DISABLE=1`; the sides alternate `--rounds` times. In each, tutorial 03's kernel
(examples/03_matmul.py, its `naiad` imports swapped for Triton's in Triton's copy) is wrapped in
the compiler's own `autotune` over the eight tilings tutorial 03 offers on NVIDIA GPUs
(tc_bench/tables.py), keyed on M, N, K, with the compiler's default benchmarker. Timed: the
first launch on fp16 (size x size) operands to completion (every config compiled and
benchmarked, the best launched), the chosen config, its result checked against torch, and the
chosen config's TFLOP/s (`triton.testing.do_bench` median). Printed: both sides' first-call
seconds (best over rounds) and the ratio (< 1: Naiad faster), each side's pick and the
TFLOP/s of the picks, Naiad's over Triton's (the goal: within 3 %).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tc_bench.tables import MATMUL_CONFIGS  # noqa: E402  (plain data: no torch needed)


def one_side(compiler: str, size: int) -> dict:
    """Tune and time in this process (see the module doc), as a dict."""
    import torch
    from kernels import tutorial  # bench/gpu/kernels.py: the example through either compiler

    module = tutorial("03_matmul", compiler)
    triton = module.triton
    configs = []
    for c in MATMUL_CONFIGS:
        sizes = {"BLOCK_SIZE_M": c.block_m, "BLOCK_SIZE_N": c.block_n, "BLOCK_SIZE_K": c.block_k}
        sizes["GROUP_SIZE_M"] = 8
        configs.append(triton.Config(sizes, num_warps=c.num_warps, num_stages=c.num_stages))
    tuned = triton.autotune(configs=configs, key=["M", "N", "K"])(module.matmul_kernel.fn)
    generator = torch.Generator(device="cuda").manual_seed(3)
    a, b = (torch.randn(size, size, device="cuda", generator=generator).half() for _ in "ab")
    c = torch.empty(size, size, device="cuda", dtype=torch.float16)

    def launch(kernel, **meta):
        def grid(m):
            return (triton.cdiv(size, m["BLOCK_SIZE_M"]) * triton.cdiv(size, m["BLOCK_SIZE_N"]),)

        kernel[grid](a, b, c, size, size, size, size, 1, size, 1, size, 1, ACTIVATION="", **meta)

    torch.cuda.synchronize()
    start = time.perf_counter()
    launch(tuned)
    torch.cuda.synchronize()
    first = time.perf_counter() - start
    error = ((c.float() - (a.float() @ b.float())).norm() / (a.float() @ b.float()).norm()).item()
    best = tuned.best_config
    ms = triton.testing.do_bench(lambda: launch(module.matmul_kernel.fn, **best.all_kwargs()))
    kwargs = best.kwargs
    label = (f"{kwargs['BLOCK_SIZE_M']}x{kwargs['BLOCK_SIZE_N']}x{kwargs['BLOCK_SIZE_K']} "
             f"w{best.num_warps} s{best.num_stages}")  # fmt: skip
    return {"side": compiler, "first_s": round(first, 2), "config": label,
            "tflops": round(2 * size**3 / ms * 1e-9, 1), "error": error}  # fmt: skip


def run_side(compiler: str, size: int) -> dict:
    """`one_side` in a fresh process with empty caches."""
    cache = tempfile.mkdtemp(prefix=f"autotune-{compiler}-")
    env = dict(os.environ, NAIAD_CACHE_DIR=cache, TRITON_CACHE_DIR=cache, CUDA_CACHE_DISABLE="1")
    command = [sys.executable, __file__, "--side", compiler, "--size", str(size)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        print(f"{compiler}: failed\n{done.stderr[-3000:]}", flush=True)
        return {}
    return json.loads(lines[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--side", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        print(json.dumps(one_side(args.side, args.size)), flush=True)
        return 0
    results = {"naiad": [], "triton": []}
    for round_ in range(args.rounds):
        for side in results:
            found = run_side(side, args.size)
            if found:
                results[side].append(found)
                print(f"round {round_}: {found}", flush=True)
    if not all(results.values()):
        return 1
    naiad, triton = (min(results[s], key=lambda r: r["first_s"]) for s in ("naiad", "triton"))
    fastest = {s: max(r["tflops"] for r in results[s]) for s in results}
    print("\n| side | first call s (best) | picks | TFLOP/s of the pick (best) |")
    print("|---|---|---|---|")
    for side, row in (("naiad", naiad), ("triton", triton)):
        picks = ", ".join(sorted({r["config"] for r in results[side]}))
        print(f"| {side} | {row['first_s']} | {picks} | {fastest[side]} |")
    first = naiad["first_s"] / triton["first_s"]
    speed = fastest["naiad"] / fastest["triton"]
    print(f"\nfirst call Naiad / Triton {first:.2f}; the picks' speed Naiad / Triton {speed:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
