"""Tiered execution on the CPU: a small launch of a kernel not compiled yet runs at once in the
interpreter while its compiled code is built in the background.

A new small kernel costs the interpreter a few milliseconds and the compiler most of a second
(LLVM's optimizer and code generation; docs/cpu.md), so a kernel launched once or a few times -
a test, a first try in a notebook - is answered sooner by the interpreter. A launch its AST
says is small sends the whole compile to the background (cpu_first_launch.py); else the
launcher builds the TTIR, and when the disk cache misses and the work estimated from it and the
launch's integer arguments (`is_small`; loops' trips: loop_trips.py) is small, the back end's
stages go to the background worker; the launch runs in the interpreter, with the CPU's own
language rules (IEEE dots), debug mode and `device_print` as the compiled kernel has them.
The next launch of that specialization runs compiled: it takes the compile over from the queue,
or waits for the worker to finish it, so a kernel launched many times in a row pays at most one
interpreted launch more than without tiering; a small one after a pause, its compile still
queued, is interpreted again (`interpret_again`). Large launches wait for the compiled kernel.

`NAIAD_CPU_TIERING` chooses (`mode`): `auto` (the default) tiers as above; `off` and
`always-compile` (its synonym, the name the test suite uses) make every launch wait for its
compiled kernel. Timing a kernel (`naiad.testing.do_bench`) waits for it too
(`waiting_for_compiled`): a benchmark measures the compiled code.

The worker is one thread: compiles are serialized process-wide anyway (compile_lock.py),
and a background compile gives way, between its stages, to a compile a launch waits for. It
begins a compile only once the program has been quiet for `QUIET_S` - handed it no compile,
interpreted no launch, and run no Python in its other threads (`_python_runs_elsewhere`) - and
between two stages it waits for such a pause again (`between_stages`): a test suite launching
a thousand new kernels once each (a new one every 50-150 ms) would otherwise spend most of its
time compiling kernels never launched again, the compiles' Python holding the GIL against the
tests (Triton's test_core.py, 300 tests: 44 s with every compile begun at once, 18 s with
none), and a compile begun in one pause would go on through the launches that follow it. A
program busy in Python between its launches (a test computing its reference in torch, pytest
ending its session) is not quiet either: the compiler's first import and its passes (0.1-0.3 s
of Python) would take the GIL in turns with it (tutorial 06's causal test: an interpreted
launch of 75 ms took 225); one waiting, or in native code that lets the GIL go (a large
matmul), is. A kernel launched again before its compile began compiles in the launching thread
(`finish_here`), as it would if the worker had not reached it; one whose compile is under way
is waited for, its stages no longer pausing. At most `QUEUED` compiles wait for the worker;
past that the oldest waiting one is dropped (its kernel compiles when it is next launched). At
exit the waiting compiles are dropped and the running one stops at its next stage
(`between_stages`; its cache entry, written at its end, is not written): the process no longer
waits for up to a whole compile of a kernel it will not launch (tutorial 06's backward: 1.0-1.6
s). The exit waits for that stop only once the compile has begun its stages, which run LLVM
outside the GIL (a thread in LLVM while the process tears LLVM down could crash it); before
them the compile runs Python alone - the compiler's imports, the frontend - and is left to stop
at its first stage, or to be stopped with every other thread as the interpreter finalizes (a
compile begun in a pause at the end of a test run held its exit 0.15 s).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import threading
import time

from .. import knobs
from .compile_dumps import printing_passes

MODES = ("auto", "off", "always-compile")

# What the interpreter answers faster than the compiler. A program costs the interpreter about
# a millisecond of Python at the least, and an element of its largest block about a
# microsecond per operation, where a cold compile costs 0.3-1.5 s (bench/RESULTS.md): 64
# programs, or 2**16 element-programs, stay well under that.
SMALL_PROGRAMS = 64
SMALL_WORK = 1 << 16
# A trip of a loop costs about as much as a program (a millisecond: 0.95 ms a trip measured on
# a grid-stride copy of two-element blocks), so a program's body counts as at least this many
# elements, once per trip: 64 program-trips of small blocks are small.
SMALL_BODY = SMALL_WORK // SMALL_PROGRAMS
# A larger kernel costs the compiler more: about 3.5 ms per operation of its TTIR (a dozen
# operations 50-100 ms, 124-215 of them 0.40-0.66 s, tutorial 06's causal backward's 277 1.0 s;
# bench/RESULTS.md), so it may be interpreted for up to a third of that at the interpreter's
# microsecond per unit of work (tutorial 06's backward at its test shape: 0.11-0.19 s for
# 131,072-294,912 units, against 0.5-1.0 s compiled): `WORK_PER_OP` units per operation,
# past SMALL_WORK from 57 operations up. A kernel launched again at once then pays at most a
# third more than its compile for its first two launches.
WORK_PER_OP = round(3.5e-3 / 3 / 1e-6)
# A loop whose trip count the launch's arguments and grid do not give (loop_trips.py: its bounds
# depend on a loaded value, an enclosing loop) counts as this many trips of its body.
LOOP_TRIPS_GUESS = 16
QUEUED = 4
# Launches of a kernel, past its first, the interpreter may run while its compile waits in the
# queue (`interpret_again`), before one compiles it in the launching thread.
INTERPRETED_AGAIN = 4
# Seconds without a new compile handed to the worker or a launch interpreted before it begins
# a compile or its next stage: longer than the interval between a test suite's new kernels
# (50-150 ms each, interpreted), short beside a person's pause between two runs of a cell.
QUIET_S = 0.25
# While it waits for quiet the worker looks every POLL_S whether another thread runs Python:
# given up, the GIL comes back to it only after CONTENDED_S when one does (a thread running
# Python keeps the GIL for the interpreter's switch interval, 5 ms), at once when none does.
POLL_S = 0.01
CONTENDED_S = 1e-3


def mode() -> str:
    """NAIAD_CPU_TIERING, checked; 'always-compile' inside `waiting_for_compiled`, while
    NAIAD_PRINT_PASSES prints (a launch's passes print before it returns, not later from the
    background), and while the program watches compiles or loads (`_watched`)."""
    if getattr(_waiting, "depth", 0) or printing_passes() or _watched():
        return "always-compile"
    text = knobs.cpu_tiering.get().strip().lower() or "auto"
    if text not in MODES:
        raise ValueError(f"NAIAD_CPU_TIERING={text!r}: expected one of {', '.join(MODES)}")
    return text


def _watched() -> bool:
    """Whether a hook the program set expects a first launch's compile, or its kernel's load,
    to happen in that launch, as Triton's launch does them: the JIT's cache and post-compile
    hooks, the compilation listener, the kernel load hooks (`triton.knobs.runtime.*`)."""
    hooks = (
        knobs.jit_cache_hook,
        knobs.jit_post_compile_hook,
        knobs.compilation_listener,
        knobs.kernel_load_start_hook,
        knobs.kernel_load_end_hook,
    )
    return any(hook.get() for hook in hooks)


_waiting = threading.local()


@contextlib.contextmanager
def waiting_for_compiled():
    """Every launch of this thread inside the block runs compiled (waiting for its compile)."""
    _waiting.depth = getattr(_waiting, "depth", 0) + 1
    try:
        yield
    finally:
        _waiting.depth -= 1


class BackgroundJob:
    """One compile handed to the worker: `run(background)` returns what it makes (a loaded
    kernel; `background`: on the worker's thread). It is `done()` once it ran, failed or was
    dropped (`result` None then, and `dropped` tells the last two apart); a job made before a
    fork is never done in the child (`current` says so)."""

    def __init__(self, run, small=None):
        self._run = run
        self.small = small  # (arguments, grid) -> whether a launch is small (`interpret_again`)
        self.result = None
        self.dropped = False
        self.awaited = False  # a launch waits for it: its stages no longer pause
        self.staged = False  # it began its stages (`between_stages`): the exit waits for it
        self.interpreted = 1  # its kernel's launches the interpreter ran (the first did)
        self.last_launch = time.monotonic()
        self._done = threading.Event()
        self._pid = os.getpid()

    def current(self) -> bool:
        return self._pid == os.getpid()

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self):
        self._done.wait()
        return self.result

    def _execute(self, background: bool) -> None:
        try:
            self.result = self._run(background)
        except Exception:  # the launch that finds it compiles again, in its
            pass  # own thread, and meets the error there (where the user sees it)
        finally:
            self._done.set()

    def _drop(self) -> None:
        self.dropped = True
        self._done.set()


class _Worker:
    """The background thread, while there are jobs, and its bounded queue (one per process:
    made again in a child)."""

    def __init__(self):
        self.queue: collections.deque = collections.deque()
        self.wake = threading.Condition(threading.Lock())
        self.thread: threading.Thread | None = None
        self.running: BackgroundJob | None = None
        self.closed = False
        self.last_activity = 0.0  # time.monotonic() of the latest job handed in or launch run
        self.interpreting = 0  # launches the interpreter runs now

    def submit(self, job: BackgroundJob) -> None:
        with self.wake:
            if self.closed:
                job._drop()
                return
            self.last_activity = time.monotonic()
            self.queue.append(job)
            while len(self.queue) > QUEUED:
                self.queue.popleft()._drop()
            if self.thread is None:
                self.thread = threading.Thread(
                    target=self._serve, name="naiad-background-compile", daemon=True
                )
                self.thread.start()
            self.wake.notify()

    def _serve(self) -> None:
        """Run the queued jobs; the thread ends once none is left (`submit` starts another):
        a process whose compiles are done has no thread of Naiad's, so the autotuner may fork
        its compiles (autotune_cache.py) and a fork finds no thread mid-import."""
        while True:
            busy = _python_runs_elsewhere()
            with self.wake:
                if not self.queue:
                    self.thread = None
                    return
                quiet = self._quiet_in(busy)
                if quiet > 0:  # a new job or `close` wakes it earlier: look again
                    self.wake.wait(quiet)
                    continue
                job = self.running = self.queue.popleft()
            job._execute(background=True)
            with self.wake:
                self.running = None
                self.wake.notify_all()

    def _quiet_in(self, busy: bool) -> float:
        """Seconds to wait before looking again whether the program has been quiet for
        QUIET_S (<= 0: it has); `busy`: another thread was just found running Python. The
        caller holds `wake`."""
        now = time.monotonic()
        if self.interpreting or busy:
            self.last_activity = now
        quiet = self.last_activity + QUIET_S - now
        return min(quiet, POLL_S) if quiet > 0 else quiet

    def enter_stage(self, job: BackgroundJob) -> None:
        """Before a stage of the running `job`: wait for the program's next pause, unless a
        launch waits for the job; raise Abandoned once the process exits, else note that the
        job runs its stages (both under `wake`, which `close` reads them under)."""
        while True:
            busy = _python_runs_elsewhere()
            with self.wake:
                if self.closed:
                    raise Abandoned
                quiet = 0.0 if job.awaited else self._quiet_in(busy)
                if quiet <= 0:
                    job.staged = True
                    return
                self.wake.wait(quiet)

    def await_running(self, job: BackgroundJob) -> None:
        """A launch waits for `job`, which the worker runs: its stages stop pausing."""
        with self.wake:
            job.awaited = True
            self.wake.notify_all()

    @contextlib.contextmanager
    def interpreted_launch(self):
        """The module's `interpreted_launch`: counted while it runs, its end stamped."""
        with self.wake:
            self.interpreting += 1
        try:
            yield
        finally:
            with self.wake:
                self.interpreting -= 1
                self.last_activity = time.monotonic()

    def queued(self, job: BackgroundJob) -> bool:
        """Whether `job` waits in the queue (the worker has not begun it)."""
        with self.wake:
            return job in self.queue

    def take(self, job: BackgroundJob) -> bool:
        """Take `job` out of the queue if the worker has not begun it."""
        with self.wake:
            if job in self.queue:
                self.queue.remove(job)
                return True
            return False

    def close(self) -> None:
        """Drop the waiting jobs, and wait for the running one to stop at its next stage if it
        has begun its stages (module doc)."""
        with self.wake:
            self.closed = True
            while self.queue:
                self.queue.popleft()._drop()
            self.wake.notify_all()
            self.wake.wait_for(lambda: self.running is None or not self.running.staged)


def _python_runs_elsewhere() -> bool:
    """Whether another thread of the program runs Python now: the GIL, given up for a moment,
    takes longer than CONTENDED_S to come back (one that waits, or runs native code without
    the GIL, hands it back at once)."""
    started = time.perf_counter()
    time.sleep(0)
    return time.perf_counter() - started > CONTENDED_S


_worker = _Worker()


class Abandoned(Exception):
    """A background compile stopped because the process exits."""


def between_stages() -> None:
    """Between two stages of a background compile: stop it (raise `Abandoned`) once the
    process exits (the worker is closed); otherwise go on at the program's next pause (the
    pause ends at once when the worker is closed)."""
    running = _worker.running
    if running is not None:
        _worker.enter_stage(running)
    elif _worker.closed:
        raise Abandoned


def interpreted_launch():
    """The context of a launch the interpreter runs for tiering: background compiles wait for
    it, and for QUIET_S after it."""
    return _worker.interpreted_launch()


def submit(job: BackgroundJob) -> None:
    """Queue `job` for the background worker."""
    _worker.submit(job)


def settled(seconds: float = 60.0) -> bool:
    """Wait until no compile waits or runs in the background (at most `seconds`); whether
    none does. A background compile stores its kernel in the cache `NAIAD_CACHE_DIR` names
    when it ends: a program (a test) that switches caches waits for this first."""
    deadline = time.monotonic() + seconds
    while _worker.queue or _worker.running:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def interpret_again(job: BackgroundJob, arguments: dict, grid: tuple) -> bool:
    """Whether a later launch of `job`'s kernel, its compile not begun, is interpreted again:
    when small too and more than QUIET_S after the kernel's last launch, INTERPRETED_AGAIN times
    at most. A kernel launched in a loop comes back at once and compiles; one a test suite
    meets again in a later test (the tests' launches leaving the worker no pause) does not."""
    now = time.monotonic()
    again = (
        job.small is not None
        and job.interpreted <= INTERPRETED_AGAIN
        and now - job.last_launch > QUIET_S
        and _worker.queued(job)
        and job.small(arguments, grid)
    )
    job.last_launch = now
    job.interpreted += again
    return again


def finish_here(job: BackgroundJob):
    """The job's result, made in this thread when the worker has not begun it (a launch waiting
    for it waits for no other compile queued before it), else waited for."""
    if _worker.take(job):
        job._execute(background=False)
    else:
        _worker.await_running(job)
    return job.wait()


def _new_worker_in_child() -> None:
    global _worker
    _worker = _Worker()


os.register_at_fork(after_in_child=_new_worker_in_child)
atexit.register(lambda: _worker.close())
