"""Launches for tests/runtime/test_cache.py, in a process of their own: a damaged or tampered
cache entry that were loaded could crash the process.

    python cache_launches.py SOURCE_HASH KERNEL:BLOCK ...

launches each kernel (`add` or `forty_two`) with that BLOCK on fresh random inputs, compiled
for the CPU with the cache of NAIAD_CACHE_DIR, and prints one JSON object: for each launch its
inputs, its output and the cache entries it created. SOURCE_HASH pins the hash of Naiad's
source that cache keys hold, so that the keys stay those of the test's first run even when
files of the checkout change in between.
"""

import json
import pathlib
import sys

import numpy as np

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime import cache

N = 1000


@naiad.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@naiad.jit
def forty_two(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """The same signature as `add`: its object code fits `add`'s entry."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.full((BLOCK,), 42.0, tl.float32), mask=offsets < n)


def entries() -> set[str]:
    return {path.name for path in pathlib.Path(knobs.cache_dir.get()).glob("??/[0-9a-f]*")}


def launch(spec: str, rng) -> dict:
    name, block = spec.split(":")
    kernel = {"add": add, "forty_two": forty_two}[name]
    x, y = rng.standard_normal((2, N), dtype=np.float32)
    out = np.full(N, np.nan, np.float32)  # poisoned
    before = entries()
    kernel[(naiad.cdiv(N, int(block)),)](x, y, out, N, BLOCK=int(block))
    return {
        "x": x.tolist(),
        "y": y.tolist(),
        "out": out.tolist(),
        "new": sorted(entries() - before),
    }


def main() -> None:
    pinned, specs = sys.argv[1], sys.argv[2:]
    cache.naiad_source_hash = lambda: pinned
    rng = np.random.default_rng(0)
    with knobs.override(NAIAD_BACKEND="cpu"):
        print(json.dumps({spec: launch(spec, rng) for spec in specs}))


if __name__ == "__main__":
    main()
