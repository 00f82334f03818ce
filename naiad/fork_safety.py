"""Locks that `os.fork()` waits for, so that a child never starts with one held.

A forked child has only the thread that forked. A lock another thread held at that moment stays
held in the child forever, and the child's first compile waits on it: forking while a thread
compiled left every child deadlocked on llvmlite's lock (issue 13, item 7). So the locks that
guard a compile are taken before the fork, in a fixed order, and released after it in the
parent and in the child; the fork happens between two compiles, never in one.

    hold_across_fork(lock, rank)

adds `lock` (anything with `acquire()` and `release()`). The ranks give the order, lowest
first: a lock must rank below every lock its holder may take while holding it (the compile
lock 0, the CPU loader's 10, the disk cache's 15, llvmlite's own 20), or a fork could wait
for a compile that waits for the forking thread. This module imports nothing, so the compile
lock registers at `import naiad` and LLVM's only once LLVM is loaded (llvm_util.py). The table
is append-only: its entries are process-wide locks that live as long as the process.
"""

from __future__ import annotations

import os

_locks: list[tuple[int, int, object]] = []  # (rank, registration order, lock), sorted
_taken: list[object] = []  # what `_before_fork` took, in order


def hold_across_fork(lock, rank: int) -> None:
    """Make `os.fork()` take `lock` (in `rank` order) before forking, and release it after."""
    _locks.append((rank, len(_locks), lock))
    _locks.sort(key=lambda entry: entry[:2])


def _before_fork() -> None:
    for _, _, lock in list(_locks):
        lock.acquire()
        _taken.append(lock)


def _after_fork() -> None:
    """In the parent and in the child alike: the child's copy of each lock is held by the same
    thread, the one that forked."""
    while _taken:
        _taken.pop().release()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork, after_in_child=_after_fork)
