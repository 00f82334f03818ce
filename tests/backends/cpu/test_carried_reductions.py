"""`cpu-carried-reductions` (backends/cpu/carried_reductions.py): a block a loop carries only to
reduce it after the loop is reduced step by step in the loop, on the CPU.

Each kernel runs compiled (`NAIAD_BACKEND=cpu`) on seeded random data against NumPy (sums
within a few ulp of their magnitude, extrema and integers exactly); the CPU's TTGIR shows
whether the rewrite happened: the reduction inside the loop and no block carried, or, where
it is not legal, the kernel as written.
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs


@naiad.jit
def accumulate(x_ptr, out_ptr, n, OP: tl.constexpr, START: tl.constexpr, OTHER: tl.constexpr,
               BLOCK: tl.constexpr):  # fmt: skip
    row = tl.program_id(0)
    acc = tl.full([BLOCK], START, x_ptr.dtype.element_ty)
    for begin in range(0, n, BLOCK):
        cols = begin + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * n + cols, mask=cols < n, other=OTHER)
        if OP == "sum":
            acc += v
        elif OP == "max":
            acc = tl.maximum(acc, v)
        else:
            acc = acc ^ v
    if OP == "sum":
        result = tl.sum(acc, axis=0)
    elif OP == "max":
        result = tl.max(acc, axis=0)
    else:
        result = tl.xor_sum(acc, axis=0)
    tl.store(out_ptr + row, result)


@naiad.jit
def row_sums_of_tiles(x_ptr, out_ptr, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """A [ROWS, BLOCK] block carried and summed along its rows after the loop."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    acc = tl.zeros([ROWS, BLOCK], tl.float32)
    for begin in range(0, n, BLOCK):
        acc += tl.load(x_ptr + rows[:, None] * n + begin + tl.arange(0, BLOCK)[None, :])
    tl.store(out_ptr + rows, tl.sum(acc, axis=1))


@naiad.jit
def sum_and_keep(x_ptr, out_ptr, kept_ptr, n, BLOCK: tl.constexpr):
    """The block is stored too after the loop: not rewritten."""
    acc = tl.zeros([BLOCK], tl.float32)
    for begin in range(0, n, BLOCK):
        acc += tl.load(x_ptr + begin + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.sum(acc, axis=0))
    tl.store(kept_ptr + tl.arange(0, BLOCK), acc)


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


def _rows(rows, n, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-(2**20), 2**20, size=(rows, n)).astype(dtype)
    return rng.standard_normal((rows, n)).astype(dtype)


def _carries(kernel, block: str) -> bool:
    """Whether the loop of `kernel`'s CPU TTGIR carries a `block` (a type, `tensor<128xf32>`),
    and so was left as written."""
    (loop,) = [line for line in kernel.asm["ttgir"].splitlines() if "scf.for" in line]
    return block in loop


@pytest.mark.parametrize(("op", "dtype", "start"), [
    ("sum", np.float32, 0.0), ("sum", np.float32, 0.25), ("max", np.float32, float("-inf")),
    ("xor", np.int32, 0), ("sum", np.int64, 3),
])  # fmt: skip
@pytest.mark.parametrize("n", [700, 1024, 64])
def test_carried_blocks_reduced_in_the_loop(op, dtype, start, n):
    x = _rows(4, n, dtype, n)
    out = np.empty(4, dtype)
    other = float("-inf") if op == "max" else 0
    kernel = accumulate[(4,)](x, out, n, op, start, other, 128)
    block = np.full((4, 128), start, dtype)
    if op == "sum":
        if np.issubdtype(dtype, np.integer):
            np.testing.assert_array_equal(out, x.sum(axis=1) + block.sum(axis=1))
        else:
            want = x.astype(np.float64).sum(axis=1) + block.sum(axis=1)
            bound = 8 * np.finfo(dtype).eps * (np.abs(x).astype(np.float64).sum(axis=1) + 32)
            np.testing.assert_array_less(np.abs(out - want), bound)
    elif op == "max":
        np.testing.assert_array_equal(out, x.max(axis=1))
    else:
        np.testing.assert_array_equal(out, np.bitwise_xor.reduce(x, axis=1))
    assert not _carries(kernel, "tensor<128x")


def test_a_tile_carried_and_summed_along_its_rows():
    x = _rows(16, 512, np.float32, 5)
    out = np.empty(16, np.float32)
    kernel = row_sums_of_tiles[(2,)](x, out, 512, 8, 64)
    want = x.astype(np.float64).sum(axis=1)
    np.testing.assert_array_less(np.abs(out - want), 8e-6 * np.abs(x).sum(axis=1))
    assert not _carries(kernel, "tensor<8x64xf32>")


def test_a_block_read_after_the_loop_stays_carried():
    x = _rows(1, 256, np.float32, 6)[0]
    out, kept = np.empty(1, np.float32), np.empty(64, np.float32)
    kernel = sum_and_keep[(1,)](x, out, kept, 256, 64)
    np.testing.assert_allclose(kept, x.reshape(4, 64).sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-5)
    assert _carries(kernel, "tensor<64xf32>")
