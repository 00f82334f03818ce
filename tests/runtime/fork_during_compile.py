"""Fork while another thread compiles (issue 13, item 7a): every child must compile and launch.

    python fork_during_compile.py FORKS

A thread compiles kernels in a loop (NAIAD_ALWAYS_COMPILE=1: every launch runs LLVM); the main
thread forks FORKS times, at random moments. Each child compiles and launches a kernel of its own
and checks its values, then exits 0; the parent gives each child TIMEOUT seconds. Before the fix,
a child forked while llvmlite's lock (or Naiad's compile lock) was held by the compiling thread
waited on it forever. Prints one line per child; exits 1 if any failed or hung.
"""

import os
import random
import signal
import sys
import threading
import time

import numpy as np

import naiad
import naiad.language as tl

TIMEOUT = 60.0


@naiad.jit
def scaled_copy(src, dst, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask) * SCALE, mask=mask)


def launch(scale: int) -> bool:
    """Compile (a new specialization per scale) and launch; whether the values are right."""
    src = np.arange(100, dtype=np.float32)
    dst = np.zeros_like(src)
    scaled_copy[(4,)](src, dst, 100, scale, 32)
    return bool(np.array_equal(dst, src * scale))


def compile_in_a_loop(stop: threading.Event, counts: list) -> None:
    scale = 0
    while not stop.is_set():
        scale += 1
        scaled_copy.forget_compiled()
        if not launch(scale % 7 + 2):
            counts.append(-1)
        counts.append(scale)


def child() -> None:
    ok = launch(1000 + os.getpid() % 1000)
    os._exit(0 if ok else 3)


def wait(pid: int) -> str:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return "ok" if code == 0 else f"exit {code}"
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return f"hung for {TIMEOUT:.0f} s"


def main(forks: int) -> int:
    launch(1)  # the pool and the JIT exist before the first fork
    stop, counts = threading.Event(), []
    thread = threading.Thread(target=compile_in_a_loop, args=(stop, counts), daemon=True)
    thread.start()
    gen = random.Random(7)
    results = []
    for _ in range(forks):
        time.sleep(gen.uniform(0.05, 0.3))
        pid = os.fork()
        if pid == 0:
            child()
        results.append(wait(pid))
        print(f"child {len(results)}: {results[-1]} ({len(counts)} compiles so far)", flush=True)
    stop.set()
    thread.join(TIMEOUT)
    if -1 in counts:
        print("the compiling thread computed wrong values", flush=True)
        return 1
    return 0 if all(r == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 6))
