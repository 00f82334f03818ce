"""The grid runner: runs a kernel's programs on the calling thread or on all cores.

`run(entry, params, n_programs, scratch_bytes, sites)` launches a compiled entry point (see
`abi.py`) over a grid. A grid of one program is one ctypes call of the entry point on the
calling thread's lane (lanes.py, which also makes that call ready once for a prepared launch's
small grids: `direct_launch`). A larger grid on one thread runs inline, on the calling thread
alone. A larger grid is cut into chunks of consecutive program ids that the calling thread and
the persistent workers take in increasing order (`pool_ir.py`): the workers are native threads
waiting in native code, so a launch costs one ctypes call and a futex wake-up, never a Python
thread switch (bench/cpu/launch_overhead.py compares it with Python threads).

Either way the calling thread returns to Python every `SLICE_NS` while the launch runs
(pool_caller_ir.py), so that signal handlers run: a Ctrl-C cancels the launch (the programs
running end, no other starts) and raises KeyboardInterrupt within a slice and a program, and
the pool stays usable. (A one-program launch answers a Ctrl-C when its program ends, as it
would in slices.)

`NAIAD_NUM_THREADS` is the number of threads that run programs, the calling one included
(default: the CPUs this process may run on, capped by its cgroup's CPU quota); 1 runs every grid
inline. The pool starts on the
first large launch, is rebuilt when the setting changes, after `os.fork` (the child has none of
the parent's threads), and after `shutdown()`; its threads are joined at exit.

Scratch arenas are grown on demand: one per worker, owned here, and one per Python thread that
launches (its lane's, with that thread's status record), so launches from several Python
threads never share memory; launches that use the workers take turns.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import os
import threading

import numpy as np

from ... import knobs
from . import lanes, loader, object_store, pool_caller_ir, pool_ir
from .target import host_target

# A grid of fewer programs runs inline. One program has nothing to share; any more may be worth
# the few microseconds a launch on awake workers costs (bench/cpu/launch_overhead.py). The pool
# knows no program's cost: the launcher asks for one thread (`threads`) where the kernel's TTIR
# says the grid's work is small (runtime/cpu_inline_grid.py).
INLINE_BELOW = 2
# Chunks per thread: enough to even out programs of unequal cost and, on a machine shared with
# other jobs, to bound what a preempted thread holds up (the launch waits for the chunk it has
# taken: a sixteenth of its share, where four chunks left a quarter); few enough that taking a
# chunk (one atomic increment, about 0.1 us when contended) stays cheap next to running it.
CHUNKS_PER_THREAD = 16
# A launch returns to Python this often (pool_caller_ir.py), so that a Ctrl-C stops it: each
# return costs a few microseconds.
SLICE_NS = 20_000_000


class _Native:
    """The pool's native functions, compiled (about 40 ms; the disk cache keeps them) and loaded
    once per process."""

    def __init__(self):
        target = host_target()

        def make() -> bytes:
            from . import llvm_tools

            text = pool_ir.pool_module(target.arch)
            return llvm_tools.compile_ir(text, target.machine, "pool", optimized=False)

        code = object_store.cached_object("pool", make)
        self._object = loader.load_object(code, pool_ir.EXPORTS, "naiad_pool")
        address = self._object.address
        ptr, i64, i32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32
        self.launch = ctypes.CFUNCTYPE(i32, ptr, ptr, ptr, i64, i64, i32, ptr, ptr, i64)(
            address("naiad_pool_launch")
        )
        self.resume = ctypes.CFUNCTYPE(i32, ptr, ptr, i64)(address("naiad_pool_continue"))
        self.cancel = ctypes.CFUNCTYPE(None, ptr)(address("naiad_pool_cancel"))
        self.stop = ctypes.CFUNCTYPE(None, ptr)(address("naiad_pool_stop"))
        self.worker = address("naiad_pool_worker")


_native_code: _Native | None = None
_native_lock = threading.Lock()


def _native() -> _Native:
    """The pool's native code, loaded by the first launch. Under a lock: threads launching for
    the first time at once would each load a copy, and the copies not kept would be unmapped
    while their threads still run them."""
    native = _native_code
    return native if native is not None else _load_native()


def _load_native() -> _Native:
    global _native_code
    with _native_lock:
        if _native_code is None:
            _native_code = _Native()
        return _native_code


class _Workers:
    """`count` native worker threads sharing one pool state (see pool_ir.py)."""

    def __init__(self, count: int):
        native = _native()
        self._state = lanes.Arena(pool_ir.STATE_BYTES)
        ctypes.memset(self._state.address, 0, pool_ir.STATE_BYTES)
        self._arenas = [lanes.Arena() for _ in range(count)]  # for workers 1..count
        self._table = (ctypes.c_void_p * (count + 1))()  # by worker index; 0 is the caller's lane
        self._publish_table()
        self._args = (ctypes.c_uint64 * (2 * (count + 1)))()
        self._threads = (ctypes.c_uint64 * (count + 1))()
        libc = ctypes.CDLL(None)
        self.count = 0  # the workers started so far, which `stop` joins
        try:  # a Ctrl-C too: workers left running on this state would outlive its memory
            for index in range(1, count + 1):
                self._args[2 * index] = self._state.address
                self._args[2 * index + 1] = index
                arg = ctypes.addressof(self._args) + index * pool_ir.WORKER_ARG_BYTES
                error = libc.pthread_create(
                    ctypes.byref(self._threads, 8 * index),
                    None,
                    ctypes.c_void_p(native.worker),
                    ctypes.c_void_p(arg),
                )
                if error:
                    raise OSError(error, f"pthread_create failed for worker {index}")
                self.count = index
        except BaseException:
            _abandoned.append(self)  # a worker made but not yet counted may still read it
            self.stop()
            raise

    @property
    def state(self) -> int:
        return self._state.address

    def _publish_table(self) -> None:
        for index, arena in enumerate(self._arenas, start=1):
            self._table[index] = arena.address
        table = ctypes.c_uint64.from_address(self._state.address + pool_ir.SCRATCH_TABLE)
        table.value = ctypes.addressof(self._table)

    def reserve(self, scratch_bytes: int) -> None:
        """Grow every worker's arena to `scratch_bytes`; only between launches."""
        moved = [arena.reserve(scratch_bytes) for arena in self._arenas]
        if any(moved):
            self._publish_table()

    def stop(self) -> None:
        """Make every worker return and join it."""
        _native().stop(self._state.address)
        libc = ctypes.CDLL(None)
        for index in range(1, self.count + 1):
            libc.pthread_join(ctypes.c_uint64(self._threads[index]), None)


_workers: _Workers | None = None
_workers_lock = threading.Lock()
_abandoned: list = []  # what cancelled launches whose programs did not end still use


# Linux's cgroup v2 CPU limit of this process's group: "<quota> <period>" (µs) or "max <period>".
CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"


@functools.cache
def _available_cpus() -> int:
    """The CPUs this process may run on, and no more than its cgroup's CPU quota gives time
    for: a container often sees every CPU of its host with the time of a few, and workers past
    that share the same few cores, each preempted while it holds a chunk."""
    if hasattr(os, "sched_getaffinity"):
        cpus = len(os.sched_getaffinity(0))
    else:
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpus(CGROUP_CPU_MAX)
    return cpus if quota is None else max(1, min(cpus, quota))


def _cgroup_cpus(path: str) -> int | None:
    """The whole CPUs a cgroup v2 `cpu.max` file allows (at least 1), None where it sets no
    limit or cannot be read."""
    try:
        with open(path) as f:
            quota, period = f.read().split()
        return None if quota == "max" else max(1, int(quota) // int(period))
    except (OSError, ValueError):
        return None


def thread_count() -> int:
    """How many threads run the programs of a large grid (`NAIAD_NUM_THREADS`)."""
    count = knobs.num_threads.get() or _available_cpus()
    return min(count, pool_ir.MAX_WORKERS + 1)


def run(
    entry_address: int,
    params,
    n_programs: int,
    scratch_bytes: int,
    sites,
    threads: int | None = None,
) -> None:
    """Run programs 0 .. n_programs-1 of a compiled kernel.

    Args:
        entry_address: the kernel's entry point (`LoadedObject.address`), following `abi.py`.
        params: the parameter block (grid size first): a ctypes array, a C-contiguous NumPy int64
            array, or its address as an int. It must stay alive during the call.
        n_programs: gx * gy * gz.
        scratch_bytes: the per-worker scratch the kernel needs (its metadata).
        sites: the kernel's site table (site id → (file, line, message)), read only on failure.
        threads: at most this many threads (1: every program in order on the calling thread);
            None: `thread_count()`.

    Raises:
        KernelAssertionError, KernelIndexError: a program failed; located at the site's line.
    """
    params_address = _address(params)
    lane = lanes.lane()
    lane.scratch.reserve(scratch_bytes)
    if n_programs < INLINE_BELOW:  # no settings read: this is the path of tiny launches
        code = lanes.run_direct(entry_address, params_address, n_programs, lane)
    else:
        threads = thread_count() if threads is None else min(threads, thread_count())
        if threads == 1:  # one chunk of every program, on the lane's own state
            job = (entry_address, params_address, n_programs, n_programs, 0)
            code = _drive(lane.state.address, job, lane, params)
        else:
            code = _run_on_workers(
                entry_address, params_address, n_programs, scratch_bytes, threads, lane, params
            )
    if code:
        lanes.raise_fault(lane, params_address, sites)


def _run_on_workers(entry, params, n_programs, scratch_bytes, threads, lane, keep) -> int:
    global _workers
    chunk = -(-n_programs // (threads * CHUNKS_PER_THREAD))
    chunks = -(-n_programs // chunk)
    invited = min(threads - 1, chunks - 1)
    with _workers_lock:
        if _workers is None or _workers.count != threads - 1:
            if _workers is not None:
                _workers.stop()
                _workers = None  # not left holding stopped workers if starting new ones fails
            _workers = _Workers(threads - 1)
        _workers.reserve(scratch_bytes)
        job = (entry, params, n_programs, chunk, invited)
        return _drive(_workers.state, job, lane, keep, _workers)


def _drive(state: int, job: tuple, lane: lanes.Lane, keep, workers=None) -> int:
    """Run `job` (entry, params, programs, chunk, workers invited) on pool `state` to its end,
    one slice at a time (pool_caller_ir.py), and return its status code. Between slices Python
    runs its signal handlers: a KeyboardInterrupt (or any exception they raise) cancels the
    launch, waits for the programs running, and is raised."""
    native = _native()
    scratch = lane.scratch.address
    try:
        code = native.launch(state, *job, scratch, lane.status.address, SLICE_NS)
        while code == pool_caller_ir.PENDING:
            code = native.resume(state, scratch, SLICE_NS)
    except BaseException:
        _cancel(native, state, lane, keep, workers)
        raise
    return code


def _cancel(native, state: int, lane: lanes.Lane, keep, workers) -> None:
    """Stop the launch on `state`: no program starts after the ones running (a failed program
    stops a launch so too: abi.py), whose end is waited for. A program may never end (a
    spin lock handed down the grid waits for one that will not run now): a second Ctrl-C
    while waiting abandons the launch, which keeps its memory (`_abandoned`) while its
    threads run; they return when their programs end. The next launch starts new workers."""
    global _workers
    native.cancel(lane.status.address)
    try:
        while native.resume(state, lane.scratch.address, SLICE_NS) == pool_caller_ir.PENDING:
            pass
    except KeyboardInterrupt:
        _abandoned.append((lane, keep, workers))
        lanes.local.lane = lanes.Lane()
        if workers is not None:
            native.stop(state)
            if _workers is workers:
                _workers = None


def _address(params) -> int:
    if isinstance(params, int):
        return params
    if isinstance(params, np.ndarray):
        if params.dtype != np.int64 or not params.flags.c_contiguous:
            raise TypeError("a parameter block is a C-contiguous int64 array")
        return params.ctypes.data
    return ctypes.addressof(params)


def shutdown() -> None:
    """Stop and join the worker threads; the next large launch starts new ones."""
    global _workers
    with _workers_lock:
        if _workers is not None:
            _workers.stop()
            _workers = None


def _after_fork_in_child() -> None:
    """The child has only the forking thread: forget the parent's workers (their state and
    arenas are plain memory; no thread waits on them here) and any lock another thread held."""
    global _workers, _workers_lock, _native_lock
    _workers = None
    _workers_lock = threading.Lock()
    _native_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(shutdown)
