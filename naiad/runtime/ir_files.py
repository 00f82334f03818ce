"""A kernel compiled from a TTIR file, as Triton's `triton.compile("kernel.ttir", target=...)`:
the file's text is parsed, run through the TTIR pipeline and then the target's back-end stages,
so a kernel written or edited as IR (a test's hand-written TTIR, one printed by
`NAIAD_DUMP_DIR` and changed) shows what the back end makes of it.

    compiled = compile_ir_file("add.ttir", "cuda:sm_90a", CompileOptions(num_warps=4))
    compiled.asm["ttgir"], compiled.asm["ptx"], compiled.metadata.name

The kernel is the file's public `tt.func` (the others are its callees). What comes back is
inspected (`asm`, `metadata`) and launched as Triton's is, `compiled[grid](*args)` with the
function's parameters in order (ir_file_launch.py). Every call compiles: a file is a tool's
input, not a launch's, so nothing is cached.
"""

from __future__ import annotations

from pathlib import Path

from ..backends import registry
from ..backends.registry import CompileOptions
from .compile_lock import compile_lock
from .compiled_kernel import CompiledKernel
from .compiler import TTIR_PIPELINE, TTIRBuild, _run_stages
from .ir_file_launch import parameter_kinds

# The IR a file may hold, by its suffix, as Triton tells them apart.
SUFFIXES = (".ttir",)


def compile_ir_file(path, target_name: str, options: CompileOptions) -> CompiledKernel:
    """The kernel of the TTIR file at `path` compiled for `target_name` ('cuda:sm_90a',
    'cpu', ...) with `options` (module doc)."""
    path = Path(path)
    if path.suffix not in SUFFIXES:
        raise NotImplementedError(
            f"triton.compile of a `{path.suffix}` file is not supported by Naiad: it compiles "
            f"{', '.join(SUFFIXES)} files (or an ASTSource)"
        )
    return compile_ir_text(path.read_text(), str(path), target_name, options)


def compile_ir_text(
    text: str, filename: str, target_name: str, options: CompileOptions
) -> CompiledKernel:
    """`compile_ir_file` of TTIR already read (`filename` names it in parse errors)."""
    from .. import passes  # noqa: F401  (registers the passes)
    from ..ir.parser import parse_module
    from ..ir.printer import print_module
    from ..passes.pipeline import run_pipeline

    backend, target = registry.lookup(target_name)
    with compile_lock:
        module = parse_module(text, filename)
        name, func = _kernel(module, filename)
        run_pipeline(list(TTIR_PIPELINE), module)
        language = backend.language_target(target, options)
        asm = {"source": text, "ttir": print_module(module)}
        metadata = {"name": name, "target": language.name, "debug": bool(options.debug)}
        metadata["parameters"] = parameter_kinds(func)
        kernel = CompiledKernel(name, asm, metadata, options=options)
        stages = backend.stages(target, options)
        files, made = _run_stages(
            TTIRBuild(kernel, module, None), backend, target, options, [], stages
        )
    texts = set(made["text_stages"])
    outputs = {stage: data.decode() if stage in texts else data for stage, data in files.items()}
    kernel.asm = backend.kernel_asm({**asm, **outputs}, target)
    kernel.metadata.update(made["kernel"])
    kernel.binary = outputs.get(backend.binary_stage) if backend.binary_stage else None
    return kernel


def _kernel(module, filename: str):
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
