"""The tutorials' memory-bound kernels compiled for the GPU (TTIR -> TTGIR -> LLVM -> PTX ->
cubin) and launched on torch CUDA tensors: vector add, fused softmax, layer norm forward,
against torch (float64 references) and against the interpreter on the same inputs; plus the
launcher's clear errors and a launch inside CUDA graph capture.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

import naiad

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"gpu_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    """Launches on CUDA tensors compile for the GPU (the test-wide default is the
    interpreter)."""
    monkeypatch.setenv("NAIAD_BACKEND", "auto")


def interpreted(monkeypatch, run):
    """`run()` in the interpreter (the executable reference), then back to compiled."""
    monkeypatch.setenv("NAIAD_BACKEND", "interpreter")
    try:
        return run()
    finally:
        monkeypatch.setenv("NAIAD_BACKEND", "auto")


def relative_error(out, ref) -> float:
    diff = out.double() - ref
    return float(diff.norm() / ref.norm())


@pytest.mark.parametrize("size", [1, 1000, 98432, 1 << 20])
def test_vector_add(size, monkeypatch):
    add = example("01_vector_add")
    torch.manual_seed(size)
    x = torch.rand(size, device="cuda")
    y = torch.rand(size, device="cuda")
    out = add.add(x, y)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)  # one rounded add, as torch
    reference = interpreted(monkeypatch, lambda: add.add(x, y))
    assert torch.equal(out, reference)


@pytest.mark.parametrize("shape", [(64, 781), (1823, 781), (256, 4096)])
def test_fused_softmax(shape, monkeypatch):
    softmax = example("02_fused_softmax")
    torch.manual_seed(shape[1])
    x = torch.randn(*shape, device="cuda")
    y = softmax.softmax(x)
    ref = torch.softmax(x.double(), dim=1)
    # ex2.approx and div.full, as Triton's: a few ulp per element
    assert relative_error(y, ref) <= 1e-6
    reference = interpreted(monkeypatch, lambda: softmax.softmax(x))
    torch.testing.assert_close(y, reference, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("shape", [(64, 1000), (128, 4096), (32, 8192)])
def test_layer_norm_forward(shape, monkeypatch):
    layer_norm = example("05_layer_norm")
    torch.manual_seed(shape[1])
    m, n = shape
    x = torch.randn(m, n, device="cuda", dtype=torch.float16)
    w = torch.rand(n, device="cuda", dtype=torch.float16)
    b = torch.rand(n, device="cuda", dtype=torch.float16)

    def run():
        y = torch.full_like(x, float("nan"))
        mean = torch.full((m,), float("nan"), device="cuda")
        rstd = torch.full((m,), float("nan"), device="cuda")
        block = min(65536 // x.element_size(), naiad.next_power_of_2(n))
        layer_norm._layer_norm_fwd_fused[(m,)](
            x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK_SIZE=block, num_warps=8
        )
        return y, mean, rstd

    y, mean, rstd = run()
    ref = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double(), 1e-5)
    assert relative_error(y, ref) <= 2e-3  # f16 output
    torch.testing.assert_close(mean.double(), x.double().mean(dim=1), rtol=1e-5, atol=1e-5)
    y_i, _, rstd_i = interpreted(monkeypatch, run)
    torch.testing.assert_close(y, y_i, rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(rstd, rstd_i, rtol=1e-5, atol=1e-6)


# -- the launcher -------------------------------------------------------------------------------
def test_errors_of_a_bad_launch():
    add = example("01_vector_add")
    x = torch.rand(1000, device="cuda")
    with pytest.raises(ValueError, match=r"y_ptr`.*a tensor on cpu"):
        add.add_kernel[(1,)](x, torch.rand(1000), torch.empty_like(x), 1000, BLOCK_SIZE=1024)
    with pytest.raises(ValueError, match="grid dimension 1"):
        add.add_kernel[(1, 70000)](x, x, torch.empty_like(x), 1000, BLOCK_SIZE=1024)
    if torch.cuda.device_count() > 1:
        other = torch.rand(1000, device="cuda:1")
        with pytest.raises(ValueError, match=r"y_ptr`.* is on cuda:1"):
            add.add_kernel[(1,)](x, other, torch.empty_like(x), 1000, BLOCK_SIZE=1024)


def test_launches_are_captured_by_cuda_graphs():
    add = example("01_vector_add")
    x = torch.rand(4096, device="cuda")
    y = torch.rand(4096, device="cuda")
    out = torch.empty_like(x)
    add.add_kernel[(4,)](x, y, out, 4096, BLOCK_SIZE=1024)  # compiled and loaded outside
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        add.add_kernel[(4,)](x, y, out, 4096, BLOCK_SIZE=1024)
    out.fill_(float("nan"))
    x.copy_(torch.rand(4096, device="cuda"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_a_kernel_runs_on_its_tensors_device():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    add = example("01_vector_add")
    x = torch.rand(3000, device="cuda:1")
    y = torch.rand(3000, device="cuda:1")
    with torch.cuda.device(0):
        out = add.add(x, y)
    torch.cuda.synchronize(1)
    assert out.device.index == 1
    assert torch.equal(out, x + y)
