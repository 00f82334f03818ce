"""`naiad.runtime.driver.active`: the device questions tutorials and libraries ask, answered by
the CUDA driver where a GPU is present and by the CPU driver elsewhere.

The surface is Triton's (`triton.runtime.driver.active`), so host code written for it runs:

    DEVICE = driver.active.get_active_torch_device()
    properties = driver.active.utils.get_device_properties(DEVICE.index)
    NUM_SM = properties["multiprocessor_count"]
    target = driver.active.get_current_target()      # .backend, .arch, .warp_size
    bench = driver.active.get_benchmarker()          # naiad.testing.do_bench

The current device and stream are torch's when torch is loaded, so `torch.cuda.set_device` and
`with torch.cuda.stream(s)` are seen by Naiad as by torch (a Naiad kernel itself runs on its
tensors' device, on that device's current stream). `active` is chosen on first use and can be
replaced with `active.set(driver)` (tests, or a process that wants the CPU driver on a GPU
machine).
"""

from __future__ import annotations

import platform
import sys

from ..backends.nvidia import driver as cuda_driver
from ..backends.nvidia import target as nv_target
from ..language import target_info
from ..language.target import GPUTarget
from .bench import do_bench


def _torch():
    """torch if this process already imported it (the driver never imports it itself)."""
    return sys.modules.get("torch")


class _CudaUtils:
    @staticmethod
    def get_device_properties(device) -> dict:
        """The device's properties under Triton's keys (plus `max_threads_per_block`,
        `l2_cache_size`, `name` and `capability`)."""
        index = device.index if hasattr(device, "index") else int(device or 0)
        props = cuda_driver.device_properties(index or 0)
        return {
            "max_shared_mem": props.max_shared_mem,
            "max_num_regs": props.max_num_regs,
            "multiprocessor_count": props.multiprocessor_count,
            "warpSize": props.warp_size,
            "sm_clock_rate": props.sm_clock_rate,
            "mem_clock_rate": props.mem_clock_rate,
            "mem_bus_width": props.mem_bus_width,
            "max_threads_per_block": props.max_threads_per_block,
            "l2_cache_size": props.l2_cache_size,
            "name": props.name,
            "capability": props.capability,
        }


class CudaDriver:
    """The CUDA driver: kernels run on NVIDIA GPUs."""

    backend = "cuda"

    def __init__(self):
        self.utils = _CudaUtils()

    @staticmethod
    def is_active() -> bool:
        return cuda_driver.available()

    def get_current_device(self) -> int:
        torch = _torch()
        if torch is not None:
            return torch.cuda.current_device()
        return cuda_driver.current_device()

    def set_current_device(self, device: int) -> None:
        torch = _torch()
        if torch is not None:
            torch.cuda.set_device(device)
        cuda_driver.set_current_device(device)

    def get_current_stream(self, device: int | None = None) -> int:
        """The handle of `device`'s current stream (torch's, so graph capture sees launches);
        the legacy default stream (0) without torch."""
        torch = _torch()
        if torch is None:
            return 0
        if device is None:
            device = torch.cuda.current_device()
        return torch.cuda.current_stream(device).cuda_stream

    def get_active_torch_device(self):
        import torch

        return torch.device("cuda", self.get_current_device())

    def get_device_interface(self):
        import torch

        return torch.cuda

    def get_current_target(self) -> GPUTarget:
        major, minor = cuda_driver.device_properties(self.get_current_device()).capability
        return GPUTarget("cuda", 10 * major + minor, 32)

    def get_current_target_name(self) -> str:
        """Naiad's target name for the current device (`cuda:sm_90a` on Hopper)."""
        major, minor = cuda_driver.device_properties(self.get_current_device()).capability
        return nv_target.target_for_capability(major, minor).name

    @staticmethod
    def get_benchmarker():
        return do_bench


class _CpuUtils:
    @staticmethod
    def get_device_properties(device=None) -> dict:
        """The host under the same keys: each worker thread counts as a multiprocessor running
        one program at a time (a 'warp' of one thread), which takes all of its registers and
        scratch memory (a CPU kernel's n_regs and metadata.shared say so: compiled_kernel.py)."""
        from ..backends.cpu import pool
        from .compiled_kernel import CPU_REGISTERS, CPU_SCRATCH_BYTES

        return {
            "max_shared_mem": CPU_SCRATCH_BYTES,
            "max_num_regs": CPU_REGISTERS,
            "multiprocessor_count": pool.thread_count(),
            "warpSize": 1,
            "max_threads_per_block": 1,
            "name": "cpu",
        }


class CpuDriver:
    """The CPU driver: kernels run on host arrays and CPU tensors."""

    backend = "cpu"

    def __init__(self):
        self.utils = _CpuUtils()

    @staticmethod
    def is_active() -> bool:
        return True

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: int) -> None:
        if device != 0:
            raise ValueError(f"the CPU driver has one device, 0; got {device}")

    def get_current_stream(self, device: int | None = None) -> int:
        """The CPU has no streams: work is done when a launch returns."""
        return 0

    def get_active_torch_device(self):
        import torch

        return torch.device("cpu")

    def get_current_target(self) -> GPUTarget:
        return host_gpu_target()

    def get_current_target_name(self) -> str:
        return "cpu"

    @staticmethod
    def get_benchmarker():
        return do_bench


def host_gpu_target() -> GPUTarget:
    """This machine's CPU as a GPUTarget: what the CPU driver answers, and what
    `tl.target_info` answers in the interpreter, which runs kernels on the host. Its arch is
    the CPU back end's triple, or Python's name for the machine where that back end cannot
    run (no llvmlite, another architecture), since the interpreter runs there still."""
    from ..backends.cpu.target import host_target

    try:
        triple = host_target().triple
    except (ImportError, NotImplementedError):
        triple = platform.machine()
    return GPUTarget("cpu", triple, 1)


class _ActiveDriver:
    """`active`: the driver in use, chosen on first use (CUDA where a GPU is present)."""

    def __init__(self):
        self._driver = None

    def get(self):
        if self._driver is None:
            self._driver = CudaDriver() if CudaDriver.is_active() else CpuDriver()
        return self._driver

    def set(self, driver) -> None:
        self._driver = driver

    def reset(self) -> None:
        """Choose again on next use."""
        self._driver = None

    def __getattr__(self, name):
        return getattr(self.get(), name)


active = _ActiveDriver()


def set_active(driver) -> None:
    """Use `driver` from now on (Triton's `driver.set_active`)."""
    active.set(driver)


def reset_active() -> None:
    """Choose the driver again on next use (Triton's `driver.reset_active`)."""
    active.reset()


class _DriverConfig:
    """Triton's `triton.runtime.driver.driver`: `active`, `default`, `set_active`,
    `reset_active`, over this module's `active`."""

    active = active
    set_active = staticmethod(set_active)
    reset_active = staticmethod(reset_active)

    @property
    def default(self):
        """The driver chosen when none is set: CUDA where a GPU is present, else the CPU's."""
        return CudaDriver() if CudaDriver.is_active() else CpuDriver()


driver = _DriverConfig()

# `tl.target_info` outside a kernel answers for the driver in use (the language cannot import
# the runtime: it is told).
target_info.answer_on_host_with(lambda: active.get_current_target())
