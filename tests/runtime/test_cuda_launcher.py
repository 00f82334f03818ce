"""The CUDA launcher without a GPU: the dispatch of CUDA tensors from `kernel[grid]`, and the
clear errors raised before any driver call (the binder and the hot path are
test_launch_fast_path.py's). Tensors are stand-ins with a `device` and
`data_ptr()`; the kernels' launches on a GPU are tests/gpu/test_examples_gpu.py's."""

from types import SimpleNamespace

import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.nvidia import driver as cuda_driver
from naiad.backends.nvidia.backend import NvidiaBackend
from naiad.runtime import cuda_launcher, cuda_parameters
from naiad.runtime.launch_options import LaunchOptions


class FakeDevice(SimpleNamespace):
    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeTensor:
    """What the launcher reads of a torch tensor."""

    def __init__(self, address: int, device: str = "cuda:0", dtype: str = "float32"):
        kind, _, index = device.partition(":")
        self.device = FakeDevice(type=kind, index=int(index) if index else None)
        self.dtype = dtype
        self._address = address

    def data_ptr(self) -> int:
        return self._address

    nbytes = 4096


@naiad.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs), mask=offs < n)


@pytest.fixture(autouse=True)
def no_driver(monkeypatch):
    """The device's architecture, which the launcher otherwise asks the driver."""
    monkeypatch.setattr(cuda_launcher, "_arch", lambda device: "cuda:sm_90a")


def _launcher_with(kinds, names):
    """A launcher whose one specialization is a CubinKernel of `kinds` (never loaded)."""
    launcher = cuda_launcher.CudaLauncher(add_kernel)
    launcher._current_stream = None
    names = tuple(f"argument `{name}`" for name in names)  # as the launcher names them
    kernel = cuda_driver.CubinKernel(b"", "add_kernel", kinds, arg_names=names)
    pointers = tuple(i for i, kind in enumerate(kinds) if kind.startswith("*"))
    launcher._compile = lambda spec, options, debug, device: cuda_launcher._Compiled(
        kernel, None, pointers
    )
    return launcher


def _bound(*values):
    return dict(zip(add_kernel.arg_names, values))


def test_a_cpu_tensor_among_cuda_tensors_is_named():
    launcher = _launcher_with(
        ("*fp32", "*fp32", "*fp32", "i32"), ("x_ptr", "y_ptr", "out_ptr", "n")
    )
    bound = _bound(FakeTensor(0), FakeTensor(16, "cpu"), FakeTensor(32), 100, 128)
    with pytest.raises(ValueError, match=r"y_ptr` of `add_kernel` is a tensor on cpu"):
        launcher.launch(bound, (1, 1, 1), LaunchOptions(), False)


def test_tensors_on_two_devices_are_refused():
    launcher = _launcher_with(
        ("*fp32", "*fp32", "*fp32", "i32"), ("x_ptr", "y_ptr", "out_ptr", "n")
    )
    bound = _bound(FakeTensor(0), FakeTensor(16, "cuda:1"), FakeTensor(32), 100, 128)
    with pytest.raises(ValueError, match=r"y_ptr` of `add_kernel` is on cuda:1"):
        launcher.launch(bound, (1, 1, 1), LaunchOptions(), False)


def test_a_grid_beyond_cuda_limits_is_refused():
    launcher = _launcher_with(
        ("*fp32", "*fp32", "*fp32", "i32"), ("x_ptr", "y_ptr", "out_ptr", "n")
    )
    bound = _bound(FakeTensor(0), FakeTensor(16), FakeTensor(32), 100, 128)
    with pytest.raises(ValueError, match="grid dimension 1 is 70000"):
        launcher.launch(bound, (1, 70000, 1), LaunchOptions(), False)


def test_cuda_tensors_go_to_the_cuda_launcher(monkeypatch):
    """`kernel[grid](...)` with a CUDA tensor launches compiled (not in the interpreter)."""
    calls = []
    monkeypatch.setenv("NAIAD_BACKEND", "auto")
    monkeypatch.setattr(
        cuda_launcher.CudaLauncher, "launch", lambda self, *args: calls.append(args)
    )
    x = FakeTensor(0)
    add_kernel[(3,)](x, x, x, 100, BLOCK=128)
    ((bound, grid, options, debug, _strict),) = calls
    assert grid == (3, 1, 1) and bound["n"] == 100 and options.num_warps == 4 and not debug


def test_the_selected_runtime_values_drop_constants():
    getter = cuda_parameters.tuple_getter([0, 2])
    assert getter(("a", "b", "c")) == ("a", "c")
    assert cuda_parameters.tuple_getter([1])(("a", "b")) == ("b",)


class _Hopper:
    capability = (9, 0)


_ARCH = cuda_launcher._arch  # the module's fixture stands a fixed target in for it


@pytest.mark.parametrize(
    "asked, target",
    [
        ("", "cuda:sm_90a"),
        ("sm_80", "cuda:sm_80"),
        ("cuda:sm_86", "cuda:sm_86"),
        ("sm80", "cuda:sm_80"),  # Triton's spellings (TRITON_OVERRIDE_ARCH, arch=)
        ("sm90", "cuda:sm_90a"),
    ],
)
def test_naiad_cuda_arch_compiles_for_an_older_architecture(monkeypatch, asked, target):
    """Unset: the device's own target; an older architecture's on request (its PTX runs on
    the newer device: CubinKernel loads it where the cubin does not)."""
    monkeypatch.setattr(cuda_launcher.cuda_driver, "device_properties", lambda device: _Hopper())
    with knobs.override(NAIAD_CUDA_ARCH=asked):
        assert _ARCH(0) == target
        assert NvidiaBackend().device_target(0) == target  # what warmup compiles for


class _Ampere:
    capability = (8, 6)


def test_naiad_cuda_arch_refuses_a_newer_or_unknown_architecture(monkeypatch):
    monkeypatch.setattr(cuda_launcher.cuda_driver, "device_properties", lambda device: _Ampere())
    with knobs.override(NAIAD_CUDA_ARCH="sm_90a"), pytest.raises(ValueError, match="older"):
        _ARCH(0)
    with knobs.override(NAIAD_CUDA_ARCH="sm_75"), pytest.raises(ValueError, match="unknown"):
        _ARCH(0)
