"""Tiered execution on the CPU (runtime/cpu_tiering.py): what a user waits for when new small
kernels are launched, with NAIAD_CPU_TIERING=auto against always-compile.

Each run is a fresh process with an empty cache: it launches `--kernels` new specializations
(an elementwise kernel, a row reduction, a small dot, a loop; each at several block sizes), each
`--launches` times in a row, checks every output against NumPy, and reports the first launch's
latency (median over kernels) and the wall time from the first launch to the process's exit
(which finishes the background compile under way).

    .venv/bin/python bench/cpu/tiering.py --kernels 16 --launches 1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
import numpy as np
import naiad
import naiad.language as tl


@naiad.jit
def scale_add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    values = tl.load(x + offs, mask=mask) * 3.0 + tl.load(y + offs, mask=mask)
    tl.store(out + offs, values, mask=mask)


@naiad.jit
def row_sum(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    values = tl.load(x + tl.program_id(0) * n + offs, mask=offs < n, other=0.0)
    tl.store(out + tl.program_id(0), tl.sum(values * values, axis=0))


@naiad.jit
def small_dot(a, b, c, N: tl.constexpr):
    idx = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(c + idx, tl.dot(tl.load(a + idx), tl.load(b + idx)))


@naiad.jit
def looped(x, out, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x + offs, mask=offs < n, other=0.0)
    tl.store(out + tl.arange(0, BLOCK), acc)


def cases(rng):
    for block in (16, 32, 64, 128):
        n = 3 * block - 5
        x, y = rng.standard_normal((2, n), np.float32)
        yield (lambda x=x, y=y, n=n, block=block: _run(scale_add, (3,), x, y, n, block),
               x * np.float32(3) + y)
        rows = rng.standard_normal((4, block), np.float32)
        yield (lambda rows=rows, block=block: _run_sum(rows, block),
               (rows.astype(np.float64) ** 2).sum(1))
        side = max(16, block // 2)
        a, b = rng.standard_normal((2, side, side), np.float32)
        yield (lambda a=a, b=b: _run_dot(a, b), a.astype(np.float64) @ b)
        z = rng.standard_normal(4 * block, np.float32)
        yield (lambda z=z, block=block: _run_loop(z, block), z.reshape(4, block).sum(0))


def _run(kernel, grid, x, y, n, block):
    out = np.full(n, np.nan, np.float32)
    kernel[grid](x, y, out, n, BLOCK=block)
    return out


def _run_sum(rows, block):
    out = np.full(rows.shape[0], np.nan, np.float32)
    row_sum[(rows.shape[0],)](rows, out, rows.shape[1], BLOCK=block)
    return out


def _run_dot(a, b):
    c = np.full(a.shape, np.nan, np.float32)
    small_dot[(1,)](a, b, c, N=a.shape[0])
    return c


def _run_loop(z, block):
    out = np.full(block, np.nan, np.float32)
    looped[(1,)](z, out, z.size, BLOCK=block)
    return out


kernels, launches = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
firsts = []
start = time.perf_counter()
for i, (run, expected) in enumerate(cases(rng)):
    if i == kernels:
        break
    for launch in range(launches):
        t = time.perf_counter()
        out = run()
        if launch == 0:
            firsts.append(time.perf_counter() - t)
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
print(json.dumps({"start": time.time() - (time.perf_counter() - start), "firsts": firsts}))
"""


def run_once(mode: str, kernels: int, launches: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:  # kernels need a source file to be read
        script = os.path.join(folder, "kernels.py")
        with open(script, "w") as f:
            f.write(CHILD)
        env = {**os.environ, "NAIAD_CACHE_DIR": os.path.join(folder, "cache")}
        env["NAIAD_CPU_TIERING"] = mode
        env.pop("NAIAD_BACKEND", None)
        done = subprocess.run(
            [sys.executable, script, str(kernels), str(launches)],
            env=env,
            capture_output=True,
            text=True,
        )
        ended = time.time()
    if done.returncode:
        raise SystemExit(f"the {mode} run failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    firsts = sorted(report["firsts"])
    return {
        "first_launch_median_ms": 1e3 * firsts[len(firsts) // 2],
        "first_launch_max_ms": 1e3 * firsts[-1],
        "launches_to_exit_s": ended - report["start"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", type=int, default=16)
    parser.add_argument("--launches", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2, help="runs per mode, alternating")
    args = parser.parse_args()
    results: dict[str, list] = {"always-compile": [], "auto": []}
    for _ in range(args.rounds):
        for mode in results:
            results[mode].append(run_once(mode, args.kernels, args.launches))
    for mode, runs in results.items():
        best = min(runs, key=lambda r: r["launches_to_exit_s"])
        print(
            f"{mode:>15}: {args.kernels} kernels x {args.launches} launches: "
            f"first launch median {best['first_launch_median_ms']:8.1f} ms, "
            f"max {best['first_launch_max_ms']:8.1f} ms; first launch to exit "
            f"{best['launches_to_exit_s']:6.2f} s (best of {len(runs)})"
        )


if __name__ == "__main__":
    main()
