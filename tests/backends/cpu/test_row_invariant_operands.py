"""Operands of a generic that its innermost loop does not move through (codegen/lower_linalg.py).

A broadcast column (`m[:, None]`) is read once per row, before the row's loop: read inside it,
LLVM kept the load in the loop and left tutorial 06's exp2 over its scores scalar (issue 18).
Only inputs are read so: a reduction's accumulator, an output the body reads, changes as the row
runs. Values against NumPy on seeded random inputs; the exp2 loop is vectorized.
"""

import re

import numpy as np

import naiad
import naiad.language as tl

ROWS, COLS = 16, 64


@naiad.jit
def rescaled_exponentials(s_ptr, x_ptr, p_ptr, sums_ptr, acc_ptr, trips,
                          ROWS: tl.constexpr, COLS: tl.constexpr):  # fmt: skip
    """p = exp2(s - max(s)[:, None]) and its row sums; then `acc = acc * alpha[:, None] + x`
    carried through `trips` iterations, as attention's online softmax rescales."""
    offs = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    s = tl.load(s_ptr + offs)
    m = tl.max(s, 1)
    p = tl.math.exp2(s - m[:, None])
    tl.store(p_ptr + offs, p)
    tl.store(sums_ptr + tl.arange(0, ROWS), tl.sum(p, 1))
    alpha = tl.math.exp2(-tl.abs(m))
    acc = tl.zeros([ROWS, COLS], tl.float32)
    for _ in range(trips):
        acc = acc * alpha[:, None] + tl.load(x_ptr + offs)
    tl.store(acc_ptr + offs, acc)


@naiad.jit
def row_xor_sums(x_ptr, out_ptr, total_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """Integer reductions along the innermost axis, of a 2-d block and of a 1-d row."""
    offs = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + tl.arange(0, ROWS), tl.xor_sum(x, 1))
    tl.store(total_ptr, tl.xor_sum(tl.load(x_ptr + tl.arange(0, COLS)), 0))


def test_broadcast_columns_read_once_per_row(cpu_fresh_cache):
    rng = np.random.default_rng(1818)
    s = (rng.standard_normal((ROWS, COLS)) * 8).astype(np.float32)
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    p = np.full((ROWS, COLS), np.nan, np.float32)
    sums = np.full(ROWS, np.nan, np.float32)
    acc = np.full((ROWS, COLS), np.nan, np.float32)
    trips = 3
    kernel = rescaled_exponentials[(1,)](s, x, p, sums, acc, trips, ROWS=ROWS, COLS=COLS)

    s64 = s.astype(np.float64)
    m = s64.max(axis=1)
    want_p = np.exp2(s64 - m[:, None])
    alpha = np.exp2(-np.abs(m))
    want_acc = np.zeros((ROWS, COLS))
    for _ in range(trips):
        want_acc = want_acc * alpha[:, None] + x
    np.testing.assert_allclose(p, want_p, rtol=1e-5, atol=1e-30)
    np.testing.assert_allclose(sums, want_p.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(acc, want_acc, rtol=1e-5, atol=1e-6)
    # The exp2 polynomial runs on vectors, and no scalar copy of it is left.
    llir = kernel.asm["llir"]
    assert re.search(r"@llvm\.fma\.v\d+f32", llir)
    assert "@llvm.fma.f32(" not in llir


def test_reduction_accumulators_are_read_as_they_change(cpu_fresh_cache):
    x = np.random.default_rng(1819).integers(0, 256, (ROWS, COLS), dtype=np.uint8)
    out = np.zeros(ROWS, np.uint8)
    total = np.zeros(1, np.uint8)
    row_xor_sums[(1,)](x, out, total, ROWS=ROWS, COLS=COLS)
    np.testing.assert_array_equal(out, np.bitwise_xor.reduce(x, axis=1))
    np.testing.assert_array_equal(total, np.bitwise_xor.reduce(x[0])[None])
