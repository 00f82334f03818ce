"""Small grids of compiled CPU kernels run on the launching thread alone, without waking the
worker pool (runtime/cpu_inline_grid.py): the estimate read from real kernels' TTIR, and which
launches start the pool's workers, every program run exactly once either way."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu import pool
from naiad.runtime import cpu_inline_grid


@naiad.jit
def counted_scale(x, out, counts, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) * 2.5 + 1.0, mask=mask)
    tl.atomic_add(counts + pid, 1)


@naiad.jit
def counted_row_sums(x, out, counts, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x + pid * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.store(out + pid, tl.sum(acc, axis=0))
    tl.atomic_add(counts + pid, 1)


@naiad.jit
def fixed_loop(x, out, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(4):
        acc += tl.load(x + i * BLOCK + tl.arange(0, BLOCK))
    tl.store(out + tl.arange(0, BLOCK), acc)


@naiad.jit
def square_dot(a, b, c, N: tl.constexpr):
    idx = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(c + idx, tl.dot(tl.load(a + idx), tl.load(b + idx)))


@pytest.fixture(autouse=True)
def _compiled_on_two_threads():
    with knobs.override(NAIAD_BACKEND="cpu", NAIAD_CPU_TIERING="off", NAIAD_NUM_THREADS=2):
        pool.shutdown()  # no workers left by an earlier test
        yield
        pool.shutdown()


def _scale(n, block, grid, rng):
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    counts = np.zeros(grid, np.int32)
    kernel = counted_scale[(grid,)](x, out, counts, n, BLOCK=block)
    np.testing.assert_allclose(out, x.astype(np.float64) * 2.5 + 1.0, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(counts, 1)
    return kernel


def test_estimates_from_real_kernels():
    rng = np.random.default_rng(0)
    floor, work = cpu_inline_grid.PROGRAM_FLOOR, cpu_inline_grid.INLINE_WORK
    small = _scale(100, 16, 7, rng).asm["ttgir"]
    assert cpu_inline_grid.program_work(small) == floor
    assert cpu_inline_grid.inline_programs(small) == work // floor
    large = _scale(4096, 4096, 1, rng).asm["ttgir"]
    assert cpu_inline_grid.inline_programs(large) == work // 4096
    x = rng.standard_normal(4 * 64).astype(np.float32)
    out = np.full(64, np.nan, np.float32)
    looped = fixed_loop[(1,)](x, out, BLOCK=64).asm["ttgir"]
    np.testing.assert_allclose(out, x.reshape(4, 64).astype(np.float64).sum(0), rtol=1e-5)
    assert cpu_inline_grid.program_work(looped) == 4 * floor
    a, b = rng.standard_normal((2, 32, 32)).astype(np.float32)
    c = np.full((32, 32), np.nan, np.float32)
    dotted = square_dot[(1,)](a, b, c, N=32).asm["ttgir"]
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    assert cpu_inline_grid.program_work(dotted) == 32**3
    assert cpu_inline_grid.inline_programs(None) == 0


def test_small_grid_never_starts_the_workers():
    rng = np.random.default_rng(1)
    for _ in range(3):  # the first launch compiles (slow path), the others take the hot path
        _scale(64 * 16 - 3, 16, 64, rng)
    assert pool._workers is None
    _scale(65 * 16, 16, 65, rng)  # one program past the estimate: the pool's workers run it
    assert pool._workers is not None


def test_loop_of_argument_trips_uses_the_workers():
    """A loop's trips given by an argument could be millions: never inline on the estimate."""
    rng = np.random.default_rng(2)
    rows, cols = 6, 100
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.full(rows, np.nan, np.float32)
    counts = np.zeros(rows, np.int32)
    counted_row_sums[(rows,)](x, out, counts, cols, BLOCK=16)
    np.testing.assert_allclose(out, x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(counts, 1)
    assert pool._workers is not None
