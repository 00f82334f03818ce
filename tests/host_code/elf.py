"""The undefined symbols of an ELF64 little-endian object file (x86-64 and AArch64 Linux), read
with the back end's own reader (naiad/backends/cpu/elf_object.py)."""

from __future__ import annotations

from naiad.backends.cpu import elf_object


def undefined_symbols(code: bytes) -> set[str]:
    """The names an object refers to but does not define."""
    return {s.name for s in elf_object.parse(code).symbols if not s.defined and s.name}
