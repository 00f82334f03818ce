"""The CUDA driver, through `cuda.bindings.driver`: the one module that calls it.

- `cuInit` once per process; a device's *primary* context (the one the CUDA runtime and torch
  use) is retained once and made current when work goes to that device, so Naiad's modules and
  torch's tensors live in the same context.
- A cubin is loaded once per device (`CubinKernel.function`, in cubin_kernel.py); a kernel
  needing more than 48 KB of dynamic shared memory gets the MAX_DYNAMIC_SHARED_SIZE_BYTES
  attribute raised at load, where the device's opt-in limit allows it (else OutOfResources).
  The multiprocessor's L1/shared split stays the driver's choice, which gives a kernel's blocks
  the shared memory they need: forcing the largest carveout (CU_FUNC_CACHE_PREFER_SHARED) shrinks
  L1 for nothing, and a kernel that spills pays (tutorial 06's attention backward at D128 on an
  H200: 107.6 / 94.6 TFLOP/s without it, 88.4 / 80.0 with it; no kernel measured faster with it).
- `launch` is cuLaunchKernel with a preallocated parameter block (`ParamBlock`, param_block.py):
  nothing on the way synchronizes, allocates device memory or loads modules, so a launch on a
  capturing stream is recorded into a CUDA graph. Loading and launching on a device other than
  the caller's current one switch contexts and switch back (`device_context`), so torch's
  current device stays.
- Every failing call raises `CudaError` naming the call and the CUresult (`CUDA_ERROR_...`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import threading
from dataclasses import dataclass

from ...errors import NaiadError, OutOfResources

_DEFAULT_SHARED_LIMIT = 48 * 1024  # what a block gets without opting in
GRID_LIMITS = (2**31 - 1, 65535, 65535)


class CudaError(NaiadError, RuntimeError):
    """A CUDA driver call failed, or no CUDA driver is present."""


@functools.cache
def _cuda():
    """The initialized driver module (cuInit once); CudaError where there is no driver."""
    try:
        from cuda.bindings import driver as cuda
    except ImportError as exc:
        raise CudaError("the CUDA driver needs cuda-bindings: pip install 'naiad[cuda]'") from exc
    try:
        (result,) = cuda.cuInit(0)
    except RuntimeError as exc:  # the library finder: no libcuda.so on this machine
        raise CudaError(f"no CUDA driver is installed here: {exc}") from exc
    _check(cuda, result, "cuInit")
    return cuda


def _check(cuda, result, call: str) -> None:
    if result != cuda.CUresult.CUDA_SUCCESS:
        _, text = cuda.cuGetErrorString(result)
        detail = text.decode() if isinstance(text, bytes) else text
        raise CudaError(f"{call} failed: {result.name} ({detail})")


def _call(name: str, *args):
    """`cuda.<name>(*args)`, checked; returns its outputs (one value, or a tuple of several)."""
    cuda = _cuda()
    result, *outputs = getattr(cuda, name)(*args)
    _check(cuda, result, name)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


@functools.cache
def available() -> bool:
    """Whether a CUDA driver with at least one device is present."""
    try:
        return device_count() > 0
    except CudaError:
        return False


def driver_version() -> int:
    """cuDriverGetVersion: 1000 * major + 10 * minor of the CUDA version the driver supports."""
    return _call("cuDriverGetVersion")


def device_count() -> int:
    return _call("cuDeviceGetCount")


# -- contexts --------------------------------------------------------------------------------------
# Primary contexts retained by this process, by device index; kept for the process's life, as
# the CUDA runtime keeps them (releasing one would unload every module loaded in it).
_contexts: dict[int, object] = {}
# Held while a context is retained or a module loaded, so that threads doing it first at once do
# it once (reentrant: loading a module retains its device's context).
_loading = threading.RLock()


def _device(index: int):
    count = device_count()
    if not 0 <= index < count:
        raise CudaError(f"there is no CUDA device {index} (this machine has {count})")
    return _call("cuDeviceGet", index)


def context(index: int):
    """The primary context of device `index`, retained on first use."""
    ctx = _contexts.get(index)
    if ctx is None:
        with _loading:
            ctx = _contexts.get(index)
            if ctx is None:
                ctx = _contexts[index] = _call("cuDevicePrimaryCtxRetain", _device(index))
    return ctx


def set_current_device(index: int) -> None:
    """Make device `index`'s primary context current on this thread (if it is not already)."""
    ctx = context(index)
    if int(_call("cuCtxGetCurrent")) != int(ctx):
        _call("cuCtxSetCurrent", ctx)


@contextlib.contextmanager
def device_context(index: int):
    """Device `index`'s primary context current inside the block, and after it the context that
    was current before (when there was one), so that the caller's torch device is left as it
    was. Loading a module and both launch paths (`launch`, `fast_launch`) go through it: a
    kernel runs on its tensors' device whatever device the caller has made current."""
    previous = _call("cuCtxGetCurrent")
    set_current_device(index)
    try:
        yield
    finally:
        if int(previous) and int(previous) != int(context(index)):
            _call("cuCtxSetCurrent", previous)


def current_device() -> int:
    """The device of this thread's current context; 0 when none is current."""
    if int(_call("cuCtxGetCurrent")) == 0:
        return 0
    return int(_call("cuCtxGetDevice"))


# -- device properties -----------------------------------------------------------------------------
@dataclass(frozen=True)
class DeviceProperties:
    name: str
    capability: tuple[int, int]
    multiprocessor_count: int
    max_shared_mem: int  # per block, with the opt-in (what a kernel may ask for)
    max_num_regs: int  # 32-bit registers per block
    warp_size: int
    max_threads_per_block: int
    l2_cache_size: int
    sm_clock_rate: int  # kHz
    mem_clock_rate: int  # kHz
    mem_bus_width: int  # bits


@functools.cache
def device_properties(index: int) -> DeviceProperties:
    """What the driver says of device `index` (asked once)."""
    cuda = _cuda()
    device = _device(index)
    attribute = cuda.CUdevice_attribute

    def get(name: str) -> int:
        code = getattr(attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
        return int(_call("cuDeviceGetAttribute", code, device))

    raw_name = _call("cuDeviceGetName", 256, device)
    return DeviceProperties(
        name=raw_name.split(b"\0", 1)[0].decode(),
        capability=(get("COMPUTE_CAPABILITY_MAJOR"), get("COMPUTE_CAPABILITY_MINOR")),
        multiprocessor_count=get("MULTIPROCESSOR_COUNT"),
        max_shared_mem=get("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        max_num_regs=get("MAX_REGISTERS_PER_BLOCK"),
        warp_size=get("WARP_SIZE"),
        max_threads_per_block=get("MAX_THREADS_PER_BLOCK"),
        l2_cache_size=get("L2_CACHE_SIZE"),
        sm_clock_rate=get("CLOCK_RATE"),
        mem_clock_rate=get("MEMORY_CLOCK_RATE"),
        mem_bus_width=get("GLOBAL_MEMORY_BUS_WIDTH"),
    )


# -- modules and functions -------------------------------------------------------------------------
@dataclass(frozen=True)
class Function:
    """A kernel loaded on one device, with what the driver reports of it."""

    handle: object  # CUfunction
    device: int
    n_regs: int
    local_bytes: int
    static_shared: int
    max_threads: int


def load_function(
    cubin: bytes, entry: str, device: int, shared: int, ptx: str | None = None
) -> Function:
    """Load `cubin` into device `device`'s primary context and look up `entry`; allow it
    `shared` bytes of dynamic shared memory. A cubin for another architecture than the
    device's (CUDA_ERROR_NO_BINARY_FOR_GPU) loads from `ptx` instead, which the driver
    compiles for the device, as it does a fat binary's PTX."""
    limit = device_properties(device).max_shared_mem
    if shared > limit:
        raise OutOfResources(shared, limit, "shared memory")
    attribute = _cuda().CUfunction_attribute

    def get(handle, name: str) -> int:
        code = getattr(attribute, f"CU_FUNC_ATTRIBUTE_{name}")
        return int(_call("cuFuncGetAttribute", code, handle))

    with device_context(device):
        module = _load_module(cubin, ptx)
        handle = _call("cuModuleGetFunction", module, entry.encode())
        if shared > _DEFAULT_SHARED_LIMIT:
            _call(
                "cuFuncSetAttribute",
                handle,
                attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared,
            )
        names = ("NUM_REGS", "LOCAL_SIZE_BYTES", "SHARED_SIZE_BYTES", "MAX_THREADS_PER_BLOCK")
        return Function(handle, device, *(get(handle, name) for name in names))


def _load_module(cubin: bytes, ptx: str | None):
    """The module of `cubin`, or of `ptx` where the cubin is for another architecture."""
    cuda = _cuda()
    result, module = cuda.cuModuleLoadData(cubin)
    if result == cuda.CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU and ptx is not None:
        return _call("cuModuleLoadData", ptx.encode() + b"\0")
    _check(cuda, result, "cuModuleLoadData")
    return module


# -- launching -------------------------------------------------------------------------------------
def fast_launch(function: Function, threads: int, shared: int):
    """`launch(gx, gy, gz, stream, params_address)`: cuLaunchKernel of `function` with `threads`
    per block and `shared` bytes, for the runtime's launch hot path. The driver's entry points
    are looked up once; a launch makes one call to see that the device's context is current
    (cuCtxGetCurrent, compared as a context object: no int() per launch) and the launch itself.
    When another context was current (the caller's torch device is another GPU), the launch
    goes through `device_context`, as the slow path's `launch` does: the device's context is
    made current for it and the caller's restored after. The caller checks the grid
    (`check_grid`) and sets the parameters.

    Measured (bench/RESULTS.md): these cuda-bindings calls cost no more on the host than the
    same calls through ctypes, and asking torch for its current device instead of the driver for
    its current context would cost as much as the query it saves."""
    cuda = _cuda()
    device, handle = function.device, function.handle
    expected = context(device)
    get_current, launch_kernel = cuda.cuCtxGetCurrent, cuda.cuLaunchKernel

    def launch(gx: int, gy: int, gz: int, stream: int, params_address: int) -> None:
        result, current = get_current()
        if result or current != expected:
            with device_context(device):
                (result,) = launch_kernel(
                    handle, gx, gy, gz, threads, 1, 1, shared, stream, params_address, 0
                )
        else:
            (result,) = launch_kernel(
                handle, gx, gy, gz, threads, 1, 1, shared, stream, params_address, 0
            )
        if result:  # CUresult is an int: CUDA_SUCCESS is 0
            _check(cuda, result, "cuLaunchKernel")

    return launch


def check_grid(grid: tuple[int, int, int]) -> None:
    """A clear error for a grid the driver would refuse (CUDA_ERROR_INVALID_VALUE)."""
    for axis, (size, limit) in enumerate(zip(grid, GRID_LIMITS)):
        if not 0 <= size <= limit:
            raise ValueError(f"grid dimension {axis} is {size}; CUDA allows 0 to {limit}")


def launch(function: Function, grid, threads: int, shared: int, stream: int, params) -> None:
    """Queue `function` on `stream` over `grid` (three sizes) with `threads` per block, in its
    device's context, the caller's given back after (`device_context`, as `fast_launch`); an
    empty grid launches nothing. `params` is a ParamBlock whose values are set."""
    if grid[0] * grid[1] * grid[2] == 0:
        return
    with device_context(function.device):
        _call(
            "cuLaunchKernel",
            function.handle,
            *grid,
            threads,
            1,
            1,
            shared,
            stream,
            params.address,
            0,
        )


# -- what native code needs to launch (runtime/cuda_native_launch.py) -----------------------------
@functools.cache
def entry_points() -> tuple[int, int] | None:
    """The addresses of cuCtxGetCurrent and cuLaunchKernel in the driver library (the exports
    by name: the legacy default stream's versions, which cuda-bindings' calls take too), for
    native code that makes a launch's two calls itself; None where the library does not open
    by its name or no driver answers (cuInit)."""
    return _exports("cuCtxGetCurrent", "cuLaunchKernel")


@functools.cache
def encode_entry_point() -> int | None:
    """The address of cuTensorMapEncodeTiled in the driver library, for native code that
    encodes tensor maps (runtime/cuda_native_encode.py); None as for `entry_points`."""
    found = _exports("cuTensorMapEncodeTiled")
    return found and found[0]


def _exports(*names: str) -> tuple[int, ...] | None:
    """The addresses of the driver library's exports `names`, or None (see entry_points)."""
    try:
        _cuda()
        library = ctypes.CDLL("libcuda.so.1")
        return tuple(ctypes.cast(getattr(library, name), ctypes.c_void_p).value for name in names)
    except (CudaError, OSError, AttributeError):
        return None


def launch_handles(function: Function) -> tuple[int, int]:
    """(the CUfunction, the context it runs in: its device's primary one) as integers."""
    return int(function.handle), int(context(function.device))


def raise_launch_error(result: int) -> None:
    """The CudaError of a cuLaunchKernel that native code made and that returned `result`."""
    cuda = _cuda()
    _check(cuda, cuda.CUresult(result), "cuLaunchKernel")


# -- the driver's own linker (link.py's fallback) --------------------------------------------------
def link_ptx(ptx: bytes, name: str, maxnreg: int | None) -> tuple[bytes, str]:
    """The cubin of `ptx` for the current device, by cuLinkCreate/AddData/Complete."""
    cuda = _cuda()
    set_current_device(current_device())
    option = cuda.CUjit_option
    options, values = [], []
    if maxnreg is not None:
        options, values = [option.CU_JIT_MAX_REGISTERS], [maxnreg]
    state = _call("cuLinkCreate", len(options), options, values)
    try:
        input_type = cuda.CUjitInputType.CU_JIT_INPUT_PTX
        _call("cuLinkAddData", state, input_type, ptx, len(ptx), f"{name}.ptx".encode(), 0, [], [])
        address, size = _call("cuLinkComplete", state)
        return ctypes.string_at(int(address), size), ""
    finally:
        _call("cuLinkDestroy", state)


def __getattr__(name: str):
    """`CubinKernel`, found here by the runtime and the tests. It lives in cubin_kernel.py, which
    calls this module, so it is imported when first asked for: either module imports first."""
    if name == "CubinKernel":
        from .cubin_kernel import CubinKernel

        return CubinKernel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
