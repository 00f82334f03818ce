"""Whose CUDA context is current after Naiad loads or launches a kernel on a device other than
the caller's: the device's own primary context is made current for the work and the caller's
given back after it (driver.device_context), on the slow launch path (`launch`, what
`CubinKernel.launch` calls), the hot path (`fast_launch`) and the module load alike, also when
the launch fails. Without a GPU: the driver is a stand-in whose contexts are ints
(1000 + device) and which records every context switch and launch."""

from enum import IntEnum

import pytest

from naiad.backends.nvidia import driver as cuda_driver
from naiad.backends.nvidia.param_block import ParamBlock


class Result(IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209
    CUDA_ERROR_LAUNCH_FAILED = 719


class FakeCuda:
    """cuda.bindings.driver as the driver module calls it, for two devices."""

    CUresult = Result

    class CUfunction_attribute:
        CU_FUNC_ATTRIBUTE_NUM_REGS = 1
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 2
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 3
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 4
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    def __init__(self, current: int, launch_result=Result.CUDA_SUCCESS):
        self.current = current
        self.launch_result = launch_result
        self.calls = []

    def cuDeviceGetCount(self):
        return Result.CUDA_SUCCESS, 2

    def cuDeviceGet(self, index):
        return Result.CUDA_SUCCESS, index

    def cuDevicePrimaryCtxRetain(self, device):
        return Result.CUDA_SUCCESS, 1000 + device

    def cuCtxGetCurrent(self):
        return Result.CUDA_SUCCESS, self.current

    def cuCtxSetCurrent(self, context):
        self.current = int(context)
        self.calls.append(("set", self.current))
        return (Result.CUDA_SUCCESS,)

    def cuGetErrorString(self, result):
        return Result.CUDA_SUCCESS, b"unspecified launch failure"

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.calls.append(("launch", self.current, (gx, gy, gz), stream))
        return (self.launch_result,)

    def cuModuleLoadData(self, image):
        self.calls.append(("load", self.current))
        if image.startswith(b"sm_80 cubin"):  # built for an older GPU than this one
            return Result.CUDA_ERROR_NO_BINARY_FOR_GPU, None
        return Result.CUDA_SUCCESS, ("module", bytes(image))

    def cuModuleGetFunction(self, module, name):
        self.calls.append(("function", self.current))
        return Result.CUDA_SUCCESS, "handle"

    def cuFuncGetAttribute(self, code, handle):
        return Result.CUDA_SUCCESS, 8 * code

    def cuFuncSetAttribute(self, handle, code, value):
        self.calls.append(("attribute", code, value))
        return (Result.CUDA_SUCCESS,)


@pytest.fixture
def use_driver(monkeypatch):
    def install(fake):
        monkeypatch.setattr(cuda_driver, "_cuda", lambda: fake)
        monkeypatch.setattr(cuda_driver, "_contexts", {})
        return fake

    return install


def _slow(function):
    params = ParamBlock(("i32",))
    cuda_driver.launch(function, (3, 2, 1), 128, 0, 77, params)


def _fast(function):
    cuda_driver.fast_launch(function, 128, 0)(3, 2, 1, 77, 4096)


LAUNCHED = ("launch", 1001, (3, 2, 1), 77)
# caller's current context -> the calls of a launch on device 1
EXPECTED = {
    1001: [LAUNCHED],
    1000: [("set", 1001), LAUNCHED, ("set", 1000)],
    0: [("set", 1001), LAUNCHED],  # no caller's context to give back
}


@pytest.mark.parametrize("path", [_slow, _fast], ids=["slow", "fast"])
@pytest.mark.parametrize("current", sorted(EXPECTED))
def test_both_launch_paths_give_the_callers_context_back(use_driver, path, current):
    fake = use_driver(FakeCuda(current))
    path(cuda_driver.Function("handle", 1, 0, 0, 0, 0))
    assert fake.calls == EXPECTED[current]


@pytest.mark.parametrize("path", [_slow, _fast], ids=["slow", "fast"])
def test_a_failed_launch_gives_the_context_back_too(use_driver, path):
    fake = use_driver(FakeCuda(1000, Result.CUDA_ERROR_LAUNCH_FAILED))
    with pytest.raises(cuda_driver.CudaError, match="cuLaunchKernel failed: CUDA_ERROR_LAUNCH"):
        path(cuda_driver.Function("handle", 1, 0, 0, 0, 0))
    assert fake.calls == EXPECTED[1000] and fake.current == 1000


def test_loading_a_module_on_another_device_gives_the_context_back(use_driver, monkeypatch):
    fake = use_driver(FakeCuda(1000))
    monkeypatch.setattr(cuda_driver, "device_properties", lambda index: _Limits())
    function = cuda_driver.load_function(b"cubin", "kernel", 1, 0)
    assert fake.calls == [("set", 1001), ("load", 1001), ("function", 1001), ("set", 1000)]
    assert (function.device, function.n_regs, function.max_threads) == (1, 8, 32)


class _Limits:
    max_shared_mem = 228 * 1024


@pytest.mark.parametrize("shared, expected", [(48 * 1024, []), (61440, [("attribute", 8, 61440)])])
def test_a_kernel_past_48_kb_of_shared_memory_opts_in_and_leaves_the_split_to_the_driver(
    use_driver, monkeypatch, shared, expected
):
    """Past the default 48 KB a kernel raises its dynamic shared memory limit; the L1/shared
    split is not forced (FakeCuda has no cuFuncSetCacheConfig: a call to it would fail)."""
    fake = use_driver(FakeCuda(1001))
    monkeypatch.setattr(cuda_driver, "device_properties", lambda index: _Limits())
    cuda_driver.load_function(b"cubin", "kernel", 1, shared)
    assert [call for call in fake.calls if call[0] in ("attribute", "cache config")] == expected


def test_a_cubin_for_an_older_gpu_loads_from_its_ptx(use_driver, monkeypatch):
    """NAIAD_CUDA_ARCH=sm_80 on a newer GPU: the driver refuses the sm_80 cubin, and the kernel
    loads from its PTX (null-terminated), which the driver compiles for the device."""
    fake = use_driver(FakeCuda(1001))
    modules = []
    monkeypatch.setattr(cuda_driver, "device_properties", lambda index: _Limits())
    monkeypatch.setattr(
        fake, "cuModuleGetFunction", lambda module, name: modules.append(module) or (0, "handle")
    )
    cuda_driver.load_function(b"sm_80 cubin", "kernel", 1, 0, ptx=".target sm_80")
    assert modules == [("module", b".target sm_80\0")]
    with pytest.raises(cuda_driver.CudaError, match="CUDA_ERROR_NO_BINARY_FOR_GPU"):
        cuda_driver.load_function(b"sm_80 cubin", "kernel", 1, 0)  # no PTX to fall back on
