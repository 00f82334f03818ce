"""What LLVM IR leaves unresolved when compiled for CPU models other than this one.

LLVM's choice of runtime-library calls depends on the CPU model (F16C, AVX512-BF16, ...), so a
check on this machine alone says nothing about a user's. These are the models the suite checks:
x86-64 from the SSE-only baseline to AVX-512 with and without BF16 and FP16, and AArch64.
"""

from __future__ import annotations

from naiad.backends.cpu import llvm_tools, loader

from .elf import undefined_symbols

# (triple, CPU model, features): the x86-64 ones are target.py's host models.
CHECKED_MODELS = (
    ("x86_64-unknown-linux-gnu", "x86-64-v2", ""),
    ("x86_64-unknown-linux-gnu", "haswell", ""),
    ("x86_64-unknown-linux-gnu", "icelake-server", ""),
    ("x86_64-unknown-linux-gnu", "znver4", ""),
    ("x86_64-unknown-linux-gnu", "sapphirerapids", ""),
    ("aarch64-unknown-linux-gnu", "generic", "+neon"),
    ("aarch64-unknown-linux-gnu", "neoverse-v2", ""),
)

# Symbols the static linker itself provides.
_LINKER_SYMBOLS = {"_GLOBAL_OFFSET_TABLE_"}


def model_id(model) -> str:
    return f"{model[0].split('-')[0]}-{model[1]}"


def unresolved(text: str, model, optimized: bool = True) -> set[str]:
    """The symbols an object built from LLVM IR `text` for `model` needs and the CPU back end's
    loader would not resolve from its own table (the C library, libm, Naiad's runtime)."""
    machine = llvm_tools.create_target_machine(*model)
    code = llvm_tools.compile_ir(text, machine, "check", optimized=optimized)
    return undefined_symbols(code) - set(loader.RESOLVED_NAMES) - _LINKER_SYMBOLS
