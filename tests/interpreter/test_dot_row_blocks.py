"""The interpreter's dots multiply in blocks of rows (one BLAS thread each): the values of one
`np.matmul`, on seeded inputs of the dot shapes of small kernels (2-D and batched, 16 to 256
rows, split in 2 or 4 blocks or not at all, transposed operands), fp16-, fp32- and fp64-valued.
Within float64's last bits, not bit for bit: a BLAS may take another kernel for a smaller block
on some CPUs (regions.one_thread_matmul)."""

import numpy as np
import pytest

from naiad.runtime.interpreter.regions import dot, one_thread_matmul

SHAPES = [(m, k, n) for m in (16, 64, 128, 256) for k in (16, 64, 128) for n in (16, 64, 128)]


def _same(got, want, shape):
    """Equal to float64's last bits (a relative 1e-14 of the row's largest term's scale)."""
    scale = np.abs(want).max() or 1.0
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14 * scale, err_msg=str(shape))


def _values(gen, shape, kind):
    x = gen.standard_normal(shape) * np.exp2(gen.integers(-12, 12, shape))
    return x.astype(kind).astype(np.float64)


@pytest.mark.parametrize("kind", [np.float16, np.float32, np.float64])
def test_row_blocks_give_one_matmuls_bits(kind):
    gen = np.random.default_rng(np.dtype(kind).itemsize)
    for m, k, n in SHAPES:
        lhs, rhs = _values(gen, (m, k), kind), _values(gen, (k, n), kind)
        _same(one_thread_matmul(lhs, rhs), np.matmul(lhs, rhs), (m, k, n))
        lhs_t = np.asfortranarray(lhs)  # a transposed operand (tl.trans) keeps its layout
        _same(one_thread_matmul(lhs_t, rhs), np.matmul(lhs_t, rhs), (m, k, n))


def test_batched_row_blocks():
    gen = np.random.default_rng(3)
    for m, k, n in [(128, 64, 64), (256, 128, 32), (64, 128, 128)]:
        lhs, rhs = _values(gen, (3, m, k), np.float16), _values(gen, (3, k, n), np.float16)
        got = one_thread_matmul(lhs, rhs)
        assert got.shape == (3, m, n)
        _same(got, np.matmul(lhs, rhs), (m, k, n))


def test_fp16_dot_accumulates_in_fp64_and_rounds_once():
    gen = np.random.default_rng(4)
    lhs = gen.standard_normal((128, 64)).astype(np.float16)
    rhs = gen.standard_normal((64, 64)).astype(np.float16)
    acc = gen.standard_normal((128, 64)).astype(np.float32)
    want = (lhs.astype(np.float64) @ rhs.astype(np.float64) + acc).astype(np.float32)
    assert np.array_equal(dot(lhs, rhs, acc, "ieee", np.float32), want)
