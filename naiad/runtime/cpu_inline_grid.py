"""Which grids of a compiled CPU kernel run on the launching thread alone, without waking the
worker pool.

Waking a sleeping worker costs the launch more than a small grid's programs do: the launching
thread rings a futex, and then waits for the chunk the woken worker took, which on a busy
machine runs only when the scheduler gets to that thread (bench/cpu/launch_overhead.py, 2
threads: 64 programs of 16 elements took 230 us with the worker asleep, 42 us awake, where
the programs themselves take a few microseconds). The pool cannot tell such a grid from a few
heavy programs; the kernel's TTIR can. `inline_programs` reads it once per loaded kernel, so
that a launch compares its program count with one number (cpu_launcher.py,
cpu_fast_launch.py).

A program's work is estimated as tiering estimates the interpreter's (ttir_work.py): the
elements of the kernel's largest block, here at least `PROGRAM_FLOOR` (a program's own entry,
index and bounds arithmetic), or a `tt.dot`'s multiply-adds where more, times the trips of
every loop. Only loops of constant bounds count: a loop whose trips come from an argument or
a loaded value could run for millions of trips, so such a kernel never runs inline on this
estimate (a launch-time count would cost more Python than the whole hot path).
"""

from __future__ import annotations

import re

from . import loop_trips, ttir_work

# The work (elements, multiply-adds) of a grid run inline: a few microseconds of compiled
# code, less than a launch on awake workers costs (about 15 us on 2 threads).
INLINE_WORK = 1 << 14
# A program counts at least this many elements: 64 programs of small blocks run inline.
PROGRAM_FLOOR = 256

_DOT = re.compile(r"\btt\.dot\b.*:\s*tensor<(\d+)x(\d+)x\w+>\s*\*\s*tensor<\d+x(\d+)x\w+>")
_WHILE = re.compile(r"\bscf\.while\b")


def program_work(ttir: str) -> int | None:
    """One program's estimated work, or None where a loop's trips are not constants."""
    trips = loop_trips.trip_counts(ttir, {})
    if None in trips or _WHILE.search(ttir):
        return None
    work = max(ttir_work.largest_block(ttir), PROGRAM_FLOOR)
    for m, k, n in _DOT.findall(ttir):
        work = max(work, int(m) * int(k) * int(n))
    for count in trips:
        work *= max(1, count)
    return work


def inline_programs(ttir: str | None) -> int:
    """The largest grid (programs) of this kernel that runs on the launching thread alone: 0
    where its work is unknown (no TTIR, a loop of unknown trips)."""
    work = None if ttir is None else program_work(ttir)
    return 0 if work is None else INLINE_WORK // work
