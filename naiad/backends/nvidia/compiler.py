"""The NVIDIA back end's trip, from a kernel's optimized TTIR to a cubin:

    TTIR --ttgir_pipeline--> TTGIR --lowering.lower_module--> LLVM IR --ptx.compile_ptx--> PTX
         --link.link--> cubin (where nvJitLink or a CUDA driver is present)

Each arrow is a stage (`STAGES`, which the back end (backend.py) hands to the runtime). Every
stage's text lands in `asm` ('ttgir', 'llir' (optimized, libdevice linked), 'ptx', 'cubin'),
and what a launch needs in `metadata`: the kernel's name, warps, dynamic shared memory bytes,
PTX ISA, and with a cubin its registers and spills. Any target compiles without its device;
only the cubin needs a linker.
"""

from __future__ import annotations

from ...dialects import tt
from ...errors import InternalError, InvalidLaunchOption
from ...ir import Operation
from ...ir.errors import VerificationError
from ...ir.printer import print_module
from ...ir.verifier import verify
from ...passes.fuse_nested_loops import FuseNestedLoops
from ...passes.inline import Inline
from ..debug_info import function_ranges
from ..registry import Compilation, CompileOptions, Stage
from . import link, ptx
from . import target as nv_target
from .passes.accelerate_matmul import AccelerateMatmul
from .passes.asynchronous_dots import SHARED_BYTES_SM90
from .passes.convert_to_ttgir import ConvertToTTGIR
from .passes.pipeline_loads import PipelineLoads
from .passes.warp_specialize import WarpSpecialize


def ttgir_pipeline(
    num_warps: int,
    capability: int,
    num_ctas: int = 1,
    threads_per_warp: int = 32,
    num_stages: int = 3,
    arch_specific: bool = True,
) -> list:
    """The TTGIR passes in order, as Triton's make_ttgir: layouts, loop-accumulated
    reductions kept within threads, tensor-core dots (`wgmma` on sm_90 when `arch_specific`,
    the sm_90a target), operands through shared memory, and the pipelining of their loads."""
    # `tl.range(flatten=True)` nests are fused, as Triton fuses them, so that the pipeliner
    # prefetches the next tile's first K steps under the current tile's last ones and its
    # epilogue. Below wgmma, not the nests with dots: their dot stays synchronous in the fused
    # loop (wgmma's runs on: the tile's fresh accumulator is its useC, the epilogue waits in its
    # branch, asynchronous_dots.py); fused with a synchronous dot, matmul nests ran slower
    # (examples/09, fp16 4096^3, H200, TFLOP/s fused against the nest: pointers 264 / 487,
    # descriptors 133 / 547). With wgmma, not the nests whose operands arrive by tensor
    # copies (as nests they ran at 1.00-1.12 of Triton's fused loops, tutorial 09, fp16
    # 8192^3, H200), nor those whose rings and epilogue would not fit in shared memory
    # together (passes/dot_nests.py).
    wgmma = arch_specific and capability >= 90
    return [
        # The lowering makes one function: `noinline` callees (scalar arguments only, the
        # frontend's rule) are inlined here, after `asm['ttir']` shows their calls.
        Inline(include_noinline=True),
        FuseNestedLoops(
            except_dots="tensor-maps" if wgmma else "all", shared_bytes=SHARED_BYTES_SM90
        ),
        ConvertToTTGIR(
            num_warps=num_warps,
            threads_per_warp=threads_per_warp,
            num_ctas=num_ctas,
            target=f"cuda:{capability}",
        ),
        "tritongpu-prove-tensor-maps",
        "coalesce",
        "remove-layout-conversions",
        "tritongpu-optimize-thread-locality",
        AccelerateMatmul(wgmma=arch_specific),
        "remove-layout-conversions",
        "canonicalize",
        "licm",
        "canonicalize",
        "cse",
        "remove-layout-conversions",
        "tritongpu-dot-operands-shared",
        "tritongpu-optimize-accumulator-init",
        *([WarpSpecialize(num_stages=num_stages)] if wgmma else []),
        PipelineLoads(num_stages=num_stages if capability >= 80 else 1),
        "tritongpu-pipeline-bulk-reductions",
        "canonicalize",
        "tritongpu-reduce-data-duplication",
        "symbol-dce",
        "cse",
        "canonicalize",
    ]


# Before the lowering, as Triton's make_llir: places the partitions' warps and every
# shared-memory buffer.
LLIR_PIPELINE = ["tritongpu-allocate-warp-groups", "allocate-shared-memory"]


def _check_ttgir(module: Operation) -> None:
    """Verify the TTGIR once before the lowering relies on its invariants (one layout for all
    of a reduction's operands, ...): a pass that broke one is Naiad's bug, reported as such,
    never a kernel that computes the wrong values."""
    try:
        verify(module)
    except VerificationError as exc:
        raise InternalError(f"the TTGIR passes left invalid IR: {exc}") from exc


def to_ttgir(c: Compilation) -> None:
    """TTIR → TTGIR: every tensor gets its layout (`ttgir_pipeline`)."""
    options, target = c.options, c.target
    # Debug mode checks the bounds of every load, which a pipelined load no longer is.
    stages = 1 if options.debug else options.num_stages
    pipeline = ttgir_pipeline(
        options.num_warps,
        target.capability,
        ctas_per_program(options.num_ctas, target.capability),
        32,
        stages,
        target.hopper_only,
    )
    if getattr(options, "line_info", False) and "functions" not in c.notes:
        c.notes["functions"] = function_ranges(c.module)  # `noinline` ones, inlined next
    c.run_passes("ttgir", pipeline)
    _check_ttgir(c.module)
    c.asm["ttgir"] = print_module(c.module)


def ctas_per_program(num_ctas: int, capability: int) -> int:
    """The CTAs one program runs on: one. `num_ctas > 1` asks Hopper to spread a program over
    a thread-block cluster; a program's values do not depend on it (its program id is the
    cluster's), so Naiad runs each program on one CTA. Below sm_90 there are no clusters, and
    the option is refused, as Triton refuses it."""
    if num_ctas > 1 and capability < 90:
        raise InvalidLaunchOption(
            f"num_ctas > 1 requires NVIDIA SM90+ (Hopper): thread-block clusters; got "
            f"num_ctas={num_ctas} for sm_{capability}"
        )
    return 1


def to_llvm(c: Compilation) -> None:
    """TTGIR → LLVM IR for nvptx64 (shared memory placed first); `asm['llir']` is replaced
    by the optimized IR at the next stage."""
    from .lowering import lower_module  # the lowering is large: loaded on the first compile

    c.run_passes("llir", LLIR_PIPELINE)
    c.metadata["tensor_maps"] = _tensor_maps(c.module)
    launched = c.module.attributes.get("ttg.total-num-warps")  # a warp-specialized kernel's
    c.metadata["num_warps"] = c.options.num_warps if launched is None else launched.value
    scratch = _global_scratch_size(c.module)
    if scratch:  # only then: torch's static launcher reads its presence as one more parameter
        c.metadata["global_scratch_size"] = scratch
    options = c.options
    llir = lower_module(
        c.module,
        c.target,
        options.debug,
        options.maxnreg,
        options.enable_fp_fusion,
        line_info=getattr(options, "line_info", False),
        local_variables=getattr(options, "local_variables", False),
        functions=c.notes.get("functions", ()),
    )
    c.metadata["shared"] = c.module.attributes["ttg.shared"].value  # the lowering's scratch too
    c.module = c.asm["llir"] = llir


def _global_scratch_size(module) -> int:
    """The bytes of global scratch each program needs: the tensor maps it makes
    (lowering/tensor_map_create.py); the launcher allocates them."""
    from .lowering.tensor_map_create import scratch_bytes_per_program

    (kernel,) = [op for op in module.body.ops if isinstance(op, tt.FuncOp)]
    return scratch_bytes_per_program(kernel)


def _tensor_maps(module) -> list[str]:
    """The descriptor arguments the kernel takes a tensor map of (frontend/tensor_maps.py),
    by name: the launcher encodes one for each."""
    (kernel,) = [op for op in module.body.ops if isinstance(op, tt.FuncOp)]
    return [
        arg.location.name.removesuffix(".tensor_map")
        for arg in kernel.body.block.arguments
        if isinstance(arg.type, tt.TensorDescType)
    ]


def to_ptx(c: Compilation) -> None:
    """LLVM IR → PTX (libdevice linked, -O3), at the least PTX ISA the kernel needs."""
    code = ptx.compile_ptx(
        c.module,
        c.target,
        cuda_version=link.linker_version(),
        extern_libs=getattr(c.options, "extern_libs", ()),
    )
    c.module = code
    c.asm["llir"] = code.llir
    c.asm["ptx"] = code.text
    c.metadata.update(
        name=code.entry,
        target=c.target.name,
        num_ctas=ctas_per_program(c.options.num_ctas, c.target.capability),
        ptx_isa=str(code.isa),
    )


def to_cubin(c: Compilation) -> None:
    """PTX → cubin, where a linker is present (nvJitLink or the driver): any target compiles
    without its device, only this stage needs the linker."""
    if link.linker_version() is None:
        return
    cubin = link.link(c.module.text, c.module.entry, c.target, maxnreg=c.options.maxnreg)
    c.asm["cubin"] = cubin.data
    c.metadata.update(n_regs=cubin.n_regs, n_spills=cubin.n_spills, linker=cubin.linker)


STAGES = (
    Stage("ttgir", to_ttgir),
    Stage("llir", to_llvm),
    Stage("ptx", to_ptx),
    Stage("cubin", to_cubin),
)


def compile_module(
    module: Operation,
    target_name: str,
    *,
    num_warps: int = 4,
    num_ctas: int = 1,
    maxnreg: int | None = None,
    debug: bool = False,
    num_stages: int = 3,
) -> Compilation:
    """Compile a TTIR `module` (after the TTIR pipeline; changed in place into TTGIR) for the
    CUDA target `target_name` (`cuda:sm_90a`, `cuda:sm_80`, ...), every stage in one call
    (tests and tools; the runtime runs `STAGES` behind its cache); with `debug`, every access
    is bounds-checked against extents the launch passes (lowering/bounds.py).

    Raises:
        KernelNotImplementedError: an op the lowering does not handle yet (at the user's line).
        PtxIsaError: the kernel needs a newer PTX ISA than the installed CUDA accepts.
    """
    options = CompileOptions(
        num_warps=num_warps,
        num_ctas=num_ctas,
        num_stages=num_stages,
        maxnreg=maxnreg,
        debug=debug,
    )
    c = Compilation(module, nv_target.cuda_target(target_name), options, {})
    for stage in STAGES:
        stage.run(c)
    return c
