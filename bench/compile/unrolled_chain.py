"""Compile time against kernel length: `x = tl.sin(x)` unrolled N times (`tl.static_range`).

    python bench/compile/unrolled_chain.py [N ...]        # default: 50 200 800

A long unrolled elementwise chain is the shape that showed compile time growing faster than the
kernel (issue 13, item 9: 2.8 s at 50, 24 s at 200, 265 s at 800, before `cpu-fuse-elementwise`
fused a chain in one pass). For each N, prints:

- `compile`: a cold CPU compile, `warmup(target="cpu")` into an empty cache (frontend, TTIR
  pipeline, Linalg, CPU pipeline, code generation, LLVM), in CPU seconds of this process (LLVM
  runs on the calling thread; CPU time is steadier than wall time on a shared machine), and wall;
- `fuse`: `cpu-fuse-elementwise` alone on the kernel's Linalg (`asm['linalg']`), and the body ops
  it cloned: linear in N when each op of the chain is cloned once;
- seconds per sin, so that growth faster than N shows as a growing column.
"""

from __future__ import annotations

import platform
import sys
import tempfile
import time

import numpy as np

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu.fuse_elementwise import fuse_elementwise
from naiad.ir.parser import parse_module


@naiad.jit
def sin_chain(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    for _ in tl.static_range(N):
        x = tl.sin(x)
    tl.store(out_ptr + offs, x)


def measure(n: int) -> tuple[float, float, float, int]:
    """(cold compile CPU s, wall s, fusion pass s, ops the pass cloned) for `n` sins."""
    x = np.zeros(1024, np.float32)
    with tempfile.TemporaryDirectory() as cache, knobs.override(NAIAD_CACHE_DIR=cache):
        cpu, wall = time.process_time(), time.perf_counter()
        compiled = sin_chain.warmup(x, x, N=n, BLOCK=1024, grid=(1,), target="cpu")
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    module = parse_module(compiled.asm["linalg"])
    start = time.process_time()
    cloned = fuse_elementwise(module)
    return cpu, wall, time.process_time() - start, cloned


def main(sizes):
    print(f"# {platform.machine()}, Python {platform.python_version()}")
    header = ("N", "compile CPU s", "ms per sin", "wall s", "fuse s", "cloned")
    print("{:>5} {:>14} {:>11} {:>8} {:>8} {:>7}".format(*header))
    measure(2)  # imports and one-time set-up
    for n in sizes:
        cpu, wall, fuse, cloned = measure(n)
        row = (n, f"{cpu:.2f}", f"{1e3 * cpu / n:.1f}", f"{wall:.2f}", f"{fuse:.3f}", cloned)
        print("{:>5} {:>14} {:>11} {:>8} {:>8} {:>7}".format(*row))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [50, 200, 800])
