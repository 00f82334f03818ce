"""Compile latency of the CPU back end, issue 18's rows, in CPU time (the machine is shared).

    python bench/cpu/compile_latency.py [--repeats 5] [--processes 7]

1. Cold compile of tutorial 06's attention forward (examples/06_fused_attention.py) in a process
   that has imported naiad and torch and compiled another config before: each repeat forgets
   the compiled kernel and compiles again, caches ignored (NAIAD_ALWAYS_COMPILE), every launch
   compiled (NAIAD_CPU_TIERING=always-compile); non-causal BLOCK_M x BLOCK_N 64x32 and 64x64,
   causal 64x64; Z1 H2 N128 D64 fp16, the output checked against float64.
2. A cached kernel's first launch in a new process: `python -c` processes that import naiad and
   launch a vector add whose compiled kernel, TTIR and runtime objects the disk cache holds
   (a private cache directory, filled by two runs first); the launch's CPU time, imports
   excluded, the output checked against NumPy.
Prints the medians and the spread of each.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FIRST_LAUNCH = """
import sys, time
import numpy as np
import naiad
import naiad.language as tl

@naiad.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)

x, y = np.random.default_rng(int(sys.argv[1])).standard_normal((2, 1000), dtype=np.float32)
out = np.full_like(x, np.nan)
start = time.process_time()
add[(4,)](x, y, out, 1000, BLOCK=256)
spent = time.process_time() - start
np.testing.assert_array_equal(out, x + y)
print(spent)
"""


def attention_compiles(repeats: int) -> dict:
    """CPU seconds of each cold compile, per config."""
    os.environ["NAIAD_CPU_TIERING"] = "always-compile"
    os.environ["NAIAD_ALWAYS_COMPILE"] = "1"
    os.environ.setdefault("NAIAD_CACHE_DIR", tempfile.mkdtemp(prefix="naiad-bench-"))
    import importlib.util

    import torch

    import naiad

    spec = importlib.util.spec_from_file_location(
        "attention", ROOT / "examples/06_fused_attention.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn((1, 2, 128, 64), generator=generator).half() for _ in range(3))
    module.attention(q, k, v, False, 0.5, config=naiad.Config({"BLOCK_M": 32, "BLOCK_N": 32}))
    results = {}
    for block_m, block_n, causal in ((64, 32, False), (64, 64, False), (64, 64, True)):
        config = naiad.Config({"BLOCK_M": block_m, "BLOCK_N": block_n})
        times = []
        for _ in range(repeats):
            module._attn_fwd.fn.forget_compiled()
            start = time.process_time()
            out, _ = module.attention(q, k, v, causal, 0.5, config=config)
            times.append(time.process_time() - start)
        expected, _ = module.reference(q, k, v, causal, 0.5)
        error = float(abs(out.double().numpy() - expected).max())
        assert error < 4e-3, error
        results[f"{block_m}x{block_n} {'causal' if causal else 'non-causal'}"] = times
    return results


def first_launches(processes: int) -> list[float]:
    """CPU seconds of the first launch of a cached kernel, one new process each."""
    with tempfile.TemporaryDirectory(prefix="naiad-bench-") as directory:
        script = Path(directory) / "first_launch.py"  # a file: the kernel's source is read
        script.write_text(FIRST_LAUNCH)
        env = {**os.environ, "NAIAD_CACHE_DIR": str(Path(directory) / "cache")}
        env.pop("NAIAD_ALWAYS_COMPILE", None)

        def run(seed: int) -> float:
            done = subprocess.run(
                [sys.executable, str(script), str(seed)],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            return float(done.stdout.split()[-1])

        run(0)  # compiles (in the background of an interpreted launch), stores the kernel
        run(1)  # loads it, and builds and stores the worker pool's object
        return [run(seed) for seed in range(2, 2 + processes)]


def _row(name: str, seconds: list[float], unit: float, label: str) -> str:
    values = sorted(s * unit for s in seconds)
    return (
        f"  {name:28s} median {statistics.median(values):7.1f} {label}"
        f"  ({values[0]:.1f}-{values[-1]:.1f}, {len(values)} runs)"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--processes", type=int, default=7)
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, CPU time")
    print("a cached kernel's first launch in a new process (imports excluded):")
    print(_row("vector add", first_launches(args.processes), 1e3, "ms"))
    print("cold compile of tutorial 06's attention forward in a warm process:")
    for name, times in attention_compiles(args.repeats).items():
        print(_row(name, times, 1e3, "ms"))


if __name__ == "__main__":
    main()
