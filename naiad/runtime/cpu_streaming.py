"""When a CPU launch streams its stores past the caches.

A kernel's structured stores that carry no cache hint are compiled both ways (normal and
non-temporal: backends/cpu/codegen/streaming.py) and the launch chooses with one parameter
slot (abi.py): the bytes each program must store, which the program compares with what it
stores, a store in a loop counted by the loop's trips. It streams when those stores write at
least half the last-level cache: lines written that many bytes back, with the launch's own
reads between, are mostly evicted before anyone reads them, so a normal store's read of each
line (read-for-ownership) is wasted memory traffic, while a smaller output is better left in
the cache for its next reader.
`NAIAD_CPU_STREAM_BYTES` sets the threshold in bytes instead (1: every launch streams).

Half, not more: on a Zen 3 EPYC (32 MiB L3 shared with other guests), a 16 MiB output streamed
made layer norm 4096 x 1024 1.23 times as fast and a vector add 1.36 times; on a Zen 5 EPYC a
vector add's 8 MiB output (a quarter) lost 15 % streamed, so a quarter stays normal
(bench/RESULTS.md).
"""

from __future__ import annotations

import functools
import glob

from .. import knobs

# The launch's output, as a fraction of the last-level cache, from which it streams.
STREAM_CACHE_FRACTION = 0.5
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


def stream_threshold() -> int:
    """The bytes a launch's streamable stores must write for it to stream them."""
    return knobs.stream_bytes.get() or int(STREAM_CACHE_FRACTION * last_level_cache_bytes())


def program_threshold(threshold: int, n_programs: int) -> int:
    """The bytes each of `n_programs` programs must store for the launch to reach
    `threshold`: the parameter block's last slot (abi.py). The program compares what it
    stores, its loops' trips counted (backends/cpu/codegen/streaming.py)."""
    return max(1, -(-threshold // max(n_programs, 1)))
