"""The CPU back end's one wrapper around `llvmlite.binding`: the rest of it calls LLVM only through
here (target registration and `parse_module` are naiad/llvm_util.py's, shared with the NVIDIA back
end, and re-exported here).

LLVM aborts the whole process on some errors (a bad target triple or feature string, code
generation of a module that does not verify). So every module is verified before anything else
touches it, and a failure there — like any error LLVM reports without aborting — becomes an
`InternalError`: the LLVM IR is Naiad's own output, so a bad module is Naiad's bug. Target
triples, CPU names and feature strings reach `create_target_machine` only from `target.py`'s
tables or from LLVM's own description of the host.

Binding calls are serialized by llvmlite's own lock, so these functions are safe from any thread.
"""

from __future__ import annotations

import llvmlite
import llvmlite.binding as llvm

from ...errors import InternalError
from ...llvm_util import initialize
from ...llvm_util import parse_module as parse_module  # re-exported for the compiler

ModuleRef = llvm.ModuleRef
TargetMachine = llvm.TargetMachine


def version() -> str:
    """llvmlite's and LLVM's versions, part of every compiled artifact's cache key."""
    return f"llvmlite {llvmlite.__version__}, LLVM " + ".".join(map(str, llvm.llvm_version_info))


# -- the host -----------------------------------------------------------------------------------
def host_triple() -> str:
    """The triple of this process (e.g. `x86_64-unknown-linux-gnu`)."""
    return llvm.get_process_triple()


def host_cpu_name() -> str:
    """LLVM's name for the host CPU (e.g. `znver4`, `neoverse-v2`)."""
    return llvm.get_host_cpu_name()


def host_cpu_features() -> str:
    """The host CPU's features as a sorted `+a,-b,...` string, as LLVM detects them."""
    return llvm.get_host_cpu_features().flatten(sort=True)


# -- target machines ----------------------------------------------------------------------------
def create_target_machine(triple: str, cpu: str, features: str) -> TargetMachine:
    """A target machine emitting position-independent code at -O3 with the small code model
    (the JIT linker places the code; PIC keeps it movable)."""
    initialize()
    try:
        target = llvm.Target.from_triple(triple)
        return target.create_target_machine(
            cpu=cpu, features=features, opt=3, reloc="pic", codemodel="default"
        )
    except RuntimeError as exc:
        raise InternalError(f"LLVM has no target machine for {triple} ({cpu}): {exc}") from exc


def data_layout(machine: TargetMachine) -> str:
    """The data layout string code for `machine` must carry."""
    return str(machine.target_data)


# -- modules ------------------------------------------------------------------------------------
def optimize(
    module: ModuleRef, machine: TargetMachine, speed_level: int = 3, grow_loops: bool = True
) -> None:
    """Retarget `module` to `machine` and run LLVM's default pipeline at `speed_level` (the new
    pass manager), with loop vectorization on: the CPU back end leaves vectorization of its
    loops to LLVM. `grow_loops` False leaves out what copies a loop's body (unrolling, but for
    loops that ask for it, and the vectorizer's interleaving) and the SLP vectorizer: on a large
    module they cost as much as the rest of the pipeline and make more code to emit after it."""
    module.triple = machine.triple
    module.data_layout = data_layout(machine)
    tuning = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    tuning.loop_vectorization = True
    tuning.slp_vectorization = grow_loops
    tuning.loop_interleaving = grow_loops
    tuning.loop_unrolling = grow_loops
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)


def emit_object(module: ModuleRef, machine: TargetMachine) -> bytes:
    """Object code (ELF on Linux) for `module`; it must already carry `machine`'s data layout."""
    return bytes(machine.emit_object(module))


def emit_assembly(module: ModuleRef, machine: TargetMachine) -> str:
    """The assembly `emit_object` would assemble, for `asm['asm']` and tests."""
    return machine.emit_assembly(module)


def compile_ir(
    text: str, machine: TargetMachine, name: str = "kernel", optimized: bool = True
) -> bytes:
    """Parse, verify, optimize (unless `optimized` is False: IR written by hand is already what
    it should be, and the pipeline costs more than code generation) and emit `text` as object
    code for `machine`."""
    module = parse_module(text, name)
    if optimized:
        optimize(module, machine)
    else:
        module.triple = machine.triple
        module.data_layout = data_layout(machine)
    return emit_object(module, machine)


# -- loading object code ------------------------------------------------------------------------
JIT = llvm.LLJIT
LoadedLibrary = llvm.ResourceTracker


def create_jit(machine: TargetMachine) -> JIT:
    """An ORC JIT that links object code into this process (it never compiles IR here)."""
    initialize()
    try:
        return llvm.create_lljit_compiler(machine)
    except RuntimeError as exc:
        raise InternalError(f"LLVM could not create a JIT: {exc}") from exc


def link_object(
    jit: JIT, library: str, code: bytes, imports: dict[str, int], exports: list[str]
) -> LoadedLibrary:
    """Link object `code` into the process as a new library named `library` (unique per JIT).

    Undefined symbols of the object resolve to `imports` (name → address), then to what the
    process exports; `exports` are
    the symbols whose addresses the returned handle gives (`handle[name]`). The code stays mapped
    while the handle lives. A failure (a symbol neither defined nor imported) is an InternalError;
    LLVM also prints the missing names on stderr."""
    builder = llvm.JITLibraryBuilder().add_object_img(code)
    for name, address in imports.items():
        builder.import_symbol(name, address)
    for name in exports:
        builder.export_symbol(name)
    try:
        return builder.link(jit, library)
    except RuntimeError as exc:
        raise InternalError(f"linking `{library}` into the process failed: {exc}") from exc
