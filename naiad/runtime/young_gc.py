"""While a launch takes its slow path or a kernel compiles, Python's cyclic collector collects
only its young generations; the old generation waits for the region's end.

    with young_collections_only():     # regions nest, in one thread or several
        ...

Why: a full collection walks every object the process holds — 17 ms after `import naiad`, 110
to 200 ms once torch is imported (2-core EPYC). A compile allocates enough to trigger one
every few compiles (tutorial 06's attention forward: one in three, 175 ms), and the first
launch of a cached kernel in a new process triggered two of them (its imports of llvmlite and
of the CPU back end), a third of that launch's time. The compile's own objects are what fill
the young generations, and its reference cycles (op <-> block <-> region) die young: they are
collected as usual while the region lasts, and once more as it ends, so that the garbage it
made is freed there and then. What outlives the region moves to the old generation, whose
next full collection comes when Python's own rule next calls for it.

The thresholds are those of CPython's generational collector (3.11 to 3.13, with the GIL),
and both older generations' are raised here: the second threshold is how many young
collections come before one of the middle generation, the third how many of those (explicit
ones included) before the old one's, and once that count is passed, any automatic collection
starts with the old generation. Elsewhere (3.14's incremental collector reads the thresholds
differently; the free-threaded build) nothing changes. A threshold the program sets while a
region lasts is kept: the region's end restores the old values only over its own. A forked
child (an autotuner's compile workers) keeps only the forking thread's regions.
"""

from __future__ import annotations

import gc
import os
import sys
import sysconfig
import threading
from contextlib import contextmanager

# The older generations' thresholds inside a region: never reached, in effect.
HELD = 1 << 30

# A program that does little but compile (an autotuner's loop) may seldom allocate enough
# outside the regions for Python to make a full collection there: after this many collections
# of the middle generation without one, the end of a region makes it. Each region's end
# collects the middle generation, so this counts regions. At 100, a test suite that launches a
# new kernel in each test was given a full collection every 100 launches, each 110-130 ms with
# torch imported (Triton's test_core.py: 2 of the 13 full collections of 100 tests,
# bench/RESULTS.md). What reaches the old generation in a region is what outlived its end,
# little of it garbage.
FULL_EVERY = 1000

APPLIES = (
    sys.implementation.name == "cpython"
    and sys.version_info < (3, 14)
    and not sysconfig.get_config_var("Py_GIL_DISABLED")
)

_lock = threading.Lock()
_local = threading.local()  # this thread's depth of regions
_threads = 0  # threads inside a region
_thresholds: tuple | None = None  # (before the first thread's region, set for it)


@contextmanager
def young_collections_only():
    """Hold back the old generation's collections until the last region open in any thread
    ends, then collect the young generations, and all of them when `FULL_EVERY` collections of
    the middle generation went by without one (unless the program turned the collector off)."""
    if not APPLIES:
        yield
        return
    _enter()
    try:
        yield
    finally:
        if _leave():
            gc.collect(1)
            if gc.get_count()[2] >= FULL_EVERY:
                gc.collect()


def _enter() -> None:
    global _threads, _thresholds
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    if depth:
        return
    with _lock:
        _threads += 1
        if _threads == 1:
            before = gc.get_threshold()
            held = (before[0], HELD, HELD)
            gc.set_threshold(*held)
            _thresholds = (before, held)


def _leave() -> bool:
    """Whether the last region ended with the collector on (it collects then)."""
    _local.depth -= 1
    if _local.depth:
        return False
    with _lock:
        return _thread_left()


def _thread_left() -> bool:
    global _threads, _thresholds
    _threads -= 1
    if _threads:
        return False
    before, held = _thresholds
    _thresholds = None
    if gc.get_threshold() == held:
        gc.set_threshold(*before)
    return gc.isenabled()


def _after_fork_in_child() -> None:
    """Only the forking thread lives on in a child: the regions the others were in never end
    there, so they are forgotten (and the thresholds put back if the forking thread is in
    none). The lock, which another thread may have held, is made anew."""
    global _lock, _threads
    _lock = threading.Lock()
    if _thresholds is not None and not getattr(_local, "depth", 0):
        _threads = 1
        _thread_left()
    else:
        _threads = 1 if _thresholds is not None else 0


if APPLIES:
    os.register_at_fork(after_in_child=_after_fork_in_child)
