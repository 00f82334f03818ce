"""The CPU back end's pipeline: optimized TTIR → Linalg → LLVM IR → object code.

    compile_cpu(ttir_module, target)      # → CpuKernel: asm stages, object bytes, metadata

The steps, in order:

1. `inline` every call, `noinline` functions too (one function per kernel on the CPU);
2. `tt-to-linalg`, then `canonicalize`, `cse` and `dce` (the pointer offsets the structured
   views made unnecessary disappear here) — `asm['linalg']`;
3. `cpu-fuse-elementwise` (an elementwise chain becomes one loop), then code generation
   (codegen/): loops over scratch buffers, the entry point of abi.py —
   LLVM IR, verified by LLVM before anything else runs;
4. LLVM's -O3 pipeline with loop and SLP vectorization — `asm['llir']` is the optimized IR;
5. object code for the target, the bytes loaded at launch; `assembly()` gives its assembly text
   (`asm['asm']`) when asked for: printing it is a second code generation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.printer import print_module
from ...middle.linalg import TritonToLinalg
from ...passes.inline import Inline
from ...passes.pipeline import run_pipeline
from . import llvm_tools
from .codegen.module import lower_kernel
from .fuse_elementwise import FuseElementwise
from .target import CpuTarget


def linalg_pipeline(debug: bool = False) -> tuple:
    """Steps 1 and 2; with `debug`, every access is bounds-checked (middle/linalg)."""
    return (Inline(include_noinline=True), TritonToLinalg(debug), "canonicalize", "cse", "dce")


LINALG_PIPELINE = linalg_pipeline()
CPU_PIPELINE = (FuseElementwise(), "canonicalize", "cse", "dce")


@dataclass
class CpuKernel:
    """A kernel compiled for one CPU target."""

    name: str
    asm: dict[str, str]
    obj: bytes
    metadata: dict = field(default_factory=dict)


def compile_cpu(module, target: CpuTarget, debug: bool = False) -> CpuKernel:
    """Compile a TTIR module holding one kernel (after the TTIR pipeline) for `target`; in
    `debug` mode its entry point takes the extents of its pointer arguments (abi.py).
    `module` is converted in place."""
    run_pipeline(linalg_pipeline(debug), module)
    linalg_text = print_module(module)
    run_pipeline(CPU_PIPELINE, module)
    # The kernel, and declarations of the runtime functions it calls (device_print's).
    functions = [op for op in module.regions[0].entry_block if op.regions[0].blocks]
    if len(functions) != 1:
        raise ValueError(f"expected one kernel function, found {len(functions)}")
    lowered = lower_kernel(functions[0], target.triple, target.data_layout, target.features)
    llvm_module = llvm_tools.parse_module(str(lowered.module), lowered.entry)
    llvm_tools.optimize(llvm_module, target.machine, speed_level=2)
    obj = llvm_tools.emit_object(llvm_module, target.machine)
    asm = {"linalg": linalg_text, "llir": str(llvm_module)}
    metadata = {
        "entry": lowered.entry,
        "scratch_bytes": lowered.scratch_bytes,
        "sites": [list(site) for site in lowered.sites],
        "prints": "naiad_device_print" in lowered.module.globals,
        "stream_bytes": lowered.stream_bytes,
        "target": target.description(),
    }
    return CpuKernel(lowered.entry, asm, obj, metadata)


def assembly(llir: str, target: CpuTarget) -> str:
    """The assembly of optimized LLVM IR `llir` (`asm['llir']`) for `target`."""
    module = llvm_tools.parse_module(llir, "kernel")
    return llvm_tools.emit_assembly(module, target.machine)
