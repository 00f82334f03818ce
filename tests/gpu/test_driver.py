"""The CUDA runtime on the GPU: hand-written LLVM IR kernels (tests/backends/nvidia/ir_kernels.py)
compiled for the device's target, loaded once per device and launched on torch CUDA tensors on
torch's current stream, against torch; inside CUDA graph capture; with more than 48 KB of dynamic
shared memory; and the clear errors of a bad launch.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import pytest
import torch
from backends.nvidia import ir_kernels  # tests/ is on sys.path (its conftest.py)

from naiad.backends.nvidia import driver
from naiad.backends.nvidia import target as nv_target
from naiad.runtime.driver import active

pytestmark = pytest.mark.gpu

THREADS = 128
SIZES = (1, 1000, 128 * 1024 + 7)  # one element, a tail, many blocks and a tail


def _arch() -> str:
    major, minor = torch.cuda.get_device_capability()
    return nv_target.target_for_capability(major, minor).arch


def _compile(ir: str, signature, shared: int = 0, **link_options):
    """(Cubin, CubinKernel) of `ir` for the current device's target, as the runtime runs it."""
    code, cubin = ir_kernels.compile_cubin(
        ir, _arch(), cuda_version=driver.driver_version(), **link_options
    )
    kernel = driver.CubinKernel(
        cubin.data, code.entry, signature, num_warps=THREADS // 32, shared=shared
    )
    return cubin, kernel


def _grid(n: int) -> tuple[int]:
    return ((n + THREADS - 1) // THREADS,)


def _stream() -> int:
    return active.get_current_stream(torch.cuda.current_device())


ADD_SIGNATURE = ("*fp32", "*fp32", "*fp32", "i32")
UNARY_SIGNATURE = ("*fp32", "*fp32", "i32")


@pytest.fixture(scope="module")
def add():
    return _compile(ir_kernels.ADD, ADD_SIGNATURE)


@pytest.mark.parametrize("n", SIZES)
def test_vector_add_against_torch(add, n):
    _, kernel = add
    generator = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n, device="cuda", generator=generator)
    y = torch.randn(n, device="cuda", generator=generator)
    out = torch.full((n + 1,), float("nan"), device="cuda")  # one past the end stays untouched
    kernel.launch(_grid(n), (x, y, out, n), _stream())
    torch.cuda.synchronize()
    assert torch.equal(out[:n], x + y)
    assert torch.isnan(out[n])


def test_libdevice_exp_against_torch():
    _, kernel = _compile(ir_kernels.EXP, UNARY_SIGNATURE)
    n = 100_000
    generator = torch.Generator(device="cuda").manual_seed(1)
    x = torch.rand(n, device="cuda", generator=generator) * 160 - 80
    out = torch.full_like(x, float("nan"))
    kernel.launch(_grid(n), (x, out, n), _stream())
    reference = torch.exp(x.double())
    relative = ((out.double() - reference).abs() / reference).max().item()
    assert relative <= 2 * 2.0**-23  # libdevice's expf is within 2 ulp


def test_resource_counts_agree_with_the_driver(add):
    cubin, kernel = add
    function = kernel.function(torch.cuda.current_device())
    assert (function.n_regs, function.local_bytes) == (cubin.n_regs, cubin.local_bytes)
    assert function.static_shared == cubin.static_shared
    local_cubin, local_kernel = _compile(ir_kernels.LOCAL_ARRAY, UNARY_SIGNATURE)
    local_function = local_kernel.function(torch.cuda.current_device())
    assert local_function.local_bytes == local_cubin.local_bytes >= 256


def test_graph_capture_records_and_replays(add):
    _, kernel = add
    n = 10_000
    generator = torch.Generator(device="cuda").manual_seed(2)
    x, y = (torch.randn(n, device="cuda", generator=generator) for _ in range(2))
    out = torch.empty_like(x)
    kernel.launch(_grid(n), (x, y, out, n), _stream())  # loads the module outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        kernel.launch(_grid(n), (x, y, out, n), _stream())
    for seed in (3, 4):
        generator.manual_seed(seed)
        x.copy_(torch.randn(n, device="cuda", generator=generator))
        y.copy_(torch.randn(n, device="cuda", generator=generator))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, x + y)


def test_more_than_48_kb_of_dynamic_shared_memory():
    _, kernel = _compile(ir_kernels.SWAP_NEIGHBOURS, UNARY_SIGNATURE, ir_kernels.SHARED_BYTES)
    n = 64 * THREADS
    x = torch.randn(n, device="cuda", generator=torch.Generator(device="cuda").manual_seed(5))
    out = torch.full_like(x, float("nan"))
    kernel.launch(_grid(n), (x, out, n), _stream())
    torch.cuda.synchronize()
    assert torch.equal(out, x.view(-1, 2).flip(1).reshape(-1))


def test_the_driver_linker_makes_the_same_kernel():
    cubin, kernel = _compile(ir_kernels.ADD, ADD_SIGNATURE, linker="driver")
    assert cubin.linker.startswith("CUDA driver")
    n = 5000
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    kernel.launch(_grid(n), (x, y, out, n), _stream())
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)
    assert cubin.n_regs == kernel.function(torch.cuda.current_device()).n_regs


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_kernel_runs_on_its_tensors_device(add):
    _, kernel = add
    n = 3000
    x, y = torch.randn(n, device="cuda:1"), torch.randn(n, device="cuda:1")
    out = torch.empty_like(x)
    assert torch.cuda.current_device() == 0
    kernel.launch(_grid(n), (x, y, out, n), active.get_current_stream(1))
    torch.cuda.synchronize(1)
    assert torch.equal(out, x + y)
    with pytest.raises(ValueError, match="share one device"):
        kernel.launch(_grid(n), (x, y.to("cuda:0"), out, n), _stream())


def test_clear_launch_errors(add):
    _, kernel = add
    x = torch.randn(16, device="cuda")
    with pytest.raises(ValueError, match=r"argument 1 of `add_kernel` is a tensor on cpu"):
        kernel.launch((1,), (x, x.cpu(), x, 16), _stream())
    with pytest.raises(ValueError, match="grid dimension 1 is 70000"):
        kernel.launch((1, 70000), (x, x, x, 16), _stream())
    with pytest.raises(driver.CudaError, match=r"cuModuleLoadData failed: CUDA_ERROR_\w+"):
        driver.load_function(b"not a cubin", "add_kernel", 0, 0)


def test_active_driver_answers_the_tutorials_questions():
    assert active.backend == "cuda"
    device = active.get_active_torch_device()
    properties = active.utils.get_device_properties(device.index)
    torch_properties = torch.cuda.get_device_properties(device)
    assert properties["multiprocessor_count"] == torch_properties.multi_processor_count
    assert properties["warpSize"] == 32
    assert properties["max_shared_mem"] > 48 * 1024
    assert properties["max_num_regs"] == 65536
    major, minor = torch.cuda.get_device_capability(device)
    assert active.get_current_target().arch == 10 * major + minor
    assert active.get_current_stream() == torch.cuda.current_stream().cuda_stream
    assert callable(active.get_benchmarker())
