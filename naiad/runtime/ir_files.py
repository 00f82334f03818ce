"""A kernel compiled from an IR file, as Triton's `triton.compile("kernel.ttir", target=...)`:
the file's text is parsed, run through the TTIR pipeline and then the target's back-end stages,
so a kernel written or edited as IR (a test's hand-written TTIR, one printed by
`NAIAD_DUMP_DIR` and changed) shows what the back end makes of it.

    compiled = compile_ir_file("add.ttir", "cuda:sm_90a", CompileOptions(num_warps=4))
    compiled.asm["ttgir"], compiled.asm["ptx"], compiled.metadata.name

A `.ttgir` file holds a kernel already laid out for a GPU, as Triton's TTGIR stage leaves it:
it skips the TTIR pipeline and the TTGIR passes and goes on from the lowering, for a back end
that has a `ttgir` stage; its module's `ttg.num-warps` is the kernel's warps, as in Triton,
and the module attributes it leaves out take the target's and the options' values. A back end
that compiles TTIR (the CPU's) takes the file's kernel with its layouts dropped
(passes/drop_layouts.py: TTIR's ops and `ttg.warp_specialize`; what only a GPU holds, shared
memory and `ttng` ops, is refused by name). The TTGIR Triton 3.6 prints for NVIDIA GPUs
compiles as it is (tests/fixture_kernels/triton_ttgir.py: tutorial 09's persistent matmul,
wgmma and mma.sync pipelines, attention), with its variadic wgmma waits, rounded divisions,
async tokens, loop-carried buffer views and tensor descriptors (TMA copies, maps made in the
kernel). The kernel takes the function's parameters, then the global scratch pointer where it
makes tensor maps (runtime/global_scratch.py); Triton's always takes that one and a profiling
scratch pointer after them. A host descriptor parameter takes a `TensorDescriptor` at a launch
(ir_file_launch.py).

The kernel is the file's public `tt.func` (the others are its callees). What comes back is
inspected (`asm`, `metadata`) and launched as Triton's is, `compiled[grid](*args)` with the
function's parameters in order (ir_file_launch.py). Every call compiles: a file is a tool's
input, not a launch's, so nothing is cached.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..backends import registry
from ..backends.registry import CompileOptions
from ..ir import IntegerAttr, StringAttr
from ..ir.types import i32
from .compile_lock import compile_lock
from .compiled_kernel import CompiledKernel
from .compiler import TTIR_PIPELINE, TTIRBuild, _run_stages
from .ir_file_launch import parameter_kinds

# The IR a file may hold, by its suffix, as Triton tells them apart.
SUFFIXES = (".ttir", ".ttgir")


def compile_ir_file(path, target_name: str, options: CompileOptions) -> CompiledKernel:
    """The kernel of the TTIR or TTGIR file at `path` compiled for `target_name`
    ('cuda:sm_90a', 'cpu', ...) with `options` (module doc)."""
    path = Path(path)
    if path.suffix not in SUFFIXES:
        raise NotImplementedError(
            f"triton.compile of a `{path.suffix}` file is not supported by Naiad: it compiles "
            f"{', '.join(SUFFIXES)} files (or an ASTSource)"
        )
    laid_out = path.suffix == ".ttgir"
    return compile_ir_text(path.read_text(), str(path), target_name, options, laid_out)


def compile_ir_text(
    text: str, filename: str, target_name: str, options: CompileOptions, laid_out=False
) -> CompiledKernel:
    """`compile_ir_file` of IR already read (`filename` names it in parse errors): TTIR, or
    TTGIR where `laid_out`."""
    from .. import passes  # noqa: F401  (registers the passes)
    from ..backends.debug_info import function_ranges
    from ..ir.parser import parse_module
    from ..ir.printer import print_module
    from ..passes.pipeline import run_pipeline

    backend, target = registry.lookup(target_name)
    with compile_lock:
        module = parse_module(text, filename)
        name, func = kernel_function(module, filename)
        stages = backend.stages(target, options)
        functions = function_ranges(module)  # before any inlining (TTIRBuild.functions)
        if laid_out and backend.compiles_ttgir_files:
            stages, options = _after_layouts(module, stages, target_name, options)
            asm = {"source": text, "ttgir": print_module(module)}
        else:
            # A back end that compiles TTIR takes a .ttgir file's kernel without its layouts.
            dropped = ["drop-layouts"] if laid_out else []
            run_pipeline([*dropped, *TTIR_PIPELINE], module)
            asm = {"source": text, "ttir": print_module(module)}
        language = backend.language_target(target, options)
        metadata = {"name": name, "target": language.name, "debug": bool(options.debug)}
        metadata["parameters"] = parameter_kinds(func)
        kernel = CompiledKernel(name, asm, metadata, options=options)
        files, made = _run_stages(
            TTIRBuild(kernel, module, None, functions), backend, target, options, [], stages
        )
    texts = set(made["text_stages"])
    outputs = {stage: data.decode() if stage in texts else data for stage, data in files.items()}
    kernel.asm = backend.kernel_asm({**asm, **outputs}, target)
    kernel.metadata.update(made["kernel"])
    kernel.binary = outputs.get(backend.binary_stage) if backend.binary_stage else None
    return kernel


def _after_layouts(module, stages: list, target_name: str, options: CompileOptions):
    """The stages after `ttgir` and the options for a TTGIR `module`, whose attributes the
    file left out are set: the target's, one CTA, 32 threads a warp, and the options' warps
    where it names none (a module's own `ttg.num-warps` is the kernel's)."""
    names = [stage.name for stage in stages]
    attributes = module.attributes
    defaults = {"ttg.num-warps": options.num_warps, "ttg.num-ctas": 1}
    defaults["ttg.threads-per-warp"] = 32
    for key, value in defaults.items():
        if key not in attributes:
            attributes[key] = IntegerAttr(value, i32)
    if "ttg.target" not in attributes:
        capability = target_name.split("sm_")[-1].rstrip("a")
        attributes["ttg.target"] = StringAttr(f"cuda:{capability}")
    options = replace(options, num_warps=attributes["ttg.num-warps"].value)
    return stages[names.index("ttgir") + 1 :], options


def kernel_function(module, filename: str):
    """The name and op of the module's public `tt.func` (the kernel; private ones are its
    callees)."""
    public = [
        op
        for op in module.regions[0].entry_block
        if op.name == "tt.func"
        and (op.sym_visibility is None or op.sym_visibility.value == "public")
        and not op.is_declaration
    ]
    if len(public) != 1:
        raise ValueError(
            f"{filename}: a TTIR file compiles one kernel, its one public tt.func; "
            f"found {len(public)}"
        )
    return public[0].sym_name.value, public[0]
