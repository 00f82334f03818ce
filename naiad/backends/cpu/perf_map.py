"""Naming the CPU code Naiad loads for profilers (NAIAD_CPU_PERF_MAP=1).

Kernels run from an anonymous mapping that Naiad's linker (or LLVM's) made, so `perf` shows
their samples as raw addresses. With the setting on, each object loaded (loader.py) is
described to perf twice over, once per convention perf reads:

- `/tmp/perf-<pid>.map`: a line `START SIZE name` (hexadecimal) per function, appended; `perf
  report` reads it by itself, with no step after recording;
- `/tmp/jit-<pid>.dump` (jitdump.py): each function's bytes and its line table, which `perf
  inject --jit` turns into ELF files, so `perf annotate` shows a kernel's source lines.

A function is a symbol of the object with a type and a size (`STT_FUNC`); its address is its
section's where it was loaded. A kernel's entry point is named after the kernel and its
specialization (`add_kernel(*fp32, *fp32, i32, BLOCK=128)`: `label`), the object's other
functions by their symbol with the label after it; an object without a label (the worker
pool, the runtime library) by its symbols alone. The line table is the object's own
(dwarf_lines.py), empty when it was compiled without lines (NAIAD_DISABLE_LINE_INFO=1).
"""

from __future__ import annotations

import ctypes
import os
import threading

from . import dwarf_lines, elf_object, jitdump

_lock = threading.Lock()


class Function:
    """One function of a loaded object: where it is, what it is called, its lines."""

    __slots__ = ("address", "lines", "name", "size")

    def __init__(self, name: str, address: int, size: int, lines: list):
        self.name, self.address, self.size = name, address, size
        self.lines = lines  # (address, line, file), in the line table's order


def kernel_label(name: str, signature: dict, constexprs: dict) -> str:
    """A kernel's name in profiles: its name and specialization, `add_kernel(*fp32, *fp32,
    i32, BLOCK=128)` (each parameter's type, a constexpr's value)."""
    parts = [
        f"{param}={constexprs.get(param, '?')}" if kind == "constexpr" else str(kind)
        for param, kind in signature.items()
    ]
    return f"{name}({', '.join(parts)})"


def map_path(pid: int | None = None) -> str:
    """The perf map of process `pid` (this one by default)."""
    return os.path.join(jitdump.DIRECTORY, f"perf-{os.getpid() if pid is None else pid}.map")


def publish(code: bytes, linked, exports: list[str], label: str | None) -> list[Function]:
    """Describe object `code`, linked as `linked` (elf_linker's image, whose `sections` give
    each section's address, or LLVM's library, whose `exports` only are known), to perf: its
    functions in the perf map and in the jitdump. Returns them."""
    obj = elf_object.parse(code)
    functions = loaded_functions(obj, _section_addresses(obj, linked, exports), exports, label)
    with _lock:
        text = "".join(f"{f.address:x} {f.size:x} {f.name}\n" for f in functions)
        fd = os.open(map_path(), os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    for f in functions:
        jitdump.record(obj.machine, f.name, f.address, ctypes.string_at(f.address, f.size), f.lines)
    return functions


def loaded_functions(obj, sections: dict[int, int], exports: list[str], label) -> list:
    """The functions of `obj` whose section was loaded at an address in `sections`, named
    for the profile, each with the rows of the line table in its code."""
    entry = exports[0] if exports else None
    rows = dwarf_lines.line_rows(obj)
    functions = []
    for symbol in obj.symbols:
        base = sections.get(symbol.section)
        if symbol.type != elf_object.STT_FUNC or not symbol.size or base is None:
            continue
        name = symbol.name
        if label is not None:
            name = label if name == entry else f"{name} [{label}]"
        end = symbol.value + symbol.size
        lines = [
            (base + row.offset, row.line, row.file)
            for row in rows
            if row.section == symbol.section and symbol.value <= row.offset < end
        ]
        functions.append(Function(name, base + symbol.value, symbol.size, lines))
    return functions


def _section_addresses(obj, linked, exports: list[str]) -> dict[int, int]:
    """Each loaded section's address: the image's own, else what the exported symbols'
    addresses say of their sections."""
    known = getattr(linked, "sections", None)
    if known is not None:
        return dict(known)
    found = {}
    for symbol in obj.symbols:
        if symbol.name in exports and symbol.defined:
            found[symbol.section] = linked[symbol.name] - symbol.value
    return found
