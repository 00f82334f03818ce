"""Reshapes of loaded blocks compiled for the CPU (codegen/lower_tensor.py): a split of a
dimension is a view of the block whatever its strides, a merge of dimensions that lie one after
another is a view too, and any other reshape reads a contiguous copy. Each kernel loads a block
of rows from a matrix whose row stride is a run-time value, reshapes it and stores it; the
stored elements must be NumPy's reshape of the block, element for element."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs


@naiad.jit
def split_and_merge(x_ptr, out_ptr, stride, R: tl.constexpr, C: tl.constexpr, V: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    block = tl.load(x_ptr + rows * stride + cols)
    split = tl.reshape(block, [R, C // V, V])  # a view of the strided block
    doubled = tl.reshape(split * 2.0, [R, C])  # merged again
    tl.store(out_ptr + rows * C + cols, doubled)


@naiad.jit
def flatten(x_ptr, out_ptr, stride, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    block = tl.load(x_ptr + rows * stride + tl.arange(0, C)[None, :])
    flat = tl.reshape(block, [R * C])  # rows apart in memory: read from a copy
    tl.store(out_ptr + tl.arange(0, R * C), flat + 1.0)


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


@pytest.mark.parametrize(("rows", "cols", "lanes"), [(8, 256, 16), (4, 64, 8), (2, 32, 32)])
def test_a_split_and_a_merge_of_a_strided_block(rows, cols, lanes):
    x = np.random.default_rng(rows * cols).standard_normal((rows, cols + 24)).astype(np.float32)
    out = np.empty((rows, cols), np.float32)
    split_and_merge[(1,)](x, out, cols + 24, rows, cols, lanes)
    np.testing.assert_array_equal(out, x[:, :cols] * 2)


def test_a_strided_block_flattened():
    x = np.random.default_rng(7).standard_normal((4, 48)).astype(np.float32)
    out = np.empty(4 * 32, np.float32)
    flatten[(1,)](x, out, 48, 4, 32)
    np.testing.assert_array_equal(out, (x[:, :32] + 1).reshape(-1))
