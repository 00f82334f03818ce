"""A background compile in LLVM's long calls (optimization, emission) lets other threads take
the compile lock: a launch the interpreter runs while a kernel compiles in the background waits
for no LLVM call of it (Compilation.unlocked, compile_lock.released)."""

import threading

import numpy as np

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu import llvm_tools
from naiad.runtime import cpu_tiering
from naiad.runtime.compile_lock import compile_lock


@naiad.jit
def scaled(x, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offsets, tl.load(x + offsets, mask=offsets < n) * 3, mask=offsets < n)


def test_another_thread_takes_the_compile_lock_during_llvm_s_optimization(monkeypatch, fresh_cache):
    in_llvm, taken = threading.Event(), threading.Event()
    waited = []
    optimize = llvm_tools.optimize

    def waiting_optimize(*args, **kwargs):
        in_llvm.set()
        waited.append(taken.wait(30))  # (the launching thread's turn: the lock is released)
        return optimize(*args, **kwargs)

    monkeypatch.setattr(llvm_tools, "optimize", waiting_optimize)
    x = np.random.default_rng(0).standard_normal(100).astype(np.float32)
    outputs = np.zeros_like(x), np.zeros_like(x)
    with knobs.override(NAIAD_BACKEND="auto", NAIAD_CPU_TIERING="auto"):
        scaled[(1,)](x, outputs[0], x.size, BLOCK=128)  # interpreted; compiles in the background
        assert in_llvm.wait(60)
        with compile_lock:
            taken.set()
        assert cpu_tiering.settled()
        scaled[(1,)](x, outputs[1], x.size, BLOCK=128)  # compiled
    assert waited and waited[0]
    np.testing.assert_array_equal(outputs[0], x * 3)
    np.testing.assert_array_equal(outputs[1], x * 3)
