"""Grid-stride loops whose programs take turns (codegen/interleave.py): which kernels qualify,
the order one thread runs the iterations in (rows in order, each program's own in its order),
and values against float64 at 1 and 2 threads, grids with more programs than rows included."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs

pytestmark = pytest.mark.usefixtures("cpu_fresh_cache")


@naiad.jit
def softmax_rows(x_ptr, out_ptr, m, n, stride, BLOCK: tl.constexpr):
    """Tutorial 02's shape: each program walks every num_programs-th row."""
    cols = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), m, tl.num_programs(0)):
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=-float("inf"))
        e = tl.exp(x - tl.max(x, 0))
        tl.store(out_ptr + row * stride + cols, e / tl.sum(e, 0), mask=cols < n)


@naiad.jit
def clock_rows(clock_ptr, when_ptr, m):
    """Each iteration notes when it ran: a counter it reads and bumps (plain memory)."""
    for row in tl.range(tl.program_id(0), m, tl.num_programs(0)):
        now = tl.load(clock_ptr)
        tl.store(when_ptr + row, now)
        tl.store(clock_ptr, now + 1)


@naiad.jit
def counted_rows(x_ptr, out_ptr, count_ptr, m, BLOCK: tl.constexpr):
    """The same walk, counting its rows atomically: an atomic keeps programs whole."""
    cols = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), m, tl.num_programs(0)):
        tl.store(out_ptr + row * BLOCK + cols, tl.load(x_ptr + row * BLOCK + cols) + 1.0)
        tl.atomic_add(count_ptr, 1)


@naiad.jit
def column_blocks(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """One row a program, walked in column blocks: the loop starts at 0, not at the id."""
    row = tl.program_id(0)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        tl.store(out_ptr + row * n + cols, tl.load(x_ptr + row * n + cols) * 2.0, mask=cols < n)


def _in_turn(kernel) -> bool:
    return "turn:" in kernel.asm["llir"] or "turn.preheader" in kernel.asm["llir"]


def test_which_kernels_take_turns():
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    out = np.empty_like(x)
    assert _in_turn(softmax_rows[(3,)](x, out, 8, 64, 64, BLOCK=64))
    count = np.zeros(1, np.int32)
    assert not _in_turn(counted_rows[(3,)](x, out, count, 8, BLOCK=64))
    assert count[0] == 8
    np.testing.assert_array_equal(out, x + 1)
    assert not _in_turn(column_blocks[(8,)](x, out, 64, BLOCK=16))
    np.testing.assert_array_equal(out, x * 2)


def _clocked(programs: int, m: int) -> np.ndarray:
    clock = np.zeros(1, np.int32)
    when = np.full(m, -1, np.int32)
    with knobs.override(NAIAD_NUM_THREADS=1):
        clock_rows[(programs,)](clock, when, m)
    return when


@pytest.mark.parametrize("programs", [1, 4, 16, 100])
def test_one_thread_runs_each_program_in_order_and_the_rows_in_order_within_a_group(programs):
    m = 64
    when = _clocked(programs, m)
    assert sorted(when) == list(range(m))  # every row once
    for p in range(min(programs, m)):  # a program's rows in its own order
        assert np.all(np.diff(when[p::programs]) > 0)
    # The pool's first group is program 0 alone; the next is as many as fit a group's time
    # (the rest of these tiny programs), whose rows come in order. A thread preempted during
    # the first group makes the second one program again: a few tries.
    for _ in range(3):
        rest = [row for row in np.argsort(when) if row % programs != 0]
        if rest == sorted(rest):
            break
        when = _clocked(programs, m)
    assert rest == sorted(rest)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m, programs", [(7, 3), (64, 64), (1000, 64), (5, 16)])
def test_softmax_rows_against_float64(threads, m, programs):
    rng = np.random.default_rng(m * programs + threads)
    n, stride = 200, 256
    x = (rng.standard_normal((m, stride)) * 4).astype(np.float32)
    out = np.full((m, stride), 7, np.float32)
    softmax_rows.forget_compiled()
    with knobs.override(NAIAD_NUM_THREADS=threads):
        softmax_rows[(programs,)](x, out, m, n, stride, BLOCK=256)
    wide = x[:, :n].astype(np.float64)
    e = np.exp(wide - wide.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out[:, :n], e / e.sum(axis=1, keepdims=True), rtol=3e-6)
    np.testing.assert_array_equal(out[:, n:], 7)
