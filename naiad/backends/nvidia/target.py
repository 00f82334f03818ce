"""The NVIDIA targets Naiad compiles for, and the PTX ISA version each kernel's PTX declares.

A target is named `cuda:sm_NN` (`sm_80`, `sm_86`, `sm_89`, `sm_90`, `sm_90a`, `sm_100`,
`sm_100a`). A device of compute capability 9.0 gets `sm_90a`: the arch-specific Hopper
instructions (wgmma, setmaxnreg) exist only there, and code for `sm_90a` runs on every 9.0
device; 10.0 gets `sm_100a`, as Triton compiles for it. Every string handed to LLVM (triple, CPU,
features) comes from the tables below: LLVM prints a warning for a feature it does not know and
aborts the process on a bad triple.

The PTX ISA version is the least the kernel needs, so that the oldest driver able to run the code
accepts it:

- the arch's own minimum (LLVM's NVPTX table: sm_80 → 7.0, sm_86 → 7.1, sm_89/sm_90 → 7.8,
  sm_90a → 8.0, the first ISA with arch-specific targets);
- the instructions the kernel uses, found by name in its LLVM IR, in inline assembly or as NVVM
  intrinsics (`_INSTRUCTIONS`: wgmma needs 8.0, stmatrix 7.8, ...);
- never more than the CUDA version that turns the PTX into machine code supports (CUDA 11.x →
  7.x, 12.0–12.5 → 8.0–8.5, 12.6 → 8.5, 12.7–12.9 → 8.6–8.8, 13.x → 9.x): past it, a clear
  `PtxIsaError` instead of a driver's `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from ...errors import InternalError, NaiadError

TRIPLE = "nvptx64-nvidia-cuda"
# LLVM's option for 32-bit pointers into shared, constant and local memory (their windows are
# under 4 GiB). A shared-memory address then takes one register, not two, and its arithmetic
# is 32-bit: a tensor-core loop computes one address per operand fragment it reads, and with
# 64-bit addresses each cost a widening and a 64-bit add besides (the tf32 matmul's K loop of
# a 128x32 tile: 68 `add.s64` and 50 `cvt.s64.s32` where 27 `add.s32` do).
SHORT_POINTERS = "-nvptx-short-ptr"
# LLVM's option to fold a widening multiply and the 64-bit add after it into one `mad.wide`
# (off by default in the LLVM that llvmlite ships). A pointer tensor's address is `base +
# sext(offset) * size`: without it, each is a `mul.wide.s32` and an `add.s64`, and ptxas
# schedules such a loop worse. Tutorial 09's pointer-persistent matmul (128x256x64 s3 w8, fp16,
# H200, TFLOP/s), its PTX with those pairs fused by hand: 557 -> 668 at 8192^3, 374 -> 443 on
# the main loop alone (1024x2048x65536), where Triton's (whose LLVM fuses them) gives 656 / 444.
MAD_WIDE = "-nvptx-mad-wide-opt"
# NVPTX's data layout with SHORT_POINTERS (what LLVM's target machine reports for every sm_NN).
DATA_LAYOUT = (
    "e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32"
    "-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
)


class PtxIsa(NamedTuple):
    """A PTX ISA version (`major.minor`); ordered as versions are."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def feature(self) -> str:
        """LLVM's NVPTX feature that makes the PTX declare this version (`+ptx80`)."""
        return f"+ptx{self.major}{self.minor}"


class PtxIsaError(NaiadError, RuntimeError):
    """The kernel needs a newer PTX ISA than the installed CUDA driver or linker accepts."""


# The newest ISA LLVM 22's NVPTX back end knows (`+ptx90`); a higher feature is ignored with a
# warning, so a kernel needing more would declare too low a version.
LLVM_MAX_ISA = PtxIsa(9, 0)


@dataclass(frozen=True)
class _Arch:
    capability: int  # major * 10 + minor
    min_isa: PtxIsa
    arch_specific: bool  # the `a` suffix: arch-specific instructions, runs only on this major.minor
    # Shared memory a block may use, with the opt-in (bytes): A100 163 KiB; the 8.6 and 8.9
    # GPUs (A10, L4, RTX 30 and 40 series) 99 KiB; Hopper and Blackwell 227 KiB.
    shared_per_block: int = 232448


_ARCHES = {
    "sm_80": _Arch(80, PtxIsa(7, 0), False, 166912),
    "sm_86": _Arch(86, PtxIsa(7, 1), False, 101376),
    "sm_89": _Arch(89, PtxIsa(7, 8), False, 101376),
    "sm_90": _Arch(90, PtxIsa(7, 8), False),
    "sm_90a": _Arch(90, PtxIsa(8, 0), True),
    # Blackwell (B100/B200/GB200). Its tensor-memory MMA (tcgen05) is not Naiad's yet: dots are
    # mma.sync, which sm_100 keeps, and Hopper's wgmma does not exist there (`hopper_only`).
    "sm_100": _Arch(100, PtxIsa(8, 6), False),
    "sm_100a": _Arch(100, PtxIsa(8, 6), True),
}


def shared_per_block(capability: int) -> int:
    """The shared memory a block may use on the GPUs of `capability` (major * 10 + minor), with
    the opt-in: what a kernel compiled for that capability must fit to launch there."""
    known = [arch.shared_per_block for arch in _ARCHES.values() if arch.capability == capability]
    return min(known, default=_Arch(0, PtxIsa(7, 0), False).shared_per_block)


# The capabilities whose devices get their arch-specific target, as Triton compiles for them.
_ARCH_SPECIFIC_BY_DEFAULT = (90, 100)


@dataclass(frozen=True)
class CudaTarget:
    """One NVIDIA target: what LLVM and the linker need to produce code for it."""

    name: str  # `cuda:sm_90a`
    arch: str  # `sm_90a`: LLVM's CPU name and the linker's `-arch`

    @property
    def capability(self) -> int:
        """The compute capability as major * 10 + minor (90 for sm_90a)."""
        return _ARCHES[self.arch].capability

    @property
    def arch_specific(self) -> bool:
        """Whether this is an `a` target (its code runs only on this exact capability)."""
        return _ARCHES[self.arch].arch_specific

    @property
    def hopper_only(self) -> bool:
        """Whether Hopper's arch-specific instructions (wgmma, and the warp-specialized
        producer that feeds it) exist: sm_90a alone; sm_100a has others in their place."""
        return self.arch == "sm_90a"

    @property
    def min_isa(self) -> PtxIsa:
        """The least PTX ISA version that can name this arch in `.target`."""
        return _ARCHES[self.arch].min_isa

    @property
    def triple(self) -> str:
        return TRIPLE

    @property
    def data_layout(self) -> str:
        return DATA_LAYOUT

    def features(self, isa: PtxIsa) -> str:
        """LLVM's feature string for PTX of version `isa` (at most the newest LLVM knows)."""
        return min(isa, LLVM_MAX_ISA).feature

    def description(self, isa: PtxIsa) -> dict[str, str]:
        """What the cache key records of the target: code differs per arch and ISA version."""
        return {"triple": TRIPLE, "arch": self.arch, "ptx_isa": str(isa)}


def target_names() -> list[str]:
    """Every name `cuda_target` accepts."""
    return [f"cuda:{arch}" for arch in _ARCHES]


def cuda_target(name: str) -> CudaTarget:
    """The target named `cuda:sm_NN` (`sm_NN` alone is accepted too)."""
    arch = name.removeprefix("cuda:")
    if arch not in _ARCHES:
        raise ValueError(f"unknown CUDA target {name!r}; known: {', '.join(target_names())}")
    return CudaTarget(f"cuda:{arch}", arch)


def target_for_capability(major: int, minor: int) -> CudaTarget:
    """The target for a device of compute capability `major.minor`: 9.0 gets `sm_90a`, so that
    Hopper kernels may use wgmma, and 10.0 `sm_100a`, as Triton's; others their own `sm_NN`."""
    capability = major * 10 + minor
    arch = f"sm_{capability}" + ("a" if capability in _ARCH_SPECIFIC_BY_DEFAULT else "")
    if arch not in _ARCHES:
        raise ValueError(
            f"compute capability {major}.{minor} is not supported; Naiad targets "
            + ", ".join(target_names())
        )
    return cuda_target(arch)


def arch_name(arch) -> str | None:
    """The target an architecture's spelling names (Triton's `arch='sm80'` and
    `TRITON_OVERRIDE_ARCH=sm90`, `sm_86`, `90`, `cuda:sm_90a`): `cuda:sm_NN`, 9.0's `sm_90a`
    as for a device of that capability; None where the text names no NVIDIA architecture."""
    match = re.fullmatch(r"(?:cuda:)?(?:sm_?)?(\d+)(a?)", str(arch).strip().lower())
    if match is None:
        return None
    capability = int(match.group(1))
    suffix = "a" if capability in _ARCH_SPECIFIC_BY_DEFAULT else match.group(2)
    return f"cuda:sm_{capability}{suffix}"


def target_for_device(major: int, minor: int, asked: str = "") -> CudaTarget:
    """The target kernels for a device of capability `major.minor` are compiled for: its own,
    or the older architecture `asked` names (`NAIAD_CUDA_ARCH`; its PTX runs on the newer
    device, whose driver compiles it there)."""
    own = target_for_capability(major, minor)
    if not asked.strip():
        return own
    target = cuda_target(arch_name(asked) or asked)
    if target.capability > own.capability:
        raise ValueError(
            f"NAIAD_CUDA_ARCH={asked}: the device is {own.arch}; kernels can be compiled for "
            "its own or an older architecture, whose PTX the driver compiles for it"
        )
    return target


# -- instructions that need a newer ISA than sm_80's 7.0 -------------------------------------
# (pattern found in LLVM IR — an inline-asm mnemonic or an `llvm.nvvm.` intrinsic name, which
# spell the instruction alike —, least ISA, least capability, whether only `a` targets have it).
# From the PTX ISA manual's "PTX ISA notes" and "Target ISA notes" of each instruction.
_INSTRUCTIONS = (
    (r"redux\.sync", PtxIsa(7, 0), 80, False),
    (r"mbarrier\.try[._]wait", PtxIsa(7, 8), 90, False),
    (r"stmatrix", PtxIsa(7, 8), 90, False),
    (r"cp\.async\.bulk", PtxIsa(8, 0), 90, False),
    (r"\bmapa\b|barrier\.cluster", PtxIsa(7, 8), 90, False),
    (r"griddepcontrol", PtxIsa(7, 8), 90, False),
    (r"e4m3x2|e5m2x2", PtxIsa(7, 8), 89, False),
    (r"mma\.sync\S*\.e[45]m[23]\.", PtxIsa(8, 4), 89, False),
    (r"wgmma\.", PtxIsa(8, 0), 90, True),
    (r"setmaxnreg", PtxIsa(8, 0), 90, True),
    (r"elect\.sync", PtxIsa(8, 0), 90, False),
    (r"cp\.(reduce\.)?async\.bulk", PtxIsa(8, 0), 90, False),
    (r"fence\.proxy\.async", PtxIsa(8, 0), 90, False),
    (r"expect[._]tx", PtxIsa(8, 0), 90, False),
    (r"multimem\.", PtxIsa(8, 1), 90, False),
    (r"tensormap\.", PtxIsa(8, 3), 90, False),
    (r"fence\.(acquire|release)\.", PtxIsa(8, 6), 90, False),
    (r"L1::evict_", PtxIsa(7, 4), 70, False),
)
_COMPILED = tuple((re.compile(p), isa, cc, a) for p, isa, cc, a in _INSTRUCTIONS)
# Instructions that sm_89 takes in a later ISA than sm_90 does (ptxas: "cvt with
# .e4m3x2/.e5m2x2 on sm_89 requires PTX ISA .version 8.1").
_LATER_ON_SM89 = ((re.compile(r"e4m3x2|e5m2x2"), PtxIsa(8, 1)),)
_METADATA_LINES = re.compile(r"^!.*$", re.MULTILINE)


def required_isa(target: CudaTarget, llvm_ir: str) -> PtxIsa:
    """The least PTX ISA version for `llvm_ir` on `target`: the arch's minimum, raised by each
    instruction the IR uses. An instruction the arch lacks is Naiad's bug (the lowering must
    not emit it), reported as an InternalError. Metadata lines are not read: the names
    debug info carries (a file `test_stmatrix.py`, a local `wgmma`) are not instructions."""
    isa = target.min_isa
    if "\n!" in llvm_ir:
        llvm_ir = _METADATA_LINES.sub("", llvm_ir)
    for pattern, needed, capability, arch_specific in _COMPILED:
        match = pattern.search(llvm_ir)
        if match is None:
            continue
        if target.capability < capability or (arch_specific and not target.arch_specific):
            wanted = f"sm_{capability}" + ("a" if arch_specific else " or newer")
            raise InternalError(
                f"the LLVM IR uses `{match.group(0)}`, which {target.arch} lacks (needs {wanted})"
            )
        isa = max(isa, needed)
    if target.capability == 89:
        for pattern, needed in _LATER_ON_SM89:
            if pattern.search(llvm_ir):
                isa = max(isa, needed)
    return isa


def max_isa_for_cuda(cuda_version: int) -> PtxIsa:
    """The newest PTX ISA a CUDA driver or linker of `cuda_version` (cuDriverGetVersion's
    1000 * major + 10 * minor, e.g. 12040) accepts."""
    major, minor = cuda_version // 1000, (cuda_version % 1000) // 10
    if major < 11:
        raise PtxIsaError(
            f"CUDA {major}.{minor} is too old: Naiad needs CUDA 11.0 or newer (PTX ISA 7.0)"
        )
    if major == 11:
        return PtxIsa(7, min(minor, 8))
    if major == 12:
        return PtxIsa(8, minor) if minor < 6 else PtxIsa(8, minor - 1)
    return PtxIsa(9 + (major - 13), minor)


def select_isa(target: CudaTarget, llvm_ir: str, cuda_version: int | None) -> PtxIsa:
    """The PTX ISA version the kernel's PTX declares: the least it needs, checked against
    `cuda_version`, the CUDA version that turns it into machine code (None: not known here,
    as when compiling ahead of time without a CUDA library)."""
    isa = required_isa(target, llvm_ir)
    if cuda_version is None:
        return isa
    limit = max_isa_for_cuda(cuda_version)
    if isa > limit:
        major, minor = cuda_version // 1000, (cuda_version % 1000) // 10
        raise PtxIsaError(
            f"this kernel for {target.arch} needs PTX ISA {isa}, but the installed CUDA "
            f"{major}.{minor} accepts PTX ISA {limit} at most: update the NVIDIA driver (or the "
            "nvidia-nvjitlink wheel)"
        )
    return isa
