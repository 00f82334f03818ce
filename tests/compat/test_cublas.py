"""`triton._C.libtriton.nvidia.cublas.CublasLt` (naiad/triton/_C/libtriton/nvidia/cublas.py):
imports through the switch as Triton's tests import it, checks its arguments as Triton's
bindings do, and computes C = A @ B.T and D = alpha * A @ B.T + beta * C against NumPy in
float64, on the CPU stand-in of a CPU workspace (the GPU runs: tests/gpu/test_cublas_gpu.py)."""

import numpy as np
import pytest
import torch
from test_switch import run_python

from naiad.triton._C.libtriton.nvidia.cublas import CublasLt


@pytest.fixture
def cublas():
    return CublasLt(torch.empty(1024, dtype=torch.uint8))


def _random(shape, dtype, seed):
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return torch.from_numpy(values).to(dtype)


def _reference(a, b):
    return a.double().numpy() @ b.double().numpy().T


@pytest.mark.parametrize(
    "dtype, rtol",
    [(torch.float16, 2e-3), (torch.bfloat16, 1e-2), (torch.float32, 1e-5),
     (torch.float8_e4m3fn, 7e-2)],
)  # fmt: skip
def test_matmul_is_a_times_b_transposed(cublas, dtype, rtol):
    a, b = _random((37, 24), dtype, 1), _random((19, 24), dtype, 2)
    c = torch.full((37, 19), float("nan")).to(dtype)
    cublas.matmul(a, b, c)
    expected = _reference(a, b)
    np.testing.assert_allclose(c.double().numpy(), expected, rtol=rtol, atol=rtol * 4)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float8_e4m3fn])
def test_gemm_scales_and_adds_a_float16_c(cublas, dtype):
    a, b = _random((16, 32), dtype, 3), _random((24, 32), dtype, 4)
    c = _random((16, 24), torch.float16, 5)
    d = torch.full((16, 24), float("nan")).to(dtype)
    cublas.gemm(a, b, c, d, 0.75, -1.5)
    expected = 0.75 * _reference(a, b) - 1.5 * c.double().numpy()
    tolerance = 1e-1 if dtype == torch.float8_e4m3fn else 1e-2
    np.testing.assert_allclose(d.double().numpy(), expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize(
    "a, b, c, message",
    [
        ((4, 8), (5, 8), (4, 6), r"expected C of \[4, 5\]"),
        ((4, 8), (5, 7), (4, 5), "B is given transposed"),
        ((2, 4, 8), (5, 8), (4, 5), "Only 2D"),
    ],
)
def test_shapes_are_checked(cublas, a, b, c, message):
    operands = [torch.ones(shape, dtype=torch.float16) for shape in (a, b, c)]
    with pytest.raises(ValueError, match=message):
        cublas.matmul(*operands)


def test_dtypes_are_checked(cublas):
    a, b = torch.ones(4, 8, dtype=torch.float16), torch.ones(5, 8, dtype=torch.float16)
    with pytest.raises(TypeError, match="Data types do not match"):
        cublas.matmul(a, b, torch.ones(4, 5, dtype=torch.float32))
    ints = [torch.ones(shape, dtype=torch.int32) for shape in ((4, 8), (5, 8), (4, 5))]
    with pytest.raises(TypeError, match=r"Unsupported data type torch\.int32"):
        cublas.matmul(*ints)
    with pytest.raises(TypeError, match="C dtype must be float16"):
        cublas.gemm(a, b, torch.ones(4, 5), torch.ones(4, 5, dtype=torch.float16), 1.0, 0.0)
    with pytest.raises(ValueError, match="C and D shapes must match"):
        c = torch.ones(5, 4, dtype=torch.float16)
        cublas.gemm(a, b, c, torch.ones(4, 5, dtype=torch.float16), 1.0, 0.0)


def test_workspace_and_devices_are_checked(cublas):
    with pytest.raises(TypeError, match=r"torch\.uint8 tensor"):
        CublasLt(torch.empty(16, dtype=torch.int8))
    a = torch.ones(4, 8, dtype=torch.float16, device="meta")
    with pytest.raises(ValueError, match="A is on meta, the workspace on cpu"):
        cublas.matmul(a, a, a)


def test_imports_through_the_switch_as_tritons_tests_do():
    out = run_python(
        """
        import naiad, torch
        naiad.install_as_triton()
        from triton._C.libtriton import nvidia
        import triton._C.libtriton.nvidia.cublas as module
        cublas = nvidia.cublas.CublasLt(torch.empty(64, dtype=torch.uint8))
        print(module.__spec__.name, type(cublas).__name__)
        """
    )
    assert out.split() == ["naiad.triton._C.libtriton.nvidia.cublas", "CublasLt"]
