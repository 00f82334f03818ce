"""Loops carrying tensors: `while` with a trip count the data decides and `for` over a range,
on every back end (`-m gpu`: the GPU's, where the loop-carried tensors take the layouts of the
loads in the body; tests/backends/nvidia/test_passes_ttgir.py reads those layouts)."""

import numpy as np
from memory_helpers import assert_exact, kernel_error, poisoned, random_array, rng

import naiad
import naiad.language as tl


@naiad.jit
def _while_sum_and_max(x_ptr, limit_ptr, sum_ptr, max_ptr, BLOCK: tl.constexpr):
    """Rows of x, summed and maxed while the running sum's first element stays below a limit
    read from memory (so the trip count is the data's), at most 8 rows."""
    offs = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    peak = tl.full([BLOCK], float("-inf"), tl.float32)
    limit = tl.load(limit_ptr)
    row = 0
    while (row < 8) & (tl.sum(tl.where(offs == 0, total, 0.0), axis=0) < limit):
        x = tl.load(x_ptr + row * BLOCK + offs)
        total += x
        peak = tl.maximum(peak, x)
        row += 1
    tl.store(sum_ptr + offs, total)
    tl.store(max_ptr + offs, peak)


def _while_reference(x: np.ndarray, limit: float):
    total = np.zeros(x.shape[1], np.float32)
    peak = np.full(x.shape[1], -np.inf, np.float32)
    row = 0
    while row < 8 and total[0] < limit:
        total = total + x[row]
        peak = np.maximum(peak, x[row])
        row += 1
    return total, peak


def test_a_while_loop_carries_tensors_for_as_many_trips_as_the_data_says():
    gen = rng(11)
    x = np.abs(random_array((8, 256), "float32", gen)) + 0.5
    for limit in (1.0, float(x[:3, 0].sum()), 1e9):  # 1 trip, 4 trips, all 8
        total, peak = poisoned(256, "float32"), poisoned(256, "float32")
        _while_sum_and_max[(1,)](x, np.array([limit], np.float32), total, peak, BLOCK=256)
        want_total, want_peak = _while_reference(x, limit)
        assert_exact(total, want_total)
        assert_exact(peak, want_peak)


@naiad.jit
def _for_halving_average(x_ptr, out_ptr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """avg <- avg + (x - avg) / 2 over the rows: every step rounds once, a fused multiply-add
    included (halving is exact)."""
    offs = tl.arange(0, BLOCK)
    avg = tl.zeros([BLOCK], dtype=tl.float32)
    for row in range(ROWS):
        avg += (tl.load(x_ptr + row * BLOCK + offs) - avg) * 0.5
    tl.store(out_ptr + offs, avg)


def test_a_for_loop_carries_an_average():
    gen = rng(12)
    x = random_array((6, 512), "float32", gen)
    out = poisoned(512, "float32")
    _for_halving_average[(1,)](x, out, ROWS=6, BLOCK=512)
    avg = np.zeros(512, np.float32)
    for row in range(6):
        avg = avg + (x[row] - avg) * np.float32(0.5)
    assert_exact(out, avg)


@naiad.jit
def _unrolled_loops_widen(out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """Each row-major index of a ROWS x COLS block, made by widening an arange in loops that
    unroll (`tl.static_range`, a tuple): each trip rebinds the name to a block of another shape,
    which only a loop that carries values refuses."""
    index = tl.full((ROWS, COLS), 0, tl.int32)
    for axis in tl.static_range(2):
        size: tl.constexpr = (ROWS, COLS)[axis]
        stride: tl.constexpr = (COLS, 1)[axis]
        widened = tl.arange(0, size)
        for _ in tl.static_range(axis):
            widened = tl.expand_dims(widened, 0)
        for _ in (1,) * (1 - axis):
            widened = tl.expand_dims(widened, -1)
        index += widened * stride
    tl.store(out_ptr + index, index)


def test_a_loop_that_unrolls_may_rebind_a_name_to_another_shape():
    out = poisoned(8 * 16, "int32")
    _unrolled_loops_widen[(1,)](out, ROWS=8, COLS=16)
    assert_exact(out, np.arange(8 * 16, dtype=np.int32))


@naiad.jit
def _range_loop_widens(out_ptr, N: tl.constexpr):
    widened = tl.arange(0, N)
    for _ in range(2):
        widened = tl.expand_dims(widened, 0)
    tl.store(out_ptr + tl.arange(0, N), tl.reshape(widened, (N,)))


def test_a_range_loop_keeps_each_carried_values_type():
    with kernel_error("Loop-carried variable widened"):
        _range_loop_widens[(1,)](poisoned(16, "int32"), N=16)
