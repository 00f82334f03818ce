"""Where a compile spends its time: `NAIAD_PROFILE_COMPILE=1` prints a table of its stages, and
a compile that runs past `SLOW_SECONDS` says what it is doing, whatever the setting (on stderr,
at 5, 10, 20 s and so on: which kernel, which stage).

    with compile_profile.compiling(name, "cpu"):    # one kernel, from launch to loaded code
        with compile_profile.stage("AST → TTIR"):
            ...

Stages nest (the table indents them: `LLVM optimize` inside `llir`) and a compile started
inside another (a jit function's launch compiling a second kernel, a tool) counts as part of
the outer one. Compiles are serialized process-wide (runtime/compile_lock.py), so one record at a
time is kept, per thread for safety. The table goes to stderr after the outermost compile:

    naiad: compile profile of `_attn_fwd` for cpu
      stage                          wall ms    CPU ms
      AST → TTIR                       312.4     301.0
      ...
      total                            912.0     880.5
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time

from . import knobs

SLOW_SECONDS = 5.0  # a compile this long says what it is doing (again at 10 s, 20 s, ...)


class _Record:
    """One outermost compile: its stages as [depth, name, seconds, CPU seconds of the compiling
    thread] in the order they began."""

    def __init__(self, kernel: str, target: str):
        self.kernel, self.target = kernel, target
        self.start = time.perf_counter()
        self.start_cpu = time.thread_time()
        self.rows: list[list] = []
        self.open: list[str] = []  # the stages running now, outermost first
        self.depth = 0
        self.timer: threading.Timer | None = None
        self.done = False


_current = threading.local()


@contextlib.contextmanager
def compiling(kernel: str, target: str):
    """The compile of `kernel` for `target`: a record of its stages (the outermost one prints
    the table with NAIAD_PROFILE_COMPILE, and arms the slow-compile notice)."""
    record = getattr(_current, "record", None)
    if record is not None:
        record.depth += 1
        try:
            yield record
        finally:
            record.depth -= 1
        return
    record = _current.record = _Record(kernel, target)
    _arm(record)
    try:
        yield record
    finally:
        _current.record = None
        record.done = True
        record.timer.cancel()
        if knobs.profile_compile.get():
            sys.stderr.write(table(record))


@contextlib.contextmanager
def stage(name: str):
    """Time one stage of the compile in progress (nothing is kept outside a compile)."""
    record = getattr(_current, "record", None)
    if record is None:
        yield
        return
    row = [len(record.open), name, 0.0, 0.0]
    record.rows.append(row)
    record.open.append(name)
    start, start_cpu = time.perf_counter(), time.thread_time()
    try:
        yield
    finally:
        row[2] = time.perf_counter() - start
        row[3] = time.thread_time() - start_cpu
        record.open.pop()


def table(record: _Record) -> str:
    """The stages of `record` and its total, one line each, nested stages indented: wall time,
    and the CPU time of the compiling thread (the steadier of the two on a busy machine)."""
    lines = [
        f"naiad: compile profile of `{record.kernel}` for {record.target}",
        f"  {'stage':<28} {'wall ms':>9} {'CPU ms':>9}",
    ]
    for depth, name, seconds, cpu in record.rows:
        label = "  " * depth + name
        lines.append(f"  {label:<28} {seconds * 1e3:9.1f} {cpu * 1e3:9.1f}")
    total = time.perf_counter() - record.start
    total_cpu = time.thread_time() - record.start_cpu
    lines.append(f"  {'total':<28} {total * 1e3:9.1f} {total_cpu * 1e3:9.1f}")
    return "\n".join(lines) + "\n"


def _arm(record: _Record, after: float | None = None) -> None:
    """Start the timer that reports a compile still running `after` seconds from now (None:
    SLOW_SECONDS)."""
    timer = threading.Timer(SLOW_SECONDS if after is None else after, _notice, (record,))
    timer.daemon = True
    record.timer = timer
    timer.start()


def _notice(record: _Record) -> None:
    """The slow-compile notice (on a timer's thread: LLVM releases the GIL while it works)."""
    if record.done:
        return
    elapsed = time.perf_counter() - record.start
    where = " > ".join(record.open) or "between stages"
    sys.stderr.write(
        f"naiad: still compiling `{record.kernel}` for {record.target} after {elapsed:.0f} s, "
        f"in {where} (NAIAD_PROFILE_COMPILE=1 prints every stage's time)\n"
    )
    sys.stderr.flush()
    if not record.done:
        _arm(record, elapsed)  # again at twice the time: 5, 10, 20 s, ...
