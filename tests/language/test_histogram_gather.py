"""tl.gather (as torch.gather along an axis) and tl.histogram (unit-width bins from 0, int32
counts, optional mask) — Triton's test_gather, test_histogram and test_histogram_mask."""

import numpy as np
import pytest
from memory_helpers import (
    ONLY_THE_INTERPRETER_CHECKS,
    assert_exact,
    kernel_error,
    poisoned,
    random_array,
    rng,
)

import naiad
import naiad.language as tl


@naiad.jit
def _gather_kernel(
    src_ptr,
    idx_ptr,
    out_ptr,
    AXIS: tl.constexpr,
    S0: tl.constexpr,
    S1: tl.constexpr,
    I0: tl.constexpr,
    I1: tl.constexpr,
):
    src = tl.load(src_ptr + tl.arange(0, S0)[:, None] * S1 + tl.arange(0, S1)[None, :])
    idx_offs = tl.arange(0, I0)[:, None] * I1 + tl.arange(0, I1)[None, :]
    idx = tl.load(idx_ptr + idx_offs)
    out = tl.gather(src, idx, AXIS)
    tl.static_assert(out.dtype == src.dtype)
    tl.store(out_ptr + idx_offs, out)


@pytest.mark.parametrize(
    "src_shape,idx_shape,axis",
    [
        ((4, 4), (8, 4), 0),
        ((128, 64), (256, 64), 0),
        ((128, 64), (128, 128), 1),
        ((16, 32), (16, 8), -1),
    ],
)
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
def test_gather(src_shape, idx_shape, axis, idx_dtype):
    gen = rng(1)
    src = random_array(src_shape, np.float32, gen)
    idx = gen.integers(0, src_shape[axis], idx_shape).astype(idx_dtype)
    out = poisoned(idx_shape, np.float32)
    _gather_kernel[(1,)](src, idx, out, axis, *src_shape, *idx_shape)
    assert_exact(out, np.take_along_axis(src, idx.astype(np.int64), axis))


@pytest.mark.full
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("axis", [0, 1])
def test_gather_dtypes(dtype, axis):
    gen = rng(2)
    src = random_array((8, 16), dtype, gen)
    idx_shape = (32, 16) if axis == 0 else (8, 4)
    idx = gen.integers(0, src.shape[axis], idx_shape).astype(np.int32)
    out = poisoned(idx_shape, dtype)
    _gather_kernel[(1,)](src, idx, out, axis, 8, 16, *idx_shape)
    assert_exact(out, np.take_along_axis(src, idx.astype(np.int64), axis))


@naiad.jit
def _gather_1d(src_ptr, idx_ptr, out_ptr, N: tl.constexpr, K: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, N))
    idx = tl.load(idx_ptr + tl.arange(0, K))
    tl.store(out_ptr + tl.arange(0, K), src.gather(idx, 0))


def test_gather_1d_method():
    gen = rng(3)
    src = random_array(16, np.int32, gen)
    idx = gen.integers(0, 16, 64).astype(np.int32)
    out = poisoned(64, np.int32)
    _gather_1d[(1,)](src, idx, out, 16, 64)
    assert_exact(out, src[idx])


@pytest.mark.interpreter_only(ONLY_THE_INTERPRETER_CHECKS)
def test_gather_index_out_of_range_raises():
    src = np.ones(16, np.int32)
    idx = np.arange(4, dtype=np.int32)
    idx[2] = 16
    with kernel_error(r"gather index out of range \[0, 16\)", IndexError):
        _gather_1d[(1,)](src, idx, np.zeros(4, np.int32), 16, 4)
    idx[2] = -1
    with kernel_error("gather index out of range", IndexError):
        _gather_1d[(1,)](src, idx, np.zeros(4, np.int32), 16, 4)


@naiad.jit
def _bad_gather(src_ptr, WHICH: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    if WHICH == 0:
        tl.gather(src, tl.zeros((4, 4), tl.int32), 0)  # dim 1 differs from the source
    elif WHICH == 1:
        tl.gather(src, tl.zeros((4,), tl.int32), 0)  # rank differs
    elif WHICH == 2:
        tl.gather(src, tl.zeros((4, 8), tl.float32), 0)  # not an integer index
    else:
        tl.gather(src, tl.zeros((4, 8), tl.int32), 2)  # no axis 2


@pytest.mark.parametrize(
    "which,match", [(0, "must match"), (1, "same rank"), (2, "integer"), (3, "axis")]
)
def test_gather_errors(which, match):
    with kernel_error(match):
        _bad_gather[(1,)](np.ones(32, np.float32), which)


# -------------------------------------------------------------------------------------------------
# histogram
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _histogram_kernel(x_ptr, z_ptr, M: tl.constexpr, N: tl.constexpr):
    offset1 = tl.arange(0, M)
    offset2 = tl.arange(0, N)
    x = tl.load(x_ptr + offset1)
    z = tl.histogram(x, N)
    tl.static_assert(z.dtype == tl.int32 and z.shape[0] == N)
    bias = tl.full([M, N], 1, dtype=tl.int32)
    biased = z + bias  # the histogram broadcasts like any [N] block
    tl.store(z_ptr + offset1[:, None] * N + offset2[None, :], biased)


@pytest.mark.parametrize("m,n", [(2048, 2), (1024, 8), (1024, 128), (256, 512), (8, 2)])
def test_histogram(m, n):
    gen = rng(4)
    x = gen.integers(0, n, m).astype(np.int32)
    z = poisoned((m, n), np.int32)
    _histogram_kernel[(1,)](x, z, m, n)
    counts = np.bincount(x, minlength=n).astype(np.int32)
    assert_exact(z, np.broadcast_to(counts + 1, (m, n)))


@naiad.jit
def _histogram_mask(x_ptr, z_ptr, m, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)
    mask = offs < m
    x = tl.load(x_ptr + offs, mask=mask)  # masked lanes hold unspecified values
    tl.store(z_ptr + tl.arange(0, N), tl.histogram(x, N, mask=mask))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_histogram_with_mask(dtype):
    gen = rng(5)
    m, n = 100, 16
    x = gen.integers(0, n, m).astype(dtype)
    z = poisoned(n, np.int32)
    _histogram_mask[(1,)](x, z, m, 128, n)
    assert_exact(z, np.bincount(x.astype(np.int64), minlength=n).astype(np.int32))


@naiad.jit
def _histogram_float(x_ptr):
    tl.histogram(tl.load(x_ptr + tl.arange(0, 8)), 4)


def test_histogram_of_floats_raises():
    with kernel_error("integer"):
        _histogram_float[(1,)](np.ones(8, np.float32))


@naiad.jit
def _histogram_bins(x_ptr, N: tl.constexpr):
    tl.histogram(tl.load(x_ptr + tl.arange(0, 8)), N)


def test_histogram_bins_must_be_a_power_of_two():
    with kernel_error("power of 2"):
        _histogram_bins[(1,)](np.ones(8, np.int32), 6)
