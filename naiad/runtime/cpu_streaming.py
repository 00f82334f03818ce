"""When a CPU launch streams its stores past the caches.

A kernel's structured stores that carry no cache hint are compiled both ways (normal and
non-temporal: backends/cpu/codegen/streaming.py) and the launch chooses with one parameter
slot (abi.py). It streams when those stores write at least `STREAM_CACHE_FACTOR` times the
last-level cache: lines written that many bytes back are evicted before anyone reads them, so
a normal store's read of each line (read-for-ownership) is wasted memory traffic, while a
smaller output is better left in the cache for its next reader. `NAIAD_CPU_STREAM_BYTES` sets
the threshold in bytes instead (1: every launch streams).
"""

from __future__ import annotations

import functools
import glob
import sys

from .. import knobs

# Measured on a machine with a 32 MiB L3: bench/RESULTS.md.
STREAM_CACHE_FACTOR = 2
_DEFAULT_LAST_LEVEL_CACHE = 32 << 20
_CACHE_INFO = "/sys/devices/system/cpu/cpu0/cache"


@functools.cache
def last_level_cache_bytes() -> int:
    """The size of this machine's largest data cache (Linux sysfs), or a default."""
    sizes = []
    for index in glob.glob(f"{_CACHE_INFO}/index*"):
        try:
            with open(f"{index}/type") as f:
                kind = f.read().strip()
            with open(f"{index}/size") as f:
                text = f.read().strip()
        except OSError:
            continue
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        if kind != "Instruction" and text[:-1].isdigit() and text[-1] in units:
            sizes.append(int(text[:-1]) * units[text[-1]])
        elif kind != "Instruction" and text.isdigit():
            sizes.append(int(text))
    return max(sizes, default=_DEFAULT_LAST_LEVEL_CACHE)


def streaming_grid(stream_bytes: int) -> int:
    """The number of programs from which a launch streams, for a kernel whose programs each
    store `stream_bytes` through stores the launch chooses for (no such store: never)."""
    if stream_bytes <= 0:
        return sys.maxsize
    threshold = knobs.stream_bytes.get() or STREAM_CACHE_FACTOR * last_level_cache_bytes()
    return max(1, -(-threshold // stream_bytes))
