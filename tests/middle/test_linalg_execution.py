"""The Linalg form computes what the kernel means: kernels exercising the middle layer's harder
lowerings run compiled for this CPU (through Linalg) and in the interpreter, on the same seeded
random inputs, and agree bit for bit.

    pointer blocks carried by a loop by their start, rows wrapping around `% M` (several times
    when M is smaller than the block), two-sided boxes (`0 <= offs < n`: a window starting
    inside the block), `tl.gather`, `tl.histogram`, and the tutorial matmul itself.
"""

import numpy as np
import pytest
from fixture_kernels import tutorials

import naiad
import naiad.language as tl
from naiad.testing.differential import run_differential

EXECUTORS = ("interpreter", "cpu")


@naiad.jit
def wrapped_rows(x_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    rows = (pid * BM + tl.arange(0, BM)) % M
    cols = tl.arange(0, BN)
    ptrs = x_ptr + rows[:, None] * stride + cols[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    steps = tl.cdiv(N, BN)
    for k in range(0, steps):
        acc += tl.load(ptrs, mask=cols[None, :] < N - k * BN, other=1.5)
        ptrs += BN
    # After the loop, the pointers are the loop's result: the last columns again.
    acc -= tl.load(ptrs - BN, mask=cols[None, :] < N - (steps - 1) * BN, other=0.25)
    out_rows = pid * BM + tl.arange(0, BM)
    tl.store(out_ptr + out_rows[:, None] * BN + cols[None, :], acc)


@pytest.mark.parametrize("M", [5, 37])
def test_loop_carried_pointers_with_wrapped_rows(M):
    def args(rng):
        x = rng.standard_normal((M, 37)).astype(np.float32)
        out = np.empty((64, 16), np.float32)
        return dict(x_ptr=x, out_ptr=out, M=M, N=37, stride=37, BM=16, BN=16)

    run_differential(wrapped_rows, args, (4,), EXECUTORS, {"out_ptr": "add"})


@naiad.jit
def wrapped_store(x_ptr, out_ptr, M, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    # Columns wrap: block column j lands in column (j + 3) % M; later lanes win a collision.
    targets = (3 + cols) % M
    tl.store(out_ptr + rows[:, None] * M + targets[None, :], x)


def test_store_through_wrapped_columns_keeps_the_later_lane():
    def args(rng):
        x = rng.standard_normal((8, 16)).astype(np.float32)
        return dict(x_ptr=x, out_ptr=np.empty((8, 6), np.float32), M=6, BM=8, BN=16)

    run_differential(wrapped_store, args, (1,), EXECUTORS, {"out_ptr": "store"})


@naiad.jit
def shifted_window(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK - shift + tl.arange(0, BLOCK)
    inside = (offs >= 0) & (offs < n)
    x = tl.load(x_ptr + offs, mask=inside, other=-2.0)
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), x)
    tl.store(x_ptr + offs, x * 3.0, mask=inside)


def test_two_sided_boxes_start_inside_the_block():
    def args(rng):
        x = rng.standard_normal(100).astype(np.float32)
        return dict(x_ptr=x, out_ptr=np.empty(128, np.float32), n=100, shift=5, BLOCK=32)

    run_differential(shifted_window, args, (4,), EXECUTORS, {"out_ptr": "load", "x_ptr": "mul"})


@naiad.jit
def gather_histogram(x_ptr, index_ptr, out_ptr, counts_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    index = tl.load(index_ptr + rows[:, None] * BN + cols[None, :])
    tl.store(out_ptr + rows[:, None] * BN + cols[None, :], tl.gather(x, index, 0))
    values = tl.load(index_ptr + tl.arange(0, BM * BN)) - 2
    counts = tl.histogram(values, 8, mask=tl.arange(0, BM * BN) % 3 != 0)
    tl.store(counts_ptr + tl.arange(0, 8), counts)


def test_gather_and_histogram():
    def args(rng):
        x = rng.standard_normal((8, 16)).astype(np.float32)
        index = rng.integers(0, 8, size=(8, 16)).astype(np.int32)
        counts = np.empty(8, np.int32)
        return dict(
            x_ptr=x, index_ptr=index, out_ptr=np.empty_like(x), counts_ptr=counts, BM=8, BN=16
        )

    outputs = {"out_ptr": "gather", "counts_ptr": "histogram"}
    run_differential(gather_histogram, args, (1,), EXECUTORS, outputs)


def test_tutorial_matmul_with_wrapping_rows_and_columns():
    M, N, K = 20, 72, 40  # rows wrap several times in a block of 32; columns once

    def args(rng):
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((K, N)).astype(np.float16)
        return dict(
            a_ptr=a,
            b_ptr=b,
            c_ptr=np.empty((M, N), np.float16),
            M=M,
            N=N,
            K=K,
            stride_am=K,
            stride_ak=1,
            stride_bk=N,
            stride_bn=1,
            stride_cm=N,
            stride_cn=1,
            BLOCK_SIZE_M=32,
            BLOCK_SIZE_N=32,
            BLOCK_SIZE_K=16,
            GROUP_SIZE_M=2,
            ACTIVATION="leaky_relu",
        )

    grid = (1 * 3,)  # cdiv(M, 32) * cdiv(N, 32)
    run_differential(tutorials.matmul_kernel, args, grid, EXECUTORS, {"c_ptr": ("dot", K)})
