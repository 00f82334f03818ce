"""The NVIDIA back end's trip, from a kernel's optimized TTIR to a cubin:

    TTIR --ttgir_pipeline--> TTGIR --lowering.lower_module--> LLVM IR --ptx.compile_ptx--> PTX
         --link.link--> cubin (where nvJitLink or a CUDA driver is present)

Every stage's text lands in `asm` ('ttgir', 'llir' (optimized, libdevice linked), 'ptx',
'cubin'), and what a launch needs in `metadata`: the kernel's name, warps, dynamic shared memory
bytes, PTX ISA, and with a cubin its registers and spills. Any target compiles without its
device; only the cubin needs a linker.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import InternalError
from ...ir import Operation
from ...ir.errors import VerificationError
from ...ir.printer import print_module
from ...ir.verifier import verify
from ...passes.pipeline import run_pipeline
from . import link, ptx
from . import target as nv_target
from .passes.convert_to_ttgir import ConvertToTTGIR


def ttgir_pipeline(
    num_warps: int, capability: int, num_ctas: int = 1, threads_per_warp: int = 32
) -> list:
    """The TTGIR passes in order: the part of Triton's make_ttgir that memory-bound kernels
    need (tensor-core dots, pipelining and shared-memory passes come with the next issue)."""
    return [
        ConvertToTTGIR(
            num_warps=num_warps,
            threads_per_warp=threads_per_warp,
            num_ctas=num_ctas,
            target=f"cuda:{capability}",
        ),
        "coalesce",
        "remove-layout-conversions",
        # optimize-thread-locality comes here too; the conversions accelerate-matmul makes
        # are removed again.
        "accelerate-matmul",
        "remove-layout-conversions",
        "canonicalize",
        "licm",
        "canonicalize",
        "cse",
        "remove-layout-conversions",
        "tritongpu-reduce-data-duplication",
        "symbol-dce",
        "cse",
        "canonicalize",
    ]


# Before the lowering, as Triton's make_llir: places every shared-memory buffer.
LLIR_PIPELINE = ["allocate-shared-memory"]


@dataclass
class CudaCompilation:
    """The stages of one kernel for one CUDA target: `asm` by stage name, and `metadata`."""

    asm: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)


def _check_ttgir(module: Operation) -> None:
    """Verify the TTGIR once before the lowering relies on its invariants (one layout for all
    of a reduction's operands, ...): a pass that broke one is Naiad's bug, reported as such,
    never a kernel that computes the wrong values."""
    try:
        verify(module)
    except VerificationError as exc:
        raise InternalError(f"the TTGIR passes left invalid IR: {exc}") from exc


def compile_module(
    module: Operation,
    target_name: str,
    *,
    num_warps: int = 4,
    num_ctas: int = 1,
    maxnreg: int | None = None,
    debug: bool = False,
) -> CudaCompilation:
    """Compile a TTIR `module` (after the TTIR pipeline; changed in place into TTGIR) for the
    CUDA target `target_name` (`cuda:sm_90a`, `cuda:sm_80`, ...); with `debug`, every access
    is bounds-checked against extents the launch passes (lowering/bounds.py).

    Raises:
        KernelNotImplementedError: an op the lowering does not handle yet (at the user's line).
        PtxIsaError: the kernel needs a newer PTX ISA than the installed CUDA accepts.
    """
    from .lowering import lower_module  # the lowering is large: loaded on the first compile

    target = nv_target.cuda_target(target_name)
    run_pipeline(ttgir_pipeline(num_warps, target.capability, num_ctas), module)
    _check_ttgir(module)
    out = CudaCompilation()
    out.asm["ttgir"] = print_module(module)
    run_pipeline(LLIR_PIPELINE, module)
    llir = lower_module(module, target, debug, maxnreg)
    cuda_version = link.linker_version()
    code = ptx.compile_ptx(llir, target, cuda_version=cuda_version)
    out.asm["llir"] = code.llir
    out.asm["ptx"] = code.text
    out.metadata.update(
        name=code.entry,
        target=target.name,
        num_warps=num_warps,
        num_ctas=num_ctas,
        shared=module.attributes["ttg.shared"].value,
        ptx_isa=str(code.isa),
    )
    if cuda_version is not None:
        cubin = link.link(code.text, code.entry, target, maxnreg=maxnreg)
        out.asm["cubin"] = cubin.data
        out.metadata.update(n_regs=cubin.n_regs, n_spills=cubin.n_spills, linker=cubin.linker)
    return out
