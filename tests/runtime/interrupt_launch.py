"""Ctrl-C during CPU launches (issue 13, item 7), in a process of its own.

    python interrupt_launch.py long|inline|stuck|first

long:   a launch of about a minute (programs of about 2 ms) on the worker pool gets SIGINT after
        0.5 s; prints `latency_ms=...`, the time from the signal to the KeyboardInterrupt, then
        checks that the next launches, small and large, compute right.
inline: the same with NAIAD_NUM_THREADS=1 (every program on the launching thread).
stuck:  on 2 threads, each program waits for the one before (a lock handed down the grid);
        after the first SIGINT (0.5 s), the worker's program mostly waits for one that will not
        run now, and the second (1.5 s) abandons the pool; then the next launches run on new
        workers. Prints `abandoned=N` (N pools).
first:  the first launch of a new kernel (its compile, its load, its run) is interrupted after
        0, 25, 50, ... ms; after each, the next launches must compute right (no half-made
        state left: compiled_once, the caches, the compile lock).
Prints `ok` last when every check passed. Before the fix, the long launch ran to its end (the
signal handler ran only when the launching thread came back from native code).
"""

import _thread
import os
import signal
import sys
import threading
import time

import numpy as np

import naiad
import naiad.language as tl
from naiad.backends.cpu import pool

LONG_S = 60.0  # the length of the launch that is interrupted, had it run to its end


@naiad.jit
def spin(out, iters, BLOCK: tl.constexpr):
    """Each program iterates a recurrence `iters` times."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = offs.to(tl.float32) * 1e-3
    acc = tl.zeros([BLOCK], tl.float32)
    for _ in tl.range(0, iters):
        acc = acc * 0.999 + x
    tl.store(out + offs, acc)


def expected(n_programs: int, iters: int, block: int = 16) -> np.ndarray:
    x = np.arange(n_programs * block, dtype=np.float32) * np.float32(1e-3)
    acc = np.zeros_like(x)
    for _ in range(iters):
        acc = acc * np.float32(0.999) + x
    return acc


def check_launch(kernel=spin, n_programs: int = 64, iters: int = 50) -> None:
    out = np.full(n_programs * 16, np.nan, np.float32)
    kernel[(n_programs,)](out, iters, 16)
    np.testing.assert_allclose(out, expected(n_programs, iters), rtol=1e-5)


def seconds_per_program(iters: int, n_programs: int = 64) -> float:
    """A launch's time per program (once compiled): its share of the launch's wall time."""
    out = np.empty(n_programs * 16, np.float32)
    spin[(n_programs,)](out, iters, 16)
    start = time.perf_counter()
    spin[(n_programs,)](out, iters, 16)
    return (time.perf_counter() - start) / n_programs


def interrupt_long_launch() -> None:
    check_launch()
    iters = 2000
    while seconds_per_program(iters) < 1e-3:  # programs of 1 to 2 ms of wall time
        iters *= 2
    n_programs = int(LONG_S / seconds_per_program(iters))
    out = np.empty(n_programs * 16, np.float32)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()  # before the timer's start: the signal comes 0.5 s after it
    timer.start()
    try:
        spin[(n_programs,)](out, iters, 16)
    except KeyboardInterrupt:
        latency = time.perf_counter() - start - 0.5
        print(f"latency_ms={latency * 1e3:.1f} ({n_programs} programs, {iters} steps each)")
    else:
        raise SystemExit("the launch ran to its end")
    for _ in range(3):
        check_launch()
    check_launch(n_programs=512, iters=300)  # a large grid again, on the workers


@naiad.jit
def handed_down(counter, out, iters, BLOCK: tl.constexpr):
    """Program i waits until `counter` is i, works, then lets program i + 1 go."""
    pid = tl.program_id(0)
    while tl.atomic_add(counter, 0) != pid:
        pass
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for _ in tl.range(0, iters):
        acc = acc * 0.999 + 1.0
    tl.store(out + pid * BLOCK + offs, acc)
    tl.atomic_add(counter, 1)


def interrupt_a_stuck_launch() -> None:
    counter, out = np.zeros(1, np.int32), np.zeros(4000 * 16, np.float32)
    handed_down[(8,)](counter, out, 10, 16)
    assert counter[0] == 8
    counter[0] = 0
    for delay in (0.5, 1.5):
        threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT)).start()
    start = time.perf_counter()
    try:
        handed_down[(4000,)](counter, out, 200000, 16)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt {time.perf_counter() - start:.2f} s after the launch")
        print(f"abandoned={len(pool._abandoned)}")
    else:
        raise SystemExit("the launch ran to its end")
    for _ in range(3):
        check_launch()
    check_launch(n_programs=512, iters=300)


def interrupt_first_launches() -> None:
    interrupted = 0
    for delay_ms in range(0, 500, 25):

        @naiad.jit
        def fresh(out, iters, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = offs.to(tl.float32) * 1e-3
            acc = tl.zeros([BLOCK], tl.float32)
            for _ in tl.range(0, iters):
                acc = acc * 0.999 + x
            tl.store(out + offs, acc)

        timer = threading.Timer(delay_ms / 1e3, _thread.interrupt_main)
        try:
            timer.start()
            check_launch(fresh)
            time.sleep(1.0)  # an interrupt that comes after the launch lands here
        except KeyboardInterrupt:
            interrupted += 1
        timer.join()
        check_launch(fresh)
        check_launch(fresh, n_programs=512)
    print(f"{interrupted} first launches interrupted, each followed by right launches")


if __name__ == "__main__":
    # A user's program takes Ctrl-C as KeyboardInterrupt; a process started by a test runner's
    # worker (pytest-xdist's ignore SIGINT) inherits the signal ignored, and Python then keeps it
    # so: give this one a user's handler.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if sys.argv[1] in ("inline", "stuck"):
        os.environ["NAIAD_NUM_THREADS"] = "1" if sys.argv[1] == "inline" else "2"
    if sys.argv[1] == "first":
        interrupt_first_launches()
    elif sys.argv[1] == "stuck":
        interrupt_a_stuck_launch()
    else:
        interrupt_long_launch()
    print("ok", flush=True)
