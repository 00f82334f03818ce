"""Reading a 64-bit little-endian ELF relocatable object: its sections, symbols and relocations.

This is what elf_linker.py needs of the objects LLVM emits for Naiad's kernels, its worker pool
and its runtime library, and no more. The layouts are the ELF-64 specification's (the System V
gABI): a header, a table of section headers, a symbol table whose names are in a string table,
and `SHT_RELA` sections, each holding the relocations of the section its `sh_info` names.
Anything this reader does not describe (32-bit or big-endian ELF, an executable or shared
object) is `Unsupported`, which sends the object to LLVM's linker instead.
"""

from __future__ import annotations

import struct

# e_type of a relocatable object
ET_REL = 1
# sh_type
SHT_PROGBITS = 1
SHT_SYMTAB = 2
SHT_RELA = 4
SHT_NOBITS = 8
SHT_REL = 9
# sh_flags
SHF_WRITE = 0x1
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4
SHF_TLS = 0x400
# st_shndx: reserved section indices
SHN_UNDEF = 0
SHN_LORESERVE = 0xFF00
SHN_ABS = 0xFFF1
# st_info's low four bits: the symbol's type
STT_FUNC = 2
STT_SECTION = 3
STT_TLS = 6
# st_info's high four bits: its binding
STB_LOCAL = 0
STB_WEAK = 2

_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")


class Unsupported(Exception):
    """The object holds something Naiad's linker does not handle; LLVM's linker takes it."""


# Plain classes with slots rather than dataclasses or named tuples: they are made when the
# first cached kernel loads, and a dataclass costs a millisecond to define.
class Section:
    __slots__ = ("align", "flags", "index", "info", "link", "name", "offset", "size", "type")

    def __init__(self, index, name, type, flags, offset, size, link, info, align):
        self.index, self.name, self.type, self.flags = index, name, type, flags
        self.offset, self.size, self.link, self.info, self.align = offset, size, link, info, align

    @property
    def allocated(self) -> bool:
        """Whether the section is part of the program's memory image."""
        return bool(self.flags & SHF_ALLOC)


class Symbol:
    __slots__ = ("binding", "name", "section", "size", "type", "value")

    def __init__(self, name: str, type: int, binding: int, section: int, value: int, size=0):
        self.name, self.type, self.binding, self.value = name, type, binding, value
        self.section = section  # st_shndx: a section index, SHN_UNDEF or SHN_ABS
        self.size = size  # st_size: a function's bytes of code (profilers' maps read it)

    @property
    def defined(self) -> bool:
        return self.section != SHN_UNDEF


class Relocation:
    __slots__ = ("addend", "offset", "symbol", "type")

    def __init__(self, offset: int, type: int, symbol: int, addend: int):
        self.offset = offset  # in the section it patches
        self.type = type
        self.symbol = symbol  # index into the symbol table
        self.addend = addend


class ElfObject:
    """The parts of a relocatable object a linker reads."""

    __slots__ = ("data", "machine", "relocations", "sections", "symbols")

    def __init__(self, data: bytes, machine: int, sections, symbols, relocations):
        self.data = data
        self.machine = machine  # e_machine: 62 x86-64, 183 AArch64
        self.sections: list[Section] = sections
        self.symbols: list[Symbol] = symbols
        # the patched section's index -> its relocations
        self.relocations: dict[int, list[Relocation]] = relocations

    def contents(self, section: Section) -> bytes:
        """The section's bytes in the file (zeros for SHT_NOBITS)."""
        if section.type == SHT_NOBITS:
            return bytes(section.size)
        return self.data[section.offset : section.offset + section.size]


def parse(data: bytes) -> ElfObject:
    """Read `data`, an ELF-64 little-endian relocatable object."""
    if len(data) < _HEADER.size or data[:4] != b"\x7fELF":
        raise Unsupported("not an ELF object")
    ident, e_type, machine, *_, shoff, _flags, _ehsize, _, _, shentsize, shnum, shstrndx = (
        _HEADER.unpack_from(data)
    )
    if ident[4] != 2 or ident[5] != 1 or e_type != ET_REL or shentsize != _SECTION.size:
        raise Unsupported("not a 64-bit little-endian relocatable ELF object")
    if shnum == 0 or shstrndx >= SHN_LORESERVE:
        raise Unsupported("extended section numbering")
    headers = [_SECTION.unpack_from(data, shoff + i * _SECTION.size) for i in range(shnum)]
    names = headers[shstrndx]
    sections = [
        Section(index, _string(data, names[4] + header[0]), *header[1:3], *header[4:9])
        for index, header in enumerate(headers)
    ]
    symbols: list[Symbol] = []
    relocations: dict[int, list[Relocation]] = {}
    for section in sections:
        if section.type == SHT_SYMTAB:
            if symbols:
                raise Unsupported("more than one symbol table")
            symbols = _symbols(data, section, sections[section.link])
        elif section.type == SHT_RELA:
            relocations[section.info] = [
                Relocation(offset, info & 0xFFFFFFFF, info >> 32, addend)
                for offset, info, addend in _RELA.iter_unpack(
                    data[section.offset : section.offset + section.size]
                )
            ]
        elif section.type == SHT_REL and sections[section.info].allocated:
            raise Unsupported(f"relocations without addends ({section.name})")
    return ElfObject(data, machine, sections, symbols, relocations)


def _symbols(data: bytes, table: Section, strings: Section) -> list[Symbol]:
    raw = data[table.offset : table.offset + table.size]
    return [
        Symbol(_string(data, strings.offset + name), info & 0xF, info >> 4, shndx, value, size)
        for name, info, _other, shndx, value, size in _SYMBOL.iter_unpack(raw)
    ]


def _string(data: bytes, offset: int) -> str:
    return data[offset : data.index(b"\0", offset)].decode()
