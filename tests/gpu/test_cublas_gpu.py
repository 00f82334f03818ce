"""On the GPU: `triton._C.libtriton.nvidia.cublas.CublasLt` (the reference GEMM of Triton's
tests) gives float64 NumPy's C = A @ B.T and D = alpha * A @ B.T + beta * C for each dtype of
Triton's, in place on CUDA tensors. The argument checks: tests/compat/test_cublas.py."""

import numpy as np
import pytest
import torch

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
