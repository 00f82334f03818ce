"""Loading compiled object code into this process.

A kernel's object code (from the compiler, or read back from the cache) is linked into the
process: relocations applied, sections mapped executable, and nothing else — no optimizer and no
code generation run again, so loading a cached kernel costs a few hundred microseconds
(bench/cpu/launch_overhead.py measures it). Naiad's own linker does it (elf_linker.py: ELF
objects for x86-64 and AArch64, the relocations LLVM emits for Naiad's code), so a process that
only runs cached kernels never imports llvmlite's binding; an object it does not handle entirely
goes to LLVM's ORC JIT linker instead, as does every object with NAIAD_CPU_LOADER=orc.

The object's undefined symbols resolve first to a fixed table of C library functions, with their
addresses looked up in the process (`ctypes.CDLL(None)`): the memory intrinsics LLVM may call,
`printf`/`fflush` for `device_print`, the thread and futex calls of the worker pool, and the libm
functions LLVM turns some intrinsics into on targets without an instruction for them (`frem`
becomes `fmodf`; `llvm.floor` becomes `floorf` without SSE4.1). That table is what code
generators may rely on; both linkers also fall back to the symbols the process exports, and
a symbol found nowhere fails the link with an InternalError.
Compiler-rt helpers (`__truncsfhf2`, `__divti3`, ...) are not in a Python process: Naiad's own
(runtime_library.py) are linked first, and every object resolves against them, so LLVM IR that
makes LLVM call one links on every CPU.

A `LoadedObject` keeps its code mapped: whoever holds an entry point's address (a compiled kernel)
holds the object too.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import threading
from collections.abc import Iterable

from ... import compile_profile, knobs
from ...errors import InternalError
from ...fork_safety import hold_across_fork
from . import elf_linker, object_store, perf_map, printing, runtime_library
from .target import host_target

_LIBC_SYMBOLS = (
    "memcpy",
    "memmove",
    "memset",
    "printf",
    "fflush",
    "syscall",
    "sched_yield",
    "clock_gettime",
    "pthread_create",
    "pthread_join",
)
_LIBM_FUNCTIONS = (
    "fmod",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "pow",
    "sin",
    "cos",
    "tan",
    "fma",
    "floor",
    "ceil",
    "trunc",
    "round",
    "rint",
    "nearbyint",
    "ldexp",
    "frexp",
    # libdevice's special functions on the CPU (lower_scalar/libdevice/special.py)
    "exp10",
    "hypot",
    "remainder",
    "erf",
    "erfc",
    "lgamma",
    "tgamma",
    "j0",
    "j1",
    "jn",
    "y0",
    "y1",
    "yn",
)
_LIBM_SYMBOLS = tuple(name + suffix for name in _LIBM_FUNCTIONS for suffix in ("f", ""))
# Every name loaded code may import, whatever the host (tests check objects built for other CPUs
# against it).
RESOLVED_NAMES = _LIBC_SYMBOLS + _LIBM_SYMBOLS + (printing.SYMBOL,) + tuple(runtime_library.EXPORTS)

# ELF `e_machine` of the architectures the back end generates, to refuse a foreign object before
# LLVM tries to link it.
_ELF_MACHINES = {62: "x86_64", 183: "aarch64"}


class LoadedObject:
    """Object code linked into the process; its exported symbols stay valid while it lives."""

    __slots__ = ("_code", "addresses")

    def __init__(self, code, exports: Iterable[str]):
        self._code = code  # an elf_linker.LinkedImage or an ORC library: `code[name]` addresses
        self.addresses = {name: code[name] for name in exports}

    def address(self, name: str) -> int:
        """The address of exported symbol `name` (an entry point, for `pool.run`)."""
        return self.addresses[name]


@functools.cache
def process_symbols() -> dict[str, int]:
    """The addresses of the C library functions loaded code may call (those this process has),
    of the runtime's `device_print` callback (printing.py) and of Naiad's compiler-rt helpers."""
    process = ctypes.CDLL(None)
    found = {printing.SYMBOL: printing.callback_address()}
    found.update(_runtime_library().addresses)
    for name in _LIBC_SYMBOLS + _LIBM_SYMBOLS:
        function = getattr(process, name, None)
        if function is not None:
            found[name] = ctypes.cast(function, ctypes.c_void_p).value
    return found


@functools.cache
def _jit():
    """The process's one ORC JIT linker: libraries linked into it live until their handle dies."""
    from . import llvm_tools

    return llvm_tools.create_jit(host_target().machine)


@functools.cache
def _runtime_library() -> LoadedObject:
    """runtime_library.py, compiled for the host (about 30 ms; the disk cache keeps it) and
    linked once per process."""

    def make() -> bytes:
        from . import llvm_tools

        return llvm_tools.compile_ir(runtime_library.library_ir(), host_target().machine)

    code = object_store.cached_object("runtime", make)
    exports = list(runtime_library.EXPORTS)
    linked = _link(code, "naiad_runtime", {}, exports)
    if knobs.cpu_perf_map.get():
        perf_map.publish(code, linked, exports, None)
    return LoadedObject(linked, exports)


_library_ids = itertools.count()
# One load at a time: the first makes the tables it links against and maybe the JIT (cached once
# made), and two threads making them at once would each link into their own copy, the one not
# kept then unmapping code its thread runs. llvmlite serializes an ORC link itself anyway. A fork
# waits for the load in progress (fork_safety.py: the pool loads its code outside any compile).
_loading = threading.RLock()
hold_across_fork(_loading, 10)


def load_object(
    code: bytes, exports: Iterable[str], name: str = "kernel", label: str | None = None
) -> LoadedObject:
    """Link object `code` (built for the host target) into the process; with
    NAIAD_CPU_PERF_MAP=1, describe its functions to perf (perf_map.py).

    Args:
        code: an object file's bytes, as `llvm_tools.emit_object` made them.
        exports: the symbols whose addresses are needed (the kernel's entry point first).
        name: a readable name for LLVM's messages; made unique here.
        label: what profiles call the first export (perf_map.kernel_label); None: every
            function by its symbol.

    Raises:
        ValueError: the object is for another architecture.
        InternalError: an undefined symbol of the object is found nowhere; with
            NAIAD_CPU_LOADER=naiad, Naiad's linker does not handle the object.
    """
    _check_architecture(code)
    exports = list(exports)
    with _loading, compile_profile.stage("load"):
        linked = _link(code, name, process_symbols(), exports)
        if knobs.cpu_perf_map.get():
            perf_map.publish(code, linked, exports, label)
        return LoadedObject(linked, exports)


_LINKERS = ("auto", "naiad", "orc")


def _link(code: bytes, name: str, imports: dict[str, int], exports: list[str]):
    """Naiad's linker where it handles the object and NAIAD_CPU_LOADER allows, else LLVM's."""
    choice = knobs.cpu_loader.get().strip() or "auto"
    if choice not in _LINKERS:
        raise ValueError(f"NAIAD_CPU_LOADER={choice!r}: expected one of {', '.join(_LINKERS)}")
    if choice != "orc":
        try:
            return elf_linker.link(code, imports, name)
        except elf_linker.Unsupported as exc:
            if choice == "naiad":
                raise InternalError(f"Naiad's linker cannot link `{name}`: {exc}") from exc
    from . import llvm_tools

    library = f"{name}.{next(_library_ids)}"
    return llvm_tools.link_object(_jit(), library, code, imports, exports)


def _check_architecture(code: bytes) -> None:
    if code[:4] != b"\x7fELF":
        return  # not ELF (Mach-O on a Mac host): LLVM's own checks apply
    machine = _ELF_MACHINES.get(int.from_bytes(code[18:20], "little"), "an unknown machine")
    if machine != host_target().arch:
        raise ValueError(
            f"object code for {machine} cannot run on this {host_target().arch} host; "
            f"compile for target 'cpu'"
        )
