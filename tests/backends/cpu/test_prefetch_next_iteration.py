"""A block a loop reads at an offset computed from its induction variable is prefetched for the
next iteration (codegen/prefetch.py): the lines of the block read, never of one stored, nor of
one whose offset the loop carries or divides. Values against NumPy on seeded random data, over
grids that give each program one row, several, or none, and rows that follow on from each other
(one program: the prefetch skipped at run time) or lie apart. The grid-stride kernels here
would run their iterations in turn (codegen/interleave.py), which needs no prefetch; they are
lowered as plain loops, as one that does not qualify is (a loop carrying a value, an atomic)."""

import re

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.backends.cpu.codegen import module as codegen_module

pytestmark = pytest.mark.usefixtures("cpu_fresh_cache")


@pytest.fixture(autouse=True)
def plain_loops(monkeypatch):
    monkeypatch.setattr(codegen_module, "grid_stride_loop", lambda func_op: None)


@naiad.jit
def strided_rows(x_ptr, out_ptr, m, n, stride, BLOCK: tl.constexpr):
    """out = exp(x - max(x)) row by row, the programs striding over the rows (tutorial 02)."""
    cols = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), m, tl.num_programs(0)):
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=-float("inf"))
        tl.store(out_ptr + row * stride + cols, tl.exp(x - tl.max(x, 0)), mask=cols < n)


@naiad.jit
def row_pairs(x_ptr, out_ptr, m, stride, ROWS: tl.constexpr, COLS: tl.constexpr):
    """out[r] = 2 x[r] + 1 over 2-d blocks of ROWS rows, one block per iteration."""
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    for first in tl.range(tl.program_id(0) * ROWS, m, tl.num_programs(0) * ROWS):
        offsets = (first + rows) * stride + cols
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) * 2 + 1)


@naiad.jit
def carried_pointer(x_ptr, out_ptr, m, BLOCK: tl.constexpr):
    """Row sums read through a pointer the loop advances, and through a divided index."""
    ptrs = x_ptr + tl.arange(0, BLOCK)
    for row in range(m):
        halves = tl.load(x_ptr + (row // 2) * BLOCK + tl.arange(0, BLOCK))
        tl.store(out_ptr + row, tl.sum(tl.load(ptrs) + halves, 0))
        ptrs += BLOCK


def _prefetches(kernel) -> int:
    return len(re.findall(r"call void @llvm\.prefetch", kernel.asm["llir"]))


@pytest.mark.parametrize("programs", [1, 3, 40, 64])
def test_strided_rows_prefetch_the_next_row(programs):
    rng = np.random.default_rng(programs)
    m, n, stride = 40, 200, 256
    x = rng.standard_normal((m, stride)).astype(np.float32)
    out = np.full((m, stride), 7, np.float32)
    kernel = strided_rows[(programs,)](x, out, m, n, stride, BLOCK=256)
    # The 1 KiB row read: 16 lines and the last byte's (a row that starts mid-line spans 17).
    assert _prefetches(kernel) == 17
    want = np.exp(x[:, :n].astype(np.float64) - x[:, :n].max(axis=1, keepdims=True))
    np.testing.assert_allclose(out[:, :n], want, rtol=2e-6)
    np.testing.assert_array_equal(out[:, n:], 7)


def test_a_2d_block_prefetches_each_row():
    rng = np.random.default_rng(4)
    m, cols, stride = 24, 64, 80
    x = rng.standard_normal((m, stride)).astype(np.float32)
    out = np.zeros((m, stride), np.float32)
    kernel = row_pairs[(2,)](x, out, m, stride, ROWS=4, COLS=cols)
    assert _prefetches(kernel) == 4 * 5  # 4 rows of 256 bytes: 4 lines and the last byte's
    np.testing.assert_array_equal(out[:, :cols], x[:, :cols] * 2 + 1)


def test_carried_and_divided_offsets_are_left_to_the_hardware():
    rng = np.random.default_rng(6)
    m, block = 6, 32
    x = rng.standard_normal(m * block).astype(np.float32)
    out = np.zeros(m, np.float32)
    kernel = carried_pointer[(1,)](x, out, m, BLOCK=block)
    assert _prefetches(kernel) == 0
    rows = x.reshape(m, block).astype(np.float64)
    np.testing.assert_allclose(out, (rows + rows[np.arange(m) // 2]).sum(axis=1), rtol=1e-5)


def test_aarch64_prefetches_with_prfm():
    kernel = strided_rows.warmup(
        "*fp32", "*fp32", 40, 200, 256, BLOCK=256, grid=(4,), target="cpu:aarch64"
    )
    assert kernel.asm["asm"].count("prfm") == 17
