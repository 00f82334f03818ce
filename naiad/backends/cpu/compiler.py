"""The CPU back end's pipeline: optimized TTIR → Linalg → LLVM IR → object code.

    compile_cpu(ttir_module, target)      # → CpuKernel: asm stages, object bytes, metadata

The steps, in order (`STAGES`, which the back end (backend.py) hands to the runtime):

1. `ttgir`: `inline` every call, `noinline` functions too (one function per kernel on the
   CPU) — `asm['ttgir']`, the TTIR this back end lowers, under the name Triton gives the TTIR
   its GPU back ends lower (theirs adds layouts; the CPU's TTIR has none), so that programs
   and tests reading `asm["ttgir"]` find the kernel as this back end compiles it;
2. `linalg`: `tt-to-linalg` with every access bounds-checked, then `canonicalize`, `cse` and
   `dce` (the pointer offsets the structured views made unnecessary disappear here) —
   `asm['linalg']`;
3. `llir`: `cpu-widen-dot-operands` (a dot's 16/8-bit float operands widened to f32 once,
   where they are made), `cpu-fuse-elementwise` (an elementwise chain becomes one loop), then code
   generation (codegen/): loops over scratch buffers, the entry point of abi.py — LLVM IR,
   verified by LLVM before anything else runs; then LLVM's -O2 pipeline with loop and SLP
   vectorization (a large kernel without unrolling, interleaving and SLP: `LARGE_MODULE_LINES`) —
   `asm['llir']` is the optimized IR;
4. `obj`: object code for the target, the bytes loaded at launch; `assembly()` gives its
   assembly text (`asm['asm']`) when asked for: printing it is a second code generation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ... import compile_profile
from ...dialects import tt
from ...ir import is_pointer_like
from ...ir.locations import argument_names
from ...ir.printer import print_module
from ...middle.linalg import TritonToLinalg
from ...middle.linalg.pointer_analysis import PointerAnalysis
from ...passes.inline import Inline
from ..debug_info import function_ranges
from ..registry import Compilation, Stage
from . import llvm_tools
from .carried_reductions import CarriedReductions
from .codegen.lines import locals_of
from .codegen.module import lower_kernel
from .fuse_elementwise import FuseElementwise
from .sequence_partitions import SequencePartitions
from .target import CpuTarget
from .versioned_checks import VersionedChecks
from .widen_dot_operands import WidenDotOperands

# Every access is bounds-checked, debug mode or not (middle/linalg/bounds_checks.py): a CPU
# kernel shares the process with its caller, and an access far outside an array would kill it
# (or quietly write into a neighbour) where a GPU's fault leaves the user's Python running.
# `tl.range(flatten=True)` nests are fused in this stage, as Triton fuses them in its TTGIR
# stage: `asm['ttir']` keeps the hint, `asm['ttgir']` shows the one loop. A hand-written
# `ttg.warp_specialize` runs its regions one after another (sequence_partitions.py).
TARGET_TTIR_PIPELINE = (
    Inline(include_noinline=True),
    SequencePartitions(),
    "fuse-nested-loops",
    CarriedReductions(),
)
LINALG_PIPELINE = (
    TritonToLinalg(bounds=True),
    "canonicalize",
    "cse",
    "dce",
)
CPU_PIPELINE = (
    VersionedChecks(),
    WidenDotOperands(),
    FuseElementwise(),
    "canonicalize",
    "cse",
    "dce",
)

# A kernel whose LLVM IR (before optimization) is longer than this many lines is optimized
# without loop unrolling, the vectorizer's interleaving and SLP vectorization: on tutorial 06's
# attention (3,000 lines) unrolling and SLP cost half of LLVM's time (optimization 0.59 -> 0.28
# s, object code 0.47 -> 0.21 s, CPU time), and interleaving another 10-15 % of it (2,100
# lines); the loops that matter are vectorized anyway, and Naiad's own vector loops (the dot's
# micro-kernel, reductions, transposes) hide their latencies themselves. bench/cpu/kernels.py
# and the attention kernels ran as fast without them (bench/RESULTS.md). Small kernels keep
# them: there they cost little.
LARGE_MODULE_LINES = 1500


def to_target_ttir(c: Compilation) -> None:
    """Step 1. Also records the kernel's arguments as the entry point takes them, and which
    pointers it may store through (read from the TTIR, before the conversion)."""
    arguments = _argument_kinds(c.module)
    c.metadata["arguments"] = arguments
    c.metadata["written"] = _written_arguments(c.module, arguments)
    if getattr(c.options, "local_variables", False):  # few of them outlive the conversion
        c.notes["locals"] = locals_of(_kernel_function(c.module))
    if getattr(c.options, "line_info", False) and "functions" not in c.notes:
        c.notes["functions"] = function_ranges(c.module)  # `noinline` ones, inlined next
    c.run_passes("ttgir", TARGET_TTIR_PIPELINE)
    c.asm["ttgir"] = print_module(c.module)


def to_linalg(c: Compilation) -> None:
    """Step 2."""
    c.run_passes("linalg", LINALG_PIPELINE)
    c.asm["linalg"] = print_module(c.module)


def to_llvm(c: Compilation) -> None:
    """Step 3: the module becomes an (optimized) LLVM module."""
    target: CpuTarget = c.target
    with compile_profile.stage("cpu passes"):
        c.run_passes("cpu", CPU_PIPELINE)
    # The kernel, and declarations of the runtime functions it calls (device_print's).
    functions = [op for op in c.module.regions[0].entry_block if op.regions[0].blocks]
    if len(functions) != 1:
        raise ValueError(f"expected one kernel function, found {len(functions)}")
    with compile_profile.stage("code generation"):
        line_info = getattr(c.options, "line_info", False)
        described = None
        if line_info and getattr(c.options, "local_variables", False):
            names = [name for name, _ in c.metadata["arguments"]]
            described = (names, c.notes.get("locals", []))
        lowered = lower_kernel(
            functions[0],
            target.triple,
            target.data_layout,
            target.features,
            line_info=line_info,
            described=described,
            functions=c.notes.get("functions", ()),
        )
        text = str(lowered.module)
    with compile_profile.stage("LLVM parse, verify"):
        c.module = llvm_tools.parse_module(text, lowered.entry)
    with compile_profile.stage("LLVM optimize"), c.unlocked():
        small = _code_lines(text) <= LARGE_MODULE_LINES
        llvm_tools.optimize(c.module, target.machine, speed_level=2, grow_loops=small)
    c.asm["llir"] = str(c.module)
    c.metadata.update(
        entry=lowered.entry,
        scratch_bytes=lowered.scratch_bytes,
        sites=[list(site) for site in lowered.sites],
        prints="naiad_device_print" in lowered.module.globals,
        stream_bytes=lowered.stream_bytes,
        target=target.description(),
    )


def _code_lines(text: str) -> int:
    """The lines of LLVM IR text before its metadata (which llvmlite writes last): the size
    of the code, the same with debug info or without."""
    end = text.find("\n!")
    return text.count("\n", 0, len(text) if end < 0 else end)


def to_object(c: Compilation) -> None:
    """Step 4."""
    with c.unlocked():
        c.asm["obj"] = llvm_tools.emit_object(c.module, c.target.machine)


STAGES = (
    Stage("ttgir", to_target_ttir),
    Stage("linalg", to_linalg),
    Stage("llir", to_llvm),
    Stage("obj", to_object),
)


@dataclass
class CpuKernel:
    """A kernel compiled for one CPU target."""

    name: str
    asm: dict[str, str]
    obj: bytes
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Options:
    debug: bool = False


def compile_cpu(module, target: CpuTarget, debug: bool = False) -> CpuKernel:
    """Compile a TTIR module holding one kernel (after the TTIR pipeline) for `target`, every
    stage in one call (tests; the runtime runs `STAGES` behind its cache); its entry point
    takes the extents of its pointer arguments (abi.py). `module` is converted in place."""
    c = Compilation(module, target, _Options(debug), {})
    for stage in STAGES:
        stage.run(c)
    obj = c.asm.pop("obj")
    return CpuKernel(c.metadata["entry"], c.asm, obj, c.metadata)


def assembly(llir: str, target: CpuTarget) -> str:
    """The assembly of optimized LLVM IR `llir` (`asm['llir']`) for `target`."""
    module = llvm_tools.parse_module(llir, "kernel")
    return llvm_tools.emit_assembly(module, target.machine)


def _kernel_function(module):
    """The kernel's `tt.func`: the public one (its noinline callees are private)."""
    funcs = list(module.regions[0].entry_block)
    public = [f for f in funcs if f.sym_visibility is None or f.sym_visibility.value == "public"]
    return (public or funcs)[-1]


def _argument_kinds(module) -> list:
    """[name, kind] of each argument of the kernel's `tt.func`: 'ptr', or the scalar type."""
    func = _kernel_function(module)
    return [
        [name, "ptr" if is_pointer_like(arg.type) else str(arg.type)]
        for name, arg in zip(argument_names(func), func.arguments)
    ]


def _written_arguments(module, arguments) -> list:
    """The pointer arguments the kernel may store to (all of them when a store's pointer is
    not traced to one argument), so a launch can refuse read-only arrays for them instead of
    faulting. A poll counts: the CPU reads it by a compare-and-swap, which writes."""
    func = _kernel_function(module)
    analysis = PointerAnalysis()
    names = {arg: name for arg, (name, _) in zip(func.arguments, arguments)}
    pointers = [name for name, kind in arguments if kind == "ptr"]
    written = set()
    for op in func.walk():
        if isinstance(op, tt.StoreOp | tt.AtomicRMWOp | tt.AtomicCASOp | tt.AtomicPollOp):
            base = analysis.base_of(op.ptr)
            if base not in names:
                return pointers
            written.add(names[base])
    return [name for name in pointers if name in written]
