"""The options a launch may pass besides the kernel's own arguments, with Triton's names and
defaults (`num_warps`, `num_stages`, ...), checked when a launch names them."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..backends.nvidia.target import arch_name
from ..errors import InvalidLaunchOption


@dataclass(frozen=True)
class LaunchOptions:
    """Options a launch may pass besides the kernel's own arguments (Triton's names, and
    `asserts`: the assertions compiled without debug mode's bounds checks, as
    `triton.compile`'s `debug` option compiles them; registry.CompileOptions)."""

    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    maxnreg: int | None = None
    debug: bool | None = None
    enable_fp_fusion: bool | None = None  # None: knobs.default_fp_fusion (on by default)
    sanitize_overflow: bool = True
    asserts: bool = False
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    clc: bool = False
    # Triton's `extern_libs={'libdevice': path, ...}`: bitcode libraries a CUDA kernel links
    # (backends/nvidia/extern_libs.py); kept as sorted (name, path) pairs, so options hash.
    extern_libs: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "extern_libs", extern_lib_pairs(self.extern_libs))
        warps = self.num_warps
        if not isinstance(warps, int) or warps < 1 or warps & (warps - 1):
            raise InvalidLaunchOption(f"num_warps must be a power of 2, got {warps!r}")
        ctas = self.num_ctas
        if not isinstance(ctas, int) or ctas < 1 or ctas & (ctas - 1):
            raise InvalidLaunchOption(f"num_ctas must be a power of 2, got {ctas!r}")
        if not isinstance(self.num_stages, int) or self.num_stages < 0:
            raise InvalidLaunchOption(
                f"num_stages must be a non-negative int, got {self.num_stages!r}"
            )
        if self.maxnreg is not None and (not isinstance(self.maxnreg, int) or self.maxnreg <= 0):
            raise InvalidLaunchOption(
                f"maxnreg must be a positive int or None, got {self.maxnreg!r}"
            )
        if self.clc:
            # Cluster launch control schedules tiles on Blackwell (sm_100+), which Naiad does not
            # emit there; Triton refuses it below sm_100 too. False, the default, launches as usual.
            raise ValueError("clc=True (Blackwell's cluster launch control) is not supported")


def extern_lib_pairs(libs) -> tuple[tuple[str, str], ...]:
    """`extern_libs` as sorted (name, path) pairs, from Triton's mapping of library names to
    bitcode paths (or such pairs already); None or empty: none."""
    if not libs:
        return ()
    items = libs.items() if isinstance(libs, dict) else libs
    try:
        pairs = tuple(sorted((name, os.fspath(path)) for name, path in items))
    except (TypeError, ValueError):
        pairs = None
    if pairs is None or not all(isinstance(name, str) and name for name, _ in pairs):
        raise InvalidLaunchOption(
            f"extern_libs must map library names to bitcode file paths, got {libs!r}"
        )
    return pairs


OPTION_NAMES = frozenset(LaunchOptions.__dataclass_fields__)
# AMD's options, which Triton's other back ends drop without a word: a Config written for both
# vendors (Triton's tutorial 03) launches here as it does there. Ignored unless a parameter.
OTHER_VENDORS_OPTIONS = frozenset(
    ("waves_per_eu", "matrix_instr_nonkdim", "kpack", "schedule_hint", "instruction_sched_variant")
)


def arch_target(arch) -> str:
    """The target Triton's `arch=` option names ('sm80', 'sm90', 'sm_86', 90): an NVIDIA
    compute capability, whose target is `cuda:sm_NN` (9.0: `sm_90a`, as for a device of that
    capability; the back end refuses the ones Naiad does not compile for). AMD's are refused."""
    name = arch_name(arch)
    if name is None:
        raise InvalidLaunchOption(
            f"arch={arch!r}: Naiad compiles for NVIDIA GPUs (arch='sm80', 'sm90', ...) and CPUs"
        )
    return name
