"""The line table of a CPU kernel's object: which source line each instruction came from.

A profiler that sees the code the CPU back end loaded into memory (jitdump.py) gets no object
file to read, so it is handed the table itself: the rows of the object's `.debug_line` (the
DWARF 4 line program LLVM writes from Naiad's debug metadata, backends/debug_info.py), each
an address in a code section, a file and a line. The object is relocatable, so the sections'
cross references are relocations still to apply (`.rela.debug_line`, `.rela.debug_info`): an
address is a code section's index and an offset in it, and a file in the compile unit's
directory is found through the unit's `DW_AT_comp_dir` (.debug_info's first entry).

Only what LLVM writes for Naiad's modules is read: 32-bit DWARF 4, one compile unit. Anything
else gives no rows (the kernel then shows in a profile by name, without lines).
"""

from __future__ import annotations

import os
import struct

from . import elf_object, elf_relocations

# Relocations in debug sections: the bytes they write (an absolute address or offset).
_ABSOLUTE = {
    elf_relocations.R_X86_64_64: 8,
    elf_relocations.R_X86_64_32: 4,
    elf_relocations.R_AARCH64_ABS64: 8,
    elf_relocations.R_AARCH64_ABS32: 4,
}
_DW_AT_COMP_DIR = 0x1B
# DWARF forms a compile unit's first entry may hold, by the bytes they take (None: a LEB128,
# -1: a NUL-terminated string).
_FORM_BYTES = {
    0x01: 8, 0x05: 2, 0x06: 4, 0x07: 8, 0x0B: 1, 0x0C: 1, 0x0E: 4, 0x17: 4, 0x19: 0,
    0x0D: None, 0x0F: None, 0x08: -1,
}  # fmt: skip
_DW_FORM_STRP, _DW_FORM_STRING = 0x0E, 0x08


class Row:
    """One row of the line table: code at `offset` in section `section` is `file`:`line`."""

    __slots__ = ("column", "file", "line", "offset", "section")

    def __init__(self, section: int, offset: int, file: str, line: int, column: int):
        self.section, self.offset, self.file, self.line = section, offset, file, line
        self.column = column


def line_rows(obj: elf_object.ElfObject) -> list[Row]:
    """The rows of `obj`'s line table, in the table's order (an end of sequence is no row)."""
    named = {section.name: section for section in obj.sections}
    table = named.get(".debug_line")
    if table is None:
        return []
    data, targets = _relocated(obj, table)
    if len(data) < 4 or struct.unpack_from("<I", data)[0] >= 0xFFFFFFF0:
        return []  # empty, or 64-bit DWARF
    if struct.unpack_from("<H", data, 4)[0] != 4:
        return []
    return _Program(data, targets, _compile_directory(obj, named)).run()


def _relocated(obj: elf_object.ElfObject, section) -> tuple[bytes, dict[int, int]]:
    """The section's bytes with its absolute relocations applied as offsets within their
    target's section, and that section's index at each relocated place."""
    data = bytearray(obj.contents(section))
    targets = {}
    for relocation in obj.relocations.get(section.index, ()):
        width = _ABSOLUTE.get(relocation.type)
        if width is None:
            continue
        symbol = obj.symbols[relocation.symbol]
        value = symbol.value + relocation.addend
        data[relocation.offset : relocation.offset + width] = value.to_bytes(width, "little")
        targets[relocation.offset] = symbol.section
    return bytes(data), targets


def _compile_directory(obj: elf_object.ElfObject, named: dict) -> str:
    """The compile unit's `DW_AT_comp_dir` (the directory of file entries without one), or
    '' where .debug_info's first entry holds a form not read here."""
    info, abbrev, strings = (named.get(n) for n in (".debug_info", ".debug_abbrev", ".debug_str"))
    if info is None or abbrev is None:
        return ""
    data, _ = _relocated(obj, info)
    abbreviations = obj.contents(abbrev)
    if len(data) < 11 or struct.unpack_from("<H", data, 4)[0] != 4:
        return ""
    offset = struct.unpack_from("<I", data, 6)[0]
    _, at = _uleb(data, 11)  # the unit's entry: its abbreviation's code (the unit's first)
    _, offset = _uleb(abbreviations, offset)  # the abbreviation: code, tag, children flag
    _, offset = _uleb(abbreviations, offset)
    offset += 1
    while True:
        name, offset = _uleb(abbreviations, offset)
        form, offset = _uleb(abbreviations, offset)
        if form not in _FORM_BYTES:  # (the list's end, a 0 form, among them)
            return ""
        if name == _DW_AT_COMP_DIR:
            if form == _DW_FORM_STRP and strings is not None:
                return _string(obj.contents(strings), struct.unpack_from("<I", data, at)[0])
            return _string(data, at) if form == _DW_FORM_STRING else ""
        at = _skip(data, at, _FORM_BYTES[form])


class _Program:
    """The line program's state machine (DWARF 4, section 6.2), over the unit at offset 0."""

    def __init__(self, data: bytes, targets: dict[int, int], directory: str):
        self.data, self.targets = data, targets
        self.end = 4 + struct.unpack_from("<I", data)[0]
        self.start = 10 + struct.unpack_from("<I", data, 6)[0]
        self.step, _, _, self.line_base, self.line_range, self.opcode_base = struct.unpack_from(
            "<BBBbBB", data, 10
        )
        self.lengths = data[16 : 16 + self.opcode_base - 1]
        offset = 16 + self.opcode_base - 1
        directories = [directory]
        while data[offset]:
            directories.append(_string(data, offset))
            offset = _skip(data, offset, -1)
        self.files = [""]  # file entries count from 1
        offset += 1
        while data[offset]:
            name = _string(data, offset)
            folder, offset = _uleb(data, _skip(data, offset, -1))
            offset = _skip(data, _skip(data, offset, None), None)  # its time and length
            self.files.append(os.path.join(directories[folder], name))

    def run(self) -> list[Row]:
        rows: list[Row] = []
        data, at = self.data, self.start
        section, address, file, line, column = 0, 0, 1, 1, 0
        while at < self.end:
            opcode = data[at]
            at += 1
            if opcode >= self.opcode_base:  # a special opcode: advance both, then a row
                advance, line_step = divmod(opcode - self.opcode_base, self.line_range)
                address += advance * self.step
                line += self.line_base + line_step
                rows.append(Row(section, address, self.files[file], line, column))
            elif opcode == 0:  # an extended opcode
                length, at = _uleb(data, at)
                kind, operand = data[at], at + 1
                at += length
                if kind == 1:  # end of sequence: the state starts over
                    section, address, file, line, column = 0, 0, 1, 1, 0
                elif kind == 2:  # set address: a relocated place in a code section
                    section = self.targets.get(operand, 0)
                    address = struct.unpack_from("<Q", data, operand)[0]
            elif opcode == 1:  # copy
                rows.append(Row(section, address, self.files[file], line, column))
            elif opcode == 2:
                advance, at = _uleb(data, at)
                address += advance * self.step
            elif opcode == 3:
                delta, at = _sleb(data, at)
                line += delta
            elif opcode == 4:
                file, at = _uleb(data, at)
            elif opcode == 5:
                column, at = _uleb(data, at)
            elif opcode == 8:  # const add pc: special opcode 255's address step
                address += (255 - self.opcode_base) // self.line_range * self.step
            elif opcode == 9:
                address += struct.unpack_from("<H", data, at)[0]
                at += 2
            else:  # flags (no operand) and set_isa, or an opcode of a later version
                for _ in range(self.lengths[opcode - 1]):
                    at = _skip(data, at, None)
        return rows


def _uleb(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _sleb(data: bytes, at: int) -> tuple[int, int]:
    start = at
    value, at = _uleb(data, at)
    bits = 7 * (at - start)
    if value >> (bits - 1) & 1:
        value -= 1 << bits
    return value, at


def _skip(data: bytes, at: int, size: int | None) -> int:
    """The offset past a field of `size` bytes (None: a LEB128; -1: a NUL-terminated string)."""
    if size is None:
        return _uleb(data, at)[1]
    if size < 0:
        return data.index(b"\0", at) + 1
    return at + size


def _string(data: bytes, at: int) -> str:
    return data[at : data.index(b"\0", at)].decode(errors="replace")
