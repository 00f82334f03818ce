"""One compile at a time in the process: the lock every compile takes, and `compiled_once`, which
compiles (and loads) each kernel once however many threads ask for it first.

Serializing compiles is what makes launching from many threads safe: the IR's intern table
(ir/interning.py) and the disk cache's in-memory level are not made for concurrent writers, and
a kernel compiled twice is loaded twice, with prepared launches of both copies alive.
Serializing costs little: the frontend and the passes hold the GIL, and llvmlite serializes its
binding calls with its own lock anyway. The lock has its own module because compiling
(compiler.py) is not its only user: the launchers coordinate compiles of their own under it
(cpu_tiering.py), and `os.fork()` waits for it (fork_safety.py).
"""

from __future__ import annotations

import contextlib
import os
import threading

from ..fork_safety import hold_across_fork


class _CompileLock:
    """One compile at a time in the process; reentrant, since a compile may ask for another
    specialization's (an autotuner's warmup, a tool). `os.fork()` waits for the compile in
    progress (fork_safety.py) and goes before the compiles waiting for it: a fork takes the
    turnstile first, which every outermost compile passes before the lock (a thread that
    compiles in a loop releases and retakes the lock faster than a waiting fork wakes up).
    A compile in the background lets the outermost compiles waiting for the lock go first,
    between its stages (`give_way`): a launch waiting for a kernel waits for one stage of it,
    not for the whole of a compile nobody waits for (cpu_tiering.py)."""

    def __init__(self):
        self._lock = threading.RLock()
        self._turnstile = threading.Lock()
        self._depth = threading.local()
        self._waiting = 0  # outermost compiles waiting for the lock
        self._waiters = threading.Condition(threading.Lock())

    def __enter__(self):
        depth = getattr(self._depth, "value", 0)
        if depth == 0:  # a nested compile must not wait for a fork that waits for its caller
            with self._turnstile:
                pass
        self._depth.value = depth + 1
        try:  # (a Ctrl-C may interrupt the wait)
            if depth == 0:
                self._acquire_counted()
            else:
                self._lock.acquire()
        except BaseException:
            self._depth.value = depth
            raise

    def __exit__(self, *exc_info):
        self._lock.release()
        self._depth.value -= 1

    def _acquire_counted(self) -> None:
        with self._waiters:
            self._waiting += 1
        try:
            self._lock.acquire()
        finally:
            with self._waiters:
                self._waiting -= 1
                self._waiters.notify_all()

    def held_here(self) -> bool:
        """Whether this thread holds the lock (it is compiling)."""
        return getattr(self._depth, "value", 0) > 0

    def give_way(self) -> None:
        """Let the outermost compiles waiting now run first, then take the lock again; the
        caller holds it once (an outermost compile between two of its stages)."""
        if not self._waiting or self._depth.value != 1:
            return
        self._lock.release()
        try:
            with self._waiters:  # until each waiting one has the lock (or gave up waiting)
                self._waiters.wait_for(lambda: not self._waiting)
        finally:
            self._lock.acquire()

    @contextlib.contextmanager
    def released(self):
        """The block runs without the lock, which the caller holds once (an outermost compile
        waiting between two of its stages, or in LLVM's long calls); held more deeply, or not
        held, the lock stays as it is."""
        if getattr(self._depth, "value", 0) != 1:
            yield
            return
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()

    def acquire(self) -> None:
        """Before a fork: keep new compiles out, then wait for the one in progress, then for
        the count of waiting compiles (held for an instant, but a child forked in that
        instant would find it held forever)."""
        self._turnstile.acquire()
        self._lock.acquire()
        self._waiters.acquire()

    def release(self) -> None:
        self._waiters.release()
        self._lock.release()
        self._turnstile.release()

    def forget_waiting(self) -> None:
        """In a forked child: the compiles that waited in the parent have no thread here."""
        self._waiting = 0


compile_lock = _CompileLock()
os.register_at_fork(after_in_child=compile_lock.forget_waiting)
hold_across_fork(compile_lock, 0)
_ABSENT = object()


def compiled_once(table: dict, key, make):
    """`table[key]`, made by `make()` and stored when absent: one compile at a time in the
    process, so threads wanting the same key wait for the first one's result instead of each
    compiling (and loading) their own copy. A hit takes no lock. When `make` raises, nothing is
    stored and the next caller tries again (and gets the error itself)."""
    found = table.get(key, _ABSENT)
    if found is not _ABSENT:
        return found
    with compile_lock:
        found = table.get(key, _ABSENT)
        if found is _ABSENT:
            found = table[key] = make()
        return found
