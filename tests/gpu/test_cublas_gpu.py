"""On the GPU: `triton._C.libtriton.nvidia.cublas.CublasLt` (the reference GEMM of Triton's
tests) gives float64 NumPy's C = A @ B.T and D = alpha * A @ B.T + beta * C for each dtype of
Triton's, in place on CUDA tensors. The argument checks: tests/compat/test_cublas.py."""

import numpy as np
import pytest
import torch
from gpu_helpers import compiled  # noqa: F401 (autouse: launches compile for the GPU)

import naiad
import naiad.language as tl
from naiad.triton._C.libtriton.nvidia.cublas import CublasLt

pytestmark = pytest.mark.gpu

_TOLERANCES = {
    torch.float16: 2e-3,
    torch.bfloat16: 1e-2,
    torch.float32: 1e-5,
    torch.float8_e4m3fn: 7e-2,
}


@pytest.fixture(scope="module")
def cublas():
    return CublasLt(torch.empty(32 * 1024 * 1024, dtype=torch.uint8, device="cuda"))


def _random(shape, dtype, seed):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, device="cuda", generator=generator).to(dtype)


def _reference(a, b):
    return a.double().cpu().numpy() @ b.double().cpu().numpy().T


@pytest.mark.parametrize("dtype", list(_TOLERANCES))
@pytest.mark.parametrize("m, n, k", [(128, 256, 64), (300, 129, 520)])
def test_matmul(cublas, dtype, m, n, k):
    a, b = _random((m, k), dtype, 1), _random((n, k), dtype, 2)
    c = torch.full((m, n), float("nan"), device="cuda").to(dtype)
    cublas.matmul(a, b, c)
    rtol = _TOLERANCES[dtype]
    np.testing.assert_allclose(
        c.double().cpu().numpy(), _reference(a, b), rtol=rtol, atol=rtol * np.sqrt(k)
    )


@pytest.mark.parametrize("dtype", list(_TOLERANCES))
def test_gemm(cublas, dtype):
    a, b = _random((96, 128), dtype, 3), _random((64, 128), dtype, 4)
    c = _random((96, 64), torch.float16, 5)
    d = torch.full((96, 64), float("nan"), device="cuda").to(dtype)
    cublas.gemm(a, b, c, d, 0.5, 2.0)
    expected = 0.5 * _reference(a, b) + 2.0 * c.double().cpu().numpy()
    rtol = _TOLERANCES[dtype]
    np.testing.assert_allclose(d.double().cpu().numpy(), expected, rtol=rtol, atol=rtol * 12)


def test_operands_on_another_device_are_refused(cublas):
    a = torch.ones(4, 8, dtype=torch.float16)
    with pytest.raises(ValueError, match="A is on cpu"):
        cublas.matmul(a, a, a)


@naiad.jit
def _fp8_tiles(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B.T for [M, K] and [N, K] fp8 operands, rounded to fp8 as Triton's tests do."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rows[:, None] * K + (k + ks)[None, :])
        y = tl.load(b + cols[:, None] * K + (k + ks)[None, :])
        acc = tl.dot(x, y.T, acc)
    tl.store(c + rows[:, None] * tl.num_programs(1) * BN + cols[None, :], acc.to(tl.float8e4nv))


@pytest.mark.skipif(
    torch.cuda.is_available() and torch.cuda.get_device_capability() < (8, 9),
    reason="fp8 tensor cores from sm_89",
)
def test_fp8_matmul_agrees_with_a_tensor_core_dot(cublas):
    """The reference sums fp8 products as the tensor cores do (cuBLAS's fast accumulation,
    Triton's binding's choice): a Naiad `tl.dot` rounded to fp8 matches it within Triton's
    test tolerance (bit for bit on an H200), where exact float32 sums differ by one fp8 step
    in 0.5 % of elements."""
    m = n = 1024
    k = 512
    a, b = _random((m, k), torch.float8_e4m3fn, 6), _random((n, k), torch.float8_e4m3fn, 7)
    ours = torch.empty((m, n), device="cuda", dtype=torch.float8_e4m3fn)
    _fp8_tiles[(m // 128, n // 128)](a, b, ours, k, BM=128, BN=128, BK=64)
    reference = torch.empty_like(ours)
    cublas.matmul(a, b, reference)
    torch.testing.assert_close(reference.half(), ours.half(), atol=0.03, rtol=0.03)
