"""LLVM IR of a test, compiled for the host and linked into the process by the CPU back end."""

from __future__ import annotations

import llvmlite.binding as llvm

from naiad.backends.cpu import llvm_tools
from naiad.backends.cpu.loader import LoadedObject, load_object
from naiad.backends.cpu.target import host_target


def host_machine() -> llvm.TargetMachine:
    """The target machine of the host (or of NAIAD_HOST_CPU's model): -O3, PIC."""
    return host_target().machine


def load_module(module: llvm.ModuleRef, exports, name: str = "test") -> LoadedObject:
    """Emit an already optimized (or deliberately unoptimized) parsed module for the host and
    link it; `exports` are the functions whose addresses the result gives."""
    machine = host_machine()
    module.triple = machine.triple
    module.data_layout = llvm_tools.data_layout(machine)
    return load_object(llvm_tools.emit_object(module, machine), exports, name)


def load_ir(text: str, exports, name: str = "test", optimized: bool = True) -> LoadedObject:
    """Parse, verify, optimize at -O3 (unless `optimized` is False) and link LLVM IR `text`."""
    code = llvm_tools.compile_ir(text, host_machine(), name, optimized=optimized)
    return load_object(code, exports, name)
