"""LLVM IR for `nvptx64-nvidia-cuda` → PTX text, through llvmlite (the NVIDIA back end's one
wrapper around `llvmlite.binding` code generation).

The steps: choose the PTX ISA version (`target.select_isa`), parse and verify the module (LLVM
aborts the process when code generation meets an invalid module, so a bad module must become an
InternalError first), link libdevice if the kernel calls it, optimize at -O3 with the NVPTX
target machine (whose pipeline includes NVVMReflect), and emit PTX.

LLVM writes `.version` from the `+ptxNN` feature; the chosen ISA is handed to it that way. Only
when a kernel needs an ISA newer than LLVM knows (inline assembly of a newer instruction) is the
`.version` line rewritten to the chosen one; LLVM declaring a version other than both is Naiad's
bug.

Floating-point contraction (fmul + fadd → fma) follows the IR: the NVPTX back end contracts
operations that carry the `contract` fast-math flag (and `llvm.fmuladd`), since llvmlite cannot
set the target machine's global fusion option. The lowering marks what may fuse.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import llvmlite.binding as llvm

from ... import llvm_util
from ...errors import InternalError
from . import extern_libs as extern
from . import libdevice
from . import target as nv_target

_VERSION_RE = re.compile(r"^\.version (\d+)\.(\d+)$", re.MULTILINE)
_ENTRY_RE = re.compile(r"^\.visible \.entry (\S+?)\(", re.MULTILINE)


@dataclass(frozen=True)
class Ptx:
    """A kernel's PTX and what it was produced from."""

    text: str
    isa: nv_target.PtxIsa
    entry: str  # the name of the `.entry` function
    llir: str  # the optimized LLVM IR (libdevice linked), for `asm['llir']`


@functools.cache
def _target_machine(arch: str, features: str) -> llvm.TargetMachine:
    """An NVPTX target machine at -O3; `arch` and `features` come from target.py's tables."""
    llvm_util.initialize()
    # NVPTX's options alone (target.py says why each): other targets ignore them.
    for option in (nv_target.SHORT_POINTERS, nv_target.MAD_WIDE):
        llvm.set_option("", option)
    machine = llvm.Target.from_triple(nv_target.TRIPLE).create_target_machine(
        cpu=arch, features=features, opt=3
    )
    if str(machine.target_data) != nv_target.DATA_LAYOUT:
        raise InternalError(f"LLVM's NVPTX data layout changed: {machine.target_data}")
    return machine


def parse_module(text: str, name: str = "kernel") -> llvm.ModuleRef:
    """Parse and verify LLVM IR text (an InternalError naming `name` on any problem) for the
    NVPTX target."""
    module = llvm_util.parse_module(text, name)
    module.triple = nv_target.TRIPLE
    module.data_layout = nv_target.DATA_LAYOUT
    return module


def _optimize(module: llvm.ModuleRef, machine: llvm.TargetMachine) -> None:
    """LLVM's default -O3 module pipeline with the NVPTX target's own passes (NVVMReflect
    resolves libdevice's questions; unused `linkonce_odr` functions are dropped)."""
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)


def _declare_version(text: str, isa: nv_target.PtxIsa, name: str) -> str:
    """`text` with its `.version` line saying `isa`: LLVM caps the version at the newest it
    knows, so a newer one is written in; any other difference is an InternalError."""
    match = _VERSION_RE.search(text)
    if match is None:
        raise InternalError(f"the PTX of `{name}` has no .version line")
    declared = nv_target.PtxIsa(int(match.group(1)), int(match.group(2)))
    if declared == isa:
        return text
    if declared != min(isa, nv_target.LLVM_MAX_ISA):
        raise InternalError(f"LLVM declared PTX ISA {declared} for `{name}`; {isa} was chosen")
    return text[: match.start()] + f".version {isa}" + text[match.end() :]


def compile_ptx(
    llvm_ir: str,
    target: nv_target.CudaTarget,
    *,
    cuda_version: int | None = None,
    ftz: bool = True,
    name: str = "kernel",
    extern_libs: tuple[tuple[str, str], ...] = (),
) -> Ptx:
    """PTX for one kernel's LLVM IR.

    Args:
        llvm_ir: the module as text; it defines exactly one kernel (a `ptx_kernel` function).
        target: the arch and its tables.
        cuda_version: the CUDA version (cuDriverGetVersion's form) that will turn the PTX into
            machine code, bounding the ISA version; None when not known.
        ftz: libdevice's `__CUDA_FTZ` (Triton's default: True).
        name: the kernel's name in errors.
        extern_libs: the bitcode libraries a launch named, (name, path) (extern_libs.py).

    Raises:
        PtxIsaError: the kernel needs a newer ISA than `cuda_version` accepts.
        InternalError: the IR is invalid or LLVM's output is not what was asked for.
    """
    isa = nv_target.select_isa(target, llvm_ir, cuda_version)
    machine = _target_machine(target.arch, target.features(isa))
    module = parse_module(llvm_ir, name)
    libdevice.link(module, ftz=ftz, library=extern.libdevice_path(extern_libs))
    extern.link_others(module, extern_libs)
    _optimize(module, machine)
    try:
        module.verify()
        text = machine.emit_assembly(module)
    except RuntimeError as exc:
        raise InternalError(f"PTX generation for `{name}` failed: {exc}") from exc
    entries = _ENTRY_RE.findall(text)
    if len(entries) != 1:
        raise InternalError(f"the PTX of `{name}` has {len(entries)} kernel entries, not one")
    return Ptx(_declare_version(text, isa, name), isa, entries[0], str(module))
