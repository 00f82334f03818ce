"""`tt.atomic_poll` compiled for NVIDIA GPUs without one: the PTX has Triton's shape (one
relaxed load at the poll's scope in the loop, one acquire fence after it, the global timer read
before the loop and in it only with a timeout, threads voting on a timed-out answer), uses no
shared memory, and ptxas assembles it for sm_90a and sm_80."""

import numpy as np
import pytest
from test_toolchain import assemble, needs_ptxas

import naiad
import naiad.language as tl


@naiad.jit
def _poll(flag, out, timeout_ns, SEM: tl.constexpr, SCOPE: tl.constexpr, TIMED: tl.constexpr):
    if TIMED:
        matched = tl.atomic_poll(flag, 1, sem=SEM, scope=SCOPE, timeout_ns=timeout_ns)
    else:
        matched = tl.atomic_poll(flag, 1, sem=SEM, scope=SCOPE)
    tl.store(out, matched)


def _ptx(dtype, arch, sem="acquire", scope="gpu", timed=False):
    flag, out = np.ones(1, dtype), np.zeros(1, np.bool_)
    compiled = _poll.warmup(
        flag, out, 0, SEM=sem, SCOPE=scope, TIMED=timed, grid=(1,), target=f"cuda:{arch}"
    )
    assert compiled.metadata.shared == 0
    return compiled.asm["ptx"]


@needs_ptxas
@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
@pytest.mark.parametrize("sem", ["acquire", "relaxed"])
@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_a_poll_is_one_relaxed_load_in_a_loop_then_a_fence(dtype, sem, scope, tmp_path):
    ptx = _ptx(dtype, "sm_90a", sem, scope)
    bits = np.dtype(dtype).itemsize * 8
    assert ptx.count(f"ld.relaxed.{scope}.global.b{bits}") == 1
    assert ptx.count(f"fence.acquire.{scope};") == (sem == "acquire")
    assert "%globaltimer" not in ptx and "bar.red" not in ptx and "atom." not in ptx
    assemble(ptx, "sm_90a", tmp_path)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_timed_poll_reads_the_global_timer_and_votes(arch, tmp_path):
    ptx = _ptx(np.int32, arch, timed=True)
    fence = "acquire" if arch == "sm_90a" else "acq_rel"  # fence.acquire is sm_90's, ISA 8.6
    assert ptx.count("ld.relaxed.gpu.global.b32") == 1
    assert ptx.count(f"fence.{fence}.gpu;") == 1
    assert ptx.count("%globaltimer") == 2
    assert ptx.count("bar.red.or.pred") == 1
    assert (".version 8.6" in ptx) == (arch == "sm_90a")
    assemble(ptx, arch, tmp_path)
