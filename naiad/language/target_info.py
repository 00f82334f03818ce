"""`tl.target_info` (`triton.language.target_info`): what the code is compiled for, asked by a
kernel at compile time (`if is_cuda(): ...` keeps one branch) or by host code.

    from naiad.language.target_info import cuda_capability_geq, is_cuda

    @naiad.jit
    def kernel(X, Y):
        x = tl.load(X)
        if cuda_capability_geq(9, 0):
            y = tl.inline_asm_elementwise(...)   # compiled for sm_90a only
        else:
            y = x * 2                            # the CPU and the interpreter take this one

In a kernel each function answers for the target being compiled (the semantic's `gpu_target`):
`cuda:sm_90a` is ("cuda", 90, 32); a CPU target is ("cpu", its triple, 1); the interpreter,
which runs the kernel on the host whatever the machine, answers as the host CPU, so `is_cuda()`
is False there and a kernel guarded by it takes its portable branch. Outside a kernel they answer
for the active driver (`naiad.runtime.driver.active`: the GPU where one is present, else the
CPU), as Triton's do.

`is_cuda` and the others are constexpr functions, as Triton's: a kernel calls them at compile
time and gets a Python bool.
"""

from __future__ import annotations

from .active_semantic import running_semantic
from .compile_time import constexpr_function
from .target import GPUTarget

__all__ = ["current_target"]

# Where host code's answer comes from: the runtime's active driver, which tells this module at
# import (the language never imports the runtime). None until then.
_host_target = None


def answer_on_host_with(current) -> None:
    """Make `current()` (a GPUTarget, or None) the answer outside a kernel."""
    global _host_target
    _host_target = current


def current_target() -> GPUTarget | None:
    """The target being compiled, in a kernel; the active driver's target on the host (None
    where nothing has said which driver is active)."""
    semantic = running_semantic()
    if semantic is not None:
        return semantic.target.gpu_target
    return _host_target() if _host_target is not None else None


@constexpr_function
def is_cuda() -> bool:
    """Whether the target is an NVIDIA GPU."""
    target = current_target()
    return target is not None and target.backend == "cuda"


@constexpr_function
def cuda_capability_geq(major, minor=0) -> bool:
    """Whether the target is an NVIDIA GPU of compute capability (major, minor) or newer: the
    guard of inline assembly that needs that capability."""
    target = current_target()
    return target is not None and target.backend == "cuda" and target.arch >= major * 10 + minor


@constexpr_function
def is_hip() -> bool:
    """Whether the target is an AMD GPU (never, in Naiad: it has no AMD back end)."""
    target = current_target()
    return target is not None and target.backend == "hip"


def _hip_arch(name: str) -> bool:
    target = current_target()
    return target is not None and target.backend == "hip" and target.arch == name


@constexpr_function
def is_hip_cdna3() -> bool:
    """Whether the target is AMD's CDNA3 (gfx942)."""
    return _hip_arch("gfx942")


@constexpr_function
def is_hip_cdna4() -> bool:
    """Whether the target is AMD's CDNA4 (gfx950)."""
    return _hip_arch("gfx950")


@constexpr_function
def is_hip_gfx1250() -> bool:
    """Whether the target is AMD's gfx1250."""
    return _hip_arch("gfx1250")
