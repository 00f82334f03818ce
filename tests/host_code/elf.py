"""The undefined symbols of an ELF64 little-endian object file (x86-64 and AArch64 Linux).

Enough of the format to answer one question — what must the linker find elsewhere — without a
dependency: the section headers, then every symbol table's entries whose section index is
SHN_UNDEF, by name.
"""

from __future__ import annotations

import struct

_SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")  # name type flags addr offset size link info ...
_SYMBOL = struct.Struct("<IBBHQQ")  # name info other shndx value size
_SHT_SYMTAB = 2


def undefined_symbols(code: bytes) -> set[str]:
    """The names an object refers to but does not define."""
    if code[:4] != b"\x7fELF" or code[4] != 2 or code[5] != 1:
        raise ValueError("not an ELF64 little-endian object")
    (section_offset,) = struct.unpack_from("<Q", code, 0x28)
    entry_size, count = struct.unpack_from("<HH", code, 0x3A)
    sections = [
        _SECTION_HEADER.unpack_from(code, section_offset + i * entry_size) for i in range(count)
    ]
    names = set()
    for section in sections:
        if section[1] != _SHT_SYMTAB:
            continue
        strings = sections[section[6]][4]
        offset, size = section[4], section[5]
        for at in range(offset, offset + size, _SYMBOL.size):
            name, _info, _other, index, _value, _size = _SYMBOL.unpack_from(code, at)
            if index == 0 and name:
                start = strings + name
                names.add(code[start : code.index(b"\0", start)].decode())
    return names
