"""int8 dots on `vpdpbusd` (codegen/lower_matmul_int8.py), where this CPU has AVX512-VNNI.

Exact values against an int64 reference wrapped to int32 (the i32 micro-kernel's result): full
tiles, a tile of one vector (N = 16), K of 16 (A copied 16 bytes at a time) and 256, A and B as
stored and transposed (packed byte by byte), bytes at the ends of the range (-128 and 127, where
A's flip to unsigned and the columns' correction must cancel exactly) and an accumulator near
the ends of int32 (the sums wrap). Without AVX512-VNNI the same cases run through the i32
micro-kernel (test_matmul_narrow_operands.py checks the choice).
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl


@naiad.jit
def _matmul(a_ptr, b_ptr, acc_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
            TA: tl.constexpr, TB: tl.constexpr):  # fmt: skip
    """C = A @ B + ACC, A read from a (K, M) array when TA, B from an (N, K) one when TB."""
    om, on, ok = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    if TA:
        a = tl.load(a_ptr + om[:, None] + ok[None, :] * M)
    else:
        a = tl.load(a_ptr + om[:, None] * K + ok[None, :])
    if TB:
        b = tl.load(b_ptr + ok[:, None] + on[None, :] * K)
    else:
        b = tl.load(b_ptr + ok[:, None] * N + on[None, :])
    co = om[:, None] * N + on[None, :]
    tl.store(c_ptr + co, tl.dot(a, b, tl.load(acc_ptr + co)))


@pytest.fixture(autouse=True)
def compiled(cpu_fresh_cache):
    """A fresh cache (cpu_fresh_cache resets the compiler's), the kernel's compiled code
    forgotten on both sides."""
    _matmul.forget_compiled()
    yield
    _matmul.forget_compiled()


def _run(a, b, acc, ta, tb):
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), np.int32)
    a_given = np.ascontiguousarray(a.T) if ta else a
    b_given = np.ascontiguousarray(b.T) if tb else b
    _matmul[(1,)](a_given, b_given, acc, c, m, n, k, ta, tb)
    return c


def _expected(a, b, acc):
    exact = a.astype(np.int64) @ b.astype(np.int64) + acc
    return ((exact + 2**31) % 2**32 - 2**31).astype(np.int32)


@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (64, 16, 64), (32, 128, 32), (16, 64, 256)])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
def test_values(m, n, k, ta, tb):
    gen = np.random.default_rng(m * n + k)
    a = gen.integers(-128, 128, (m, k), dtype=np.int8)
    b = gen.integers(-128, 128, (k, n), dtype=np.int8)
    acc = gen.integers(-(2**20), 2**20, (m, n), dtype=np.int32)
    np.testing.assert_array_equal(_run(a, b, acc, ta, tb), _expected(a, b, acc))


def test_the_ends_of_the_ranges_wrap_as_int32():
    gen = np.random.default_rng(9)
    m, n, k = 32, 64, 64
    a = gen.choice(np.array([-128, 127, -1, 1], np.int8), (m, k))
    b = gen.choice(np.array([-128, 127], np.int8), (k, n))
    acc = gen.choice(np.array([2**31 - 5, -(2**31) + 5], np.int32), (m, n))
    np.testing.assert_array_equal(_run(a, b, acc, False, False), _expected(a, b, acc))
