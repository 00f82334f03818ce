"""What NAIAD_DUMP_DIR writes: every stage's text of every compile (`dump_stages`), and with
NAIAD_DUMP_PASSES the module after every pass (`pass_dumps`), in one folder per kernel and
specialization (`<dir>/<name>-<hash>/`). While Naiad stands in for Triton, Triton's
TRITON_KERNEL_DUMP=1 writes the same under TRITON_DUMP_DIR (`dump_directory`). With
NAIAD_PRINT_PASSES (Triton's MLIR_ENABLE_DUMP) the module is printed on stderr before every
pass (`pass_printer`), as MLIR's pass managers print for Triton.

Apart from the compiler (compiler.py) because it is an observer of the trip, not a step of it:
the compiler calls it at the end of every compile, cached or not, and hands `pass_dumps` to the
TTIR pipeline and to each back end's stages.
"""

from __future__ import annotations

import hashlib
import os
import sys

from .. import knobs
from .cache import triton_folder
from .compiled_kernel import CompiledKernel
from .specialization import Specialization

# MLIR_ENABLE_DUMP's values that print every compile and those that print none; any other
# text names a function (as Triton's pass managers read it).
_PRINT_ALL = {"1", "true", "on"}
_PRINT_NONE = {"", "0", "false", "off"}


def dump_directory() -> str:
    """Where every stage's IR is written (empty: nowhere): NAIAD_DUMP_DIR, else, with
    Triton's TRITON_KERNEL_DUMP on, TRITON_DUMP_DIR (`$TRITON_HOME/.triton/dump` unset)."""
    chosen = knobs.dump_dir.get()
    if chosen or not knobs.kernel_dump.get():
        return chosen
    return knobs.triton_dump_dir.get() or triton_folder("dump")


def _dump_folder(name: str, target: str, spec: Specialization) -> str | None:
    """`<dump directory>/<name>-<hash of the specialization and target>/`, made; None when
    there is no dump directory."""
    directory = dump_directory()
    if not directory:
        return None
    digest = hashlib.sha256(repr((spec.key, target)).encode()).hexdigest()[:16]
    folder = os.path.join(directory, f"{name}-{digest}")
    os.makedirs(folder, exist_ok=True)
    return folder


class _PassDumps:
    """NAIAD_DUMP_PASSES: the module after every pass of one pipeline run, numbered in the
    order the passes ran (`003-canonicalize.mlir`), in the kernel's dump folder, as
    MLIR_ENABLE_DUMP does for Triton."""

    def __init__(self, folder: str, prefix: str):
        self.folder, self.prefix, self.count = folder, prefix, 0

    def __call__(self, p, module) -> None:
        from ..ir.printer import print_module

        self.count += 1
        name = f"{self.prefix}-{self.count:03d}-{p.name or type(p).__name__}.mlir"
        with open(os.path.join(self.folder, name), "w") as f:
            f.write(f"// after pass '{p.name}'\n{print_module(module)}")


def pass_dumps(name: str, target: str, spec: Specialization, stage: str):
    """What writes the IR after each pass of `stage` ('ttir', a back end's name) of kernel
    `name`, with NAIAD_DUMP_PASSES and NAIAD_DUMP_DIR set; None otherwise."""
    if not knobs.dump_passes.get():
        return None
    folder = _dump_folder(name, target, spec)
    return None if folder is None else _PassDumps(folder, stage)


def dump_stages(kernel: CompiledKernel, spec: Specialization) -> None:
    """With NAIAD_DUMP_DIR set, write every stage's text under `<dir>/<name>-<hash>/`, for
    every compile, whatever started it (a cached one too: the stages are the cache's)."""
    folder = _dump_folder(kernel.name, kernel.metadata["target"], spec)
    if folder is None:
        return
    stages = list(kernel.asm)
    if "llir" in stages and "ptx" not in stages and "asm" not in stages:
        stages.append("asm")  # a CPU kernel's assembly is made on demand
    for stage in stages:
        text = kernel.asm[stage]
        suffix = "source.ttir" if stage == "source" else stage
        mode = "wb" if isinstance(text, bytes) else "w"  # a cubin, an object
        with open(os.path.join(folder, f"{kernel.name}.{suffix}"), mode) as f:
            f.write(text)


def printing_passes() -> bool:
    """Whether NAIAD_PRINT_PASSES asks for any printing: then compiles read no cache (a kernel
    found there would run no pass to print) and CPU launches wait for their compile."""
    return knobs.print_passes.get().strip().lower() not in _PRINT_NONE


def pass_printer():
    """What prints the module before each pass on stderr (NAIAD_PRINT_PASSES), or None."""
    text = knobs.print_passes.get().strip()
    if text.lower() in _PRINT_NONE:
        return None
    return _PassPrinter(None if text.lower() in _PRINT_ALL else text)


class _PassPrinter:
    """Prints `// -----// IR Dump Before <pass> ...` and the module, for every module, or
    (`function` given) only for a module that defines a function of that name."""

    def __init__(self, function: str | None):
        self.function = function

    def __call__(self, p, module) -> None:
        from ..ir.printer import print_module

        if self.function is not None and self.function not in _function_names(module):
            return
        name = p.name or type(p).__name__
        header = f"// -----// IR Dump Before {name} ('{module.name}' operation) //----- //"
        sys.stderr.write(f"{header}\n{print_module(module)}\n\n")
        sys.stderr.flush()


def _function_names(module) -> set[str]:
    names = set()
    for block in module.regions[0].blocks:
        for op in block:
            name = op.attributes.get("sym_name")
            if name is not None:
                names.add(getattr(name, "value", name))
    return names
