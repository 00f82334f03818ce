"""A kernel reads its launch's warps (`tl.extra.cuda.num_warps()`, `num_threads()`) as a
constexpr: the same kernel launched with 2, 4 and 8 warps in one process sizes its block by
each launch's own (Triton's test_core `test_num_threads`), on every executor, although a CPU
launch's other options (`num_stages`) share one compiled kernel."""

import numpy as np
import pytest
from memory_helpers import poisoned

import naiad
import naiad.language as tl
from naiad.language.extra import cuda


@naiad.jit
def mark_threads(out_ptr, WARPS_OUT: tl.constexpr):
    threads: tl.constexpr = cuda.num_threads()
    offsets = tl.arange(0, threads)
    tl.store(out_ptr + offsets, offsets + threads)
    if WARPS_OUT:
        tl.store(out_ptr + threads, cuda.num_warps())


@pytest.mark.parametrize("num_warps", [4, 8, 2, 8])
def test_a_launch_reads_its_own_warps(num_warps):
    out = poisoned((512,), np.int32)
    untouched = out.copy()
    mark_threads[(1,)](out, WARPS_OUT=True, num_warps=num_warps, num_stages=num_warps % 3 + 1)
    threads = 32 * num_warps
    np.testing.assert_array_equal(out[:threads], np.arange(threads) + threads)
    assert out[threads] == num_warps
    np.testing.assert_array_equal(out[threads + 1 :], untouched[threads + 1 :])
