"""What both back ends ask of LLVM before their own code generation: the targets registered once,
and LLVM IR text parsed and verified.

LLVM aborts the whole process when code generation meets a module that does not verify, so every
module is verified here, first, and any problem LLVM reports becomes an `InternalError` (the LLVM
IR is Naiad's own output, so a bad module is Naiad's bug). Each back end then sets its module's
triple and data layout from its own target description.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm
from llvmlite.binding import ffi

from .errors import InternalError
from .fork_safety import hold_across_fork


class _BindingLock:
    """llvmlite's lock around every binding call (`ffi.lib._lock`, private: this module is the
    one wrapper allowed it), taken as llvmlite takes it (its callbacks run), so that a fork
    waits for the LLVM call in progress: a child forked inside one found it held forever."""

    def acquire(self) -> None:
        ffi.lib._lock.__enter__()

    def release(self) -> None:
        ffi.lib._lock.__exit__(None, None, None)


# After the compile lock and the CPU loader's (fork_safety.py), which are held around LLVM calls.
hold_across_fork(_BindingLock(), 20)


@functools.cache
def initialize() -> None:
    """Register every target LLVM was built with (the wheel has x86, AArch64, NVPTX, AMDGPU):
    code for a foreign target is emitted ahead of time, never run. llvmlite registers an
    assembly parser for the host only: inline assembly in a module for another target makes
    LLVM abort, so code generators emit intrinsics instead."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.initialize_native_asmparser()


def ident_strings() -> tuple[str, str]:
    """What a module's `!llvm.ident` says made it, as compilers name themselves there: Naiad's
    version with the Triton release whose language it follows, and LLVM's. Under the switch
    (as_triton.py) the program asked for Triton, and Triton's tools read the Triton release
    first (`Triton version X`), so that one leads."""
    from . import as_triton, versions

    release = ".".join(map(str, llvm.llvm_version_info))
    if as_triton.is_installed():
        maker = f"Triton version {versions.TRITON} (Naiad {versions.NAIAD})"
    else:
        maker = f"Naiad version {versions.NAIAD} (Triton language {versions.TRITON})"
    return maker, f"LLVM version {release}"


def parse_module(text: str, name: str = "kernel") -> llvm.ModuleRef:
    """Parse LLVM IR text and verify it; any problem is an InternalError naming `name`."""
    initialize()
    try:
        module = llvm.parse_assembly(text)
        module.verify()
    except RuntimeError as exc:
        raise InternalError(f"the LLVM IR of `{name}` is invalid: {exc}") from exc
    module.name = name
    return module
