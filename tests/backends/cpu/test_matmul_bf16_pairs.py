"""bf16 and fp8 dots on `vdpbf16ps` (codegen/lower_matmul_bf16.py), where this CPU has
AVX512-BF16 (fp8 operands widened to bf16, exactly, by cpu-widen-dot-operands).

Values against float64 with the tolerance table's bound for dots, and bit for bit against the
same kernel on f32 operands holding the same values with each pair of k swapped (the f32
micro-kernel's fused multiply-adds in increasing k then take each pair's second product first,
as `vdpbf16ps` does): full tiles, a tile of one vector (N = 16), B as stored and transposed
(packed pair by pair), A read in place and transposed (packed), an f32 accumulator given and a
bf16 output. Without AVX512-BF16 the same cases run through the f32 micro-kernel, whose order
is the unswapped one (test_matmul_narrow_operands.py checks the choice).
"""

import ml_dtypes
import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.backends.cpu.codegen.lower_matmul_bf16 import has_bf16_pairs
from naiad.testing import check

BF16 = np.dtype(ml_dtypes.bfloat16)
FP8E5 = np.dtype(ml_dtypes.float8_e5m2)
FP8E4 = np.dtype(ml_dtypes.float8_e4m3fn)


@naiad.jit
def _matmul(a_ptr, b_ptr, acc_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
            TB: tl.constexpr, OUT: tl.constexpr):  # fmt: skip
    """C = A @ B + ACC, A and B read transposed from a (K, M) and an (N, K) array when TB."""
    om, on, ok = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    if TB:
        a = tl.load(a_ptr + om[:, None] + ok[None, :] * M)
    else:
        a = tl.load(a_ptr + om[:, None] * K + ok[None, :])
    if TB:
        b = tl.load(b_ptr + ok[:, None] + on[None, :] * K)
    else:
        b = tl.load(b_ptr + ok[:, None] * N + on[None, :])
    co = om[:, None] * N + on[None, :]
    c = tl.dot(a, b, tl.load(acc_ptr + co))
    tl.store(c_ptr + co, c.to(OUT))


@pytest.fixture(autouse=True)
def compiled(cpu_fresh_cache):
    """A fresh cache (cpu_fresh_cache resets the compiler's), the kernel's compiled code
    forgotten on both sides."""
    _matmul.forget_compiled()
    yield
    _matmul.forget_compiled()


def _operands(m, n, k, seed, dtype=BF16):
    gen = np.random.default_rng(seed)
    a = gen.standard_normal((m, k)).astype(dtype)
    b = (gen.standard_normal((k, n)) * 100).astype(dtype)
    acc = gen.standard_normal((m, n)).astype(np.float32)
    return a, b, acc


def _run(a, b, acc, transposed, out=np.float32):
    m, k = a.shape
    n = b.shape[1]
    c = np.full((m, n), np.nan, out)
    a_given, b_given = (np.ascontiguousarray(x.T) for x in (a, b)) if transposed else (a, b)
    out_type = tl.float32 if out is np.float32 else tl.bfloat16
    _matmul[(1,)](a_given, b_given, acc, c, m, n, k, transposed, out_type)
    return c


def _in_f32(a, b, acc, transposed):
    """The kernel on f32 copies of the operands, in the order of the bf16 dot's sums: where this
    CPU has AVX512-BF16, with k's pairs swapped (k = 1, 0, 3, 2, ...), so that the f32 path's
    fused multiply-adds in increasing k take each pair's second product first as `vdpbf16ps`
    does; elsewhere as they are (the bf16 dot is the f32 path there)."""
    k = a.shape[1]
    order = np.arange(k)
    if has_bf16_pairs():
        order = order.reshape(-1, 2)[:, ::-1].reshape(-1)
    a32, b32 = (np.ascontiguousarray(x).astype(np.float32) for x in (a[:, order], b[order]))
    return _run(a32, b32, acc, transposed)


@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (64, 16, 64), (32, 128, 32), (16, 64, 256)])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", [BF16, FP8E5, FP8E4], ids=["bf16", "fp8e5", "fp8e4nv"])
def test_values_and_the_f32_paths_bits(m, n, k, transposed, dtype):
    a, b, acc = _operands(m, n, k, seed=m * n + k, dtype=dtype)
    c = _run(a, b, acc, transposed)
    reference = a.astype(np.float64) @ b.astype(np.float64) + acc
    check("dot", c, reference, "cpu", np.float32, k=k)
    same_in_f32 = _in_f32(a, b, acc, transposed)
    np.testing.assert_array_equal(c.view(np.uint32), same_in_f32.view(np.uint32))


def test_a_bf16_output_is_rounded_once():
    a, b, acc = _operands(32, 64, 64, seed=7)
    c = _run(a, b, acc, False, out=BF16)
    exact = _run(a, b, acc, False)
    np.testing.assert_array_equal(c.view(np.uint16), exact.astype(BF16).view(np.uint16))


@pytest.mark.parametrize("dtype", [FP8E5, FP8E4], ids=["fp8e5", "fp8e4nv"])
def test_fp8_infinities_and_nans_as_the_f32_path(dtype):
    """fp8e5's inf and NaN (and fp8e4nv's NaN) stay so on the way to bf16: a direct fp8e5 ->
    bf16 cast reads their bits as numbers."""
    a, b, acc = _operands(16, 32, 32, seed=11, dtype=dtype)
    specials = [np.inf, -np.inf, np.nan] if dtype == FP8E5 else [np.nan]
    a[0, :3] = np.resize(np.array(specials, dtype), 3)
    b[5, 7] = np.array(np.nan, dtype)
    c = _run(a, b, acc, False)
    same_in_f32 = _in_f32(a, b, acc, False)
    assert np.isnan(c[0]).any() and not np.isfinite(c[0]).all()
    np.testing.assert_array_equal(np.isnan(c), np.isnan(same_in_f32))
    finite = np.isfinite(same_in_f32)
    np.testing.assert_array_equal(c[finite].view(np.uint32), same_in_f32[finite].view(np.uint32))
