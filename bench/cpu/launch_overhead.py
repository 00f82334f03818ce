"""CPU launch overhead: a cached `kernel[grid]` launch, loading a cached object, an inline launch
and a launch on the worker pool.

    python bench/cpu/launch_overhead.py [--threads N]

Measures the goal of issue 4 first: the host time of a cached launch of vector add (1024
elements, torch tensors, `add_kernel[(1,)](x, y, out, 1024, BLOCK=1024)`), 5 x 1000 launches
after 200 warm-ups, best of the 5, through the hot path (runtime/binder.py) and, for
comparison, through the full path every launch would take without it.

Then, on a hand-written entry point (abi.py) whose programs each compute and store one word:
- object load: linking a kernel's cached object code into the process (no LLVM optimizer or
  code generation);
- inline launch: `pool.run` of a 1-program grid, against a bare ctypes call of the entry
  point (the floor of any launch from Python);
- pool launch: `pool.run` of a grid of tiny programs on N threads (the native pool), against a
  pool of Python threads calling the entry point through ctypes (kept here only to justify the
  native pool's existence);
- scaling: a grid of heavier programs on 1 thread and on N threads.
Prints microseconds (medians); the Python-thread pool is never used by Naiad itself.
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import os
import platform
import statistics
import threading
import time

import numpy as np

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu import abi, llvm_tools, loader, pool
from naiad.backends.cpu.target import host_target


@naiad.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)


def cached_launch_us(hot_path: bool) -> float:
    """Microseconds per cached launch of vector add: 5 x 1000 launches after 200, the best.
    Without the hot path, each launch is the slow path's (jit.py `_run_slow`): it binds,
    specializes and dispatches in full."""
    import torch

    x, y = torch.rand(1024) + 0.5, torch.rand(1024) + 0.5
    out = torch.empty(1024)
    if hot_path:

        def launch():
            add_kernel[(1,)](x, y, out, 1024, BLOCK=1024)

    else:

        def launch():
            add_kernel._run_slow((x, y, out, 1024), {"BLOCK": 1024}, (1,), False, None, None)

    for _ in range(200):
        launch()
    if not torch.equal(out, x + y):
        raise SystemExit("vector add: wrong result")
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(1000):
            launch()
        times.append((time.perf_counter() - start) / 1000 * 1e6)
    return min(times)


# Program p steps a linear congruential generator `work` times from p and stores the result in
# out[p]: a tiny program when work = 1, a measurable one (and free of shared memory) when large.
KERNEL = """
define void @lcg(ptr %params, i64 %begin, i64 %end, ptr %scratch, ptr %status) {
entry:
  %out.slot = getelementptr i64, ptr %params, i64 3
  %out = load ptr, ptr %out.slot
  %work.slot = getelementptr i64, ptr %params, i64 4
  %work = load i64, ptr %work.slot
  %empty = icmp sge i64 %begin, %end
  br i1 %empty, label %exit, label %program
program:
  %pid = phi i64 [ %begin, %entry ], [ %pid.next, %done ]
  br label %repeat
repeat:
  %r = phi i64 [ 0, %program ], [ %r.next, %repeat ]
  %x = phi i64 [ %pid, %program ], [ %x.next, %repeat ]
  %x.mul = mul i64 %x, 6364136223846793005
  %x.next = add i64 %x.mul, 1442695040888963407
  %r.next = add i64 %r, 1
  %more = icmp slt i64 %r.next, %work
  br i1 %more, label %repeat, label %done
done:
  %slot = getelementptr i64, ptr %out, i64 %pid
  store i64 %x.next, ptr %slot
  %pid.next = add i64 %pid, 1
  %go = icmp slt i64 %pid.next, %end
  br i1 %go, label %program, label %exit
exit:
  ret void
}
"""


def small_grid_launch_us(threads: int, pause: float) -> float:
    """Microseconds per cached launch of vector add over 64 programs of 16 elements (torch
    tensors) with `threads` threads: median of 30 x 300 launches in a row (`pause` 0: the
    workers awake, where the launch uses them), or of 30 single launches each after `pause`
    seconds idle (workers asleep by then; the caches cold on a shared machine)."""
    import torch

    x, y = torch.rand(1024) + 0.5, torch.rand(1024) + 0.5
    out = torch.empty(1024)

    def launch():
        add_kernel[(64,)](x, y, out, 1024, BLOCK=16)

    with knobs.override(NAIAD_NUM_THREADS=threads):
        for _ in range(200):
            launch()
        if not torch.equal(out, x + y):
            raise SystemExit("vector add on 64 programs: wrong result")
        if pause:
            return median_us(launch, 30, 1, pause=pause)
        return median_us(launch, 30, 300)


def median_us(step, repeat: int, inner: int = 1, pause: float = 0.0) -> float:
    """Median over `repeat` timings of `inner` calls of `step`, per call, in microseconds; each
    timing after `pause` seconds of idling."""
    times = []
    for _ in range(repeat):
        time.sleep(pause)
        start = time.perf_counter()
        for _ in range(inner):
            step()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times) * 1e6


class PythonThreadPool:
    """The alternative to the native pool: Python threads that take chunks and call the entry
    point through ctypes (which releases the GIL during the call)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._start = [threading.Semaphore(0) for _ in range(workers)]
        self._done = threading.Semaphore(0)
        self._status = np.zeros(abi.STATUS_BYTES // 8, np.int64)
        self._scratch = [np.empty(4096, np.uint8) for _ in range(workers + 1)]
        self._job = None
        for index in range(workers):
            threading.Thread(target=self._work, args=(index,), daemon=True).start()

    def _chunks(self, index):
        function, params, n, chunk, counter = self._job
        scratch = self._scratch[index].ctypes.data
        status = self._status.ctypes.data
        while True:
            c = next(counter)  # atomic under the GIL
            if c * chunk >= n or self._status[0]:
                return
            function(params, c * chunk, min(n, (c + 1) * chunk), scratch, status)

    def _work(self, index):
        while True:
            self._start[index].acquire()
            self._chunks(index + 1)
            self._done.release()

    def run(self, function, params, n, chunk):
        self._status[:] = 0
        self._job = (function, params, n, chunk, itertools.count())
        for start in self._start:
            start.release()
        self._chunks(0)
        for _ in range(self.workers):
            self._done.acquire()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=pool.thread_count())
    threads = parser.parse_args().threads
    target = host_target()
    print(f"{platform.machine()}, {target.cpu}, {len(os.sched_getaffinity(0))} CPUs available")
    print(f"{llvm_tools.version()}; pool of {threads} threads\n")

    with knobs.override(NAIAD_BACKEND="cpu"):
        hot, full = cached_launch_us(True), cached_launch_us(False)
    print(f"cached launch of vector add (1024, torch): {hot:6.2f} us  (hot path)")
    print(f"                                           {full:6.2f} us  (full path, every launch)")
    for count in (threads, 1):  # 1 thread: the floor, no worker to wake
        with knobs.override(NAIAD_BACKEND="cpu"):
            awake, idle = small_grid_launch_us(count, 0.0), small_grid_launch_us(count, 0.005)
        print(f"the same on 64 programs of 16, {count} threads:  {awake:6.2f} us  (hot path)")
        print(f"  the same, after 5 ms idle:               {idle:6.2f} us")
    print()

    start = time.perf_counter()
    code = llvm_tools.compile_ir(KERNEL, target.machine, "lcg")
    print(f"compile IR -> object (first, cold):   {(time.perf_counter() - start) * 1e3:8.2f} ms")
    libraries = []  # kept: unloading is not what is measured
    load_us = median_us(lambda: libraries.append(loader.load_object(code, ["lcg"])), 30)
    print(f"load a cached object:                 {load_us:8.1f} us")

    entry = libraries[0].address("lcg")
    out = np.zeros(1 << 16, np.int64)
    block = (ctypes.c_int64 * 5)(1, 1, 1, out.ctypes.data, 1)
    sites = []
    pool.run(entry, block, 1, 0, sites)  # builds the pool's trampolines
    c_ptr, c_i64 = ctypes.c_void_p, ctypes.c_int64
    function = ctypes.CFUNCTYPE(None, c_ptr, c_i64, c_i64, c_ptr, c_ptr)(entry)
    status = np.zeros(abi.STATUS_BYTES // 8, np.int64)
    arguments = (ctypes.addressof(block), 0, 1, out.ctypes.data, status.ctypes.data)
    bare = median_us(lambda: function(*arguments), 30, 2000)
    inline = median_us(lambda: pool.run(entry, block, 1, 0, sites), 30, 2000)
    print(f"bare ctypes call of the entry point:  {bare:8.2f} us")
    print(f"inline launch, pool.run (1 program):  {inline:8.2f} us")

    n = 64
    block[0] = n
    with knobs.override(NAIAD_NUM_THREADS=threads):
        pool.run(entry, block, n, 0, sites)  # starts the workers
        native_us = median_us(lambda: pool.run(entry, block, n, 0, sites), 30, 300)
    chunk = -(-n // (threads * pool.CHUNKS_PER_THREAD))
    python_pool = PythonThreadPool(threads - 1)
    python_us = median_us(lambda: python_pool.run(function, block, n, chunk), 30, 300)
    with knobs.override(NAIAD_NUM_THREADS=threads):
        asleep_us = median_us(lambda: pool.run(entry, block, n, 0, sites), 30, 1, pause=0.005)
    python_asleep_us = median_us(
        lambda: python_pool.run(function, block, n, chunk), 30, 1, pause=0.005
    )
    print(f"pool launch, {n} tiny programs:        {native_us:8.1f} us  (native workers)")
    print(f"                                      {python_us:8.1f} us  (Python threads)")
    print(f"  the same, workers asleep (5 ms idle): {asleep_us:6.1f} us  (native workers)")
    print(f"                                      {python_asleep_us:8.1f} us  (Python threads)")

    n, work = 4096, 20_000
    block[0], block[4] = n, work
    timings = {}
    for count in (1, threads):
        with knobs.override(NAIAD_NUM_THREADS=count):
            timings[count] = median_us(lambda: pool.run(entry, block, n, 0, sites), 5)
    print(
        f"{n} programs x {work} steps:        {timings[1] / 1e3:8.2f} ms on 1 thread, "
        f"{timings[threads] / 1e3:.2f} ms on {threads} (x{timings[1] / timings[threads]:.1f})"
    )


if __name__ == "__main__":
    main()
