"""Loop-carried accumulators that start as a splat (codegen/lower_control.py): not filled before
the loop, the first iteration reads the splat itself, and a loop that runs no iteration still
yields the splat.

Each kernel runs compiled (`NAIAD_BACKEND=cpu`) on seeded random data against NumPy, with loops
of zero, one and several iterations, a non-zero splat, a nested loop (the inner accumulator
starts again at each outer iteration) and an accumulator read before its update (which keeps
its fill). The LLVM IR of the layer-norm-like kernel has no fill left on its path.
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


@naiad.jit
def row_sums(x_ptr, out_ptr, n_cols, START: tl.constexpr, BLOCK: tl.constexpr):
    """out[row, :BLOCK] = START + the BLOCK-wide slices of the row, summed elementwise."""
    row = tl.program_id(0)
    acc = tl.full([BLOCK], START, dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), acc)


@naiad.jit
def nested_sums(x_ptr, out_ptr, n_outer, n_inner, BLOCK: tl.constexpr):
    """out[i, :] = Σ_j x[i, j, :] for each outer i: the inner accumulator restarts at zero."""
    cols = tl.arange(0, BLOCK)
    for i in range(0, n_outer):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for j in range(0, n_inner):
            acc += tl.load(x_ptr + (i * n_inner + j) * BLOCK + cols)
        tl.store(out_ptr + i * BLOCK + cols, acc)


@naiad.jit
def read_before_update(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """acc is read (scaled) before it is updated: its fill must stay."""
    cols = tl.arange(0, BLOCK)
    acc = tl.full([BLOCK], 1.0, dtype=tl.float32)
    for j in range(0, n):
        acc = acc * 0.5 + tl.load(x_ptr + j * BLOCK + cols)
    tl.store(out_ptr + cols, acc)


@pytest.mark.parametrize("n_cols", [0, 1, 100, 128, 300, 512])
@pytest.mark.parametrize("start", [0.0, 2.5])
def test_accumulator_starts_as_its_splat(n_cols, start):
    rng = np.random.default_rng(n_cols)
    rows, block = 5, 128
    x = rng.standard_normal((rows, max(n_cols, 1))).astype(np.float32)
    out = np.full((rows, block), np.nan, np.float32)
    row_sums[(rows,)](x, out, n_cols, START=start, BLOCK=block)
    padded = np.zeros((rows, -(-n_cols // block) * block), np.float32)
    padded[:, :n_cols] = x[:, :n_cols]
    expected = start + padded.reshape(rows, -1, block).sum(axis=1, dtype=np.float64)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n_inner", [0, 1, 4])
def test_inner_accumulator_restarts_each_outer_iteration(n_inner):
    rng = np.random.default_rng(10 + n_inner)
    outer, block = 3, 64
    x = rng.standard_normal((outer, max(n_inner, 1), block)).astype(np.float32)
    out = np.full((outer, block), np.nan, np.float32)
    nested_sums[(1,)](x, out, outer, n_inner, BLOCK=block)
    expected = x[:, :n_inner].sum(axis=1, dtype=np.float64)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_accumulator_read_before_its_update_keeps_its_fill(n):
    rng = np.random.default_rng(20 + n)
    block = 32
    x = rng.standard_normal((max(n, 1), block)).astype(np.float32)
    out = np.full(block, np.nan, np.float32)
    read_before_update[(1,)](x, out, n, BLOCK=block)
    expected = np.ones(block, np.float32)
    for j in range(n):
        expected = expected * np.float32(0.5) + x[j]
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_layer_norm_rows_fill_no_accumulator():
    """In the hot path of a row-sum loop no 4 KiB fill is left: the only fills are those of the
    loop that never ran and of a mask that cuts the row short (the padded snapshot)."""
    x = np.ones((2, 1024), np.float32)
    out = np.empty((2, 1024), np.float32)
    kernel = row_sums.warmup(x, out, 1024, START=0.0, BLOCK=1024, grid=(2,), target="cpu")
    llir = kernel.asm["llir"]
    fills = [line for line in llir.splitlines() if "call void @llvm.memset" in line]
    assert len(fills) <= 2, fills
