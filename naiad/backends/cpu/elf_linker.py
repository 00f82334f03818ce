"""Naiad's own linker of object code into the process, for the objects it knows entirely.

A cached kernel's first launch in a new process must link three objects (the runtime library,
the worker pool and the kernel) and nothing else. LLVM's ORC JIT does that well, but reaching it
means importing llvmlite's binding, about 30 ms, more than half of what such a launch may take.
This linker needs only the standard library: it reads the object (elf_object.py), lays out its
allocated sections in one private anonymous mapping, applies the relocations
(elf_relocations.py) and protects the pages as their sections ask:

    [ code sections | call stubs ]  [ read-only sections | GOT ]  [ writable sections ]
      read + execute                  read                          read + write

each part starting on a page. Symbols the object leaves undefined resolve to the caller's
imports, then to what the process exports (as LLVM's linker resolves them); a call to one goes
through a stub holding its 64-bit address, since code in a fresh mapping may lie beyond a
branch's reach of the C library; a load through the global offset table reads a slot of the
table made here. Unwind tables (`.eh_frame`) are not loaded: nothing unwinds through a kernel
(it throws nothing, and a fault in one ends the process).

Whatever it does not know — another relocation type, a TLS or COMMON symbol, a section of some
other kind, a field a value does not fit — raises `Unsupported`, and loader.py hands the object
to LLVM's linker: an object is linked right or by LLVM, never wrongly.
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import weakref
from collections.abc import Mapping

from ...errors import InternalError
from . import elf_object, elf_relocations
from .elf_object import Unsupported

# Sections left out of the image: unwind tables (see the module's docstring).
_SKIPPED_SECTIONS = (".eh_frame",)
# Constructors and destructors, which a loader must run: LLVM's linker takes such objects.
_REFUSED_SECTIONS = (".ctors", ".dtors", ".init_array", ".fini_array", ".preinit_array")
_LOADED_TYPES = (elf_object.SHT_PROGBITS, elf_object.SHT_NOBITS)
_GOT_SLOT = 8
# Symbols a static linker defines, which code refers to only through relocations this linker
# does not apply (the GOT's base, for the large code model): LLVM's linker takes such objects.
_LINKER_DEFINED = ("_GLOBAL_OFFSET_TABLE_",)
_MAP_FAILED = ctypes.c_void_p(-1).value  # mmap's (void *) -1


class LinkedImage:
    """Object code mapped into the process. The mapping is released when this is collected,
    but never at exit: threads a cancelled launch abandoned may still run its code while the
    interpreter shuts down (pool.py), as they may in code LLVM's linker loaded, which llvmlite
    does not free then either."""

    __slots__ = ("__weakref__", "sections", "symbols")

    def __init__(self, address: int, size: int):
        self.symbols: dict[str, int] = {}  # every global symbol the object defines -> address
        self.sections: dict[int, int] = {}  # each loaded section's address, by its index
        release = weakref.finalize(self, _libc().munmap, address, size)
        release.atexit = False  # (weakref.finalize calls none once the interpreter exits)

    def __getitem__(self, name: str) -> int:
        try:
            return self.symbols[name]
        except KeyError:
            raise InternalError(f"the object code defines no symbol `{name}`") from None


def link(code: bytes, imports: Mapping[str, int], name: str = "object") -> LinkedImage:
    """Map object `code`, built for this host, into the process and relocate it (`name`
    names it in errors).

    Raises:
        Unsupported: the object holds something this linker does not handle.
        InternalError: an undefined symbol is found neither in `imports` nor in the process.
    """
    obj = elf_object.parse(code)
    layout = _Layout(obj)
    base = _libc().mmap(
        None,
        layout.size,
        mmap.PROT_READ | mmap.PROT_WRITE,
        mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
        -1,
        0,
    )
    if base in (None, _MAP_FAILED):
        raise OSError(ctypes.get_errno(), "mmap failed for object code")
    linked = LinkedImage(base, layout.size)  # unmapped when dropped, on an error below too
    image = relocated(obj, layout, base, imports, name)
    ctypes.memmove(base, bytes(image.data), layout.size)
    layout.protect(base, obj.machine)
    linked.sections = image.sections
    linked.symbols = {
        symbol.name: address
        for symbol, address in zip(obj.symbols, image.addresses, strict=True)
        if symbol.defined and symbol.binding != elf_object.STB_LOCAL
    }
    return linked


class Image:
    """An object's memory image, relocated for the address `base` (elf_linker's tests read
    it for objects of other architectures too)."""

    __slots__ = ("addresses", "base", "data", "sections")

    def __init__(self, data: bytearray, base: int, addresses: list[int], sections: dict):
        self.data, self.base = data, base
        self.addresses = addresses  # what each symbol of the object's table stands for
        self.sections = sections  # each loaded section's address, by its index


def image_at(code: bytes, base: int, imports: Mapping[str, int]) -> Image:
    """The image `link` would map for object `code` at address `base` (a multiple of the page
    size), without mapping it; `imports` must resolve every undefined symbol."""
    obj = elf_object.parse(code)
    return relocated(obj, _Layout(obj), base, imports, "object")


def relocated(obj, layout: _Layout, base: int, imports: Mapping[str, int], name: str) -> Image:
    """Lay `obj` out from `base`, fill the stubs and table, and apply every relocation."""
    try:
        addresses = [_address(obj, symbol, layout, base, imports) for symbol in obj.symbols]
    except LookupError as exc:
        raise InternalError(f"linking `{name}` into the process failed: {exc}") from None
    data = bytearray(layout.size)
    for section in layout.placed:
        start = layout.offsets[section.index]
        data[start : start + section.size] = obj.contents(section)
    stubs = layout.fill_tables(data, addresses, obj.machine)
    for section in layout.placed:
        _relocate(obj, section, data, layout, base, addresses, stubs)
    sections = {index: base + offset for index, offset in layout.offsets.items()}
    return Image(data, base, addresses, sections)


class _Layout:
    """Where each part of the image lies, as offsets from the mapping's start."""

    def __init__(self, obj: elf_object.ElfObject):
        self.placed = [s for s in obj.sections if s.allocated and s.name not in _SKIPPED_SECTIONS]
        for section in self.placed:
            refused = section.name.startswith(_REFUSED_SECTIONS)
            if refused or section.type not in _LOADED_TYPES or section.flags & elf_object.SHF_TLS:
                raise Unsupported(f"section {section.name} of type {section.type:#x}")
        self.got, self.stubs = _tables(obj, self.placed)
        self.offsets: dict[int, int] = {}
        self.protections: list[tuple[int, int, int]] = []  # (start, end, prot) per part
        end = 0
        code = [s for s in self.placed if s.flags & elf_object.SHF_EXECINSTR]
        constant = [
            s
            for s in self.placed
            if not s.flags & (elf_object.SHF_EXECINSTR | elf_object.SHF_WRITE)
        ]
        writable = [s for s in self.placed if s.flags & elf_object.SHF_WRITE]
        end = self._part(code, end, mmap.PROT_READ | mmap.PROT_EXEC, tail=self.stubs)
        end = self._part(constant, end, mmap.PROT_READ, tail=self.got)
        self.size = self._part(writable, end, mmap.PROT_READ | mmap.PROT_WRITE, tail={}) or 1

    def _part(self, sections: list, start: int, prot: int, tail: dict) -> int:
        """Place `sections`, then `tail`'s 16-byte entries (stubs or table slots), from
        `start`; return the end of the part, rounded up to a page."""
        end = start
        for section in sections:
            end = _align(end, max(section.align, 1))
            self.offsets[section.index] = end
            end += section.size
        end = _align(end, 16)
        for index in tail:
            tail[index] = end
            end += elf_relocations.STUB_BYTES if prot & mmap.PROT_EXEC else _GOT_SLOT
        end = _align(end, mmap.PAGESIZE)
        if end > start:
            self.protections.append((start, end, prot))
        return end

    def fill_tables(self, image: bytearray, addresses: list[int], machine: int) -> dict:
        """Write the stubs' code and every stub's and table slot's target address; return the
        stubs' offsets by symbol index."""
        for index, offset in self.stubs.items():
            image[offset : offset + 8] = elf_relocations.STUB_CODE[machine]
            image[offset + 8 : offset + 16] = addresses[index].to_bytes(8, "little")
        for index, offset in self.got.items():
            image[offset : offset + _GOT_SLOT] = addresses[index].to_bytes(8, "little")
        return self.stubs

    def protect(self, base: int, machine: int) -> None:
        for start, end, prot in self.protections:
            if prot & mmap.PROT_EXEC and machine == elf_relocations.AARCH64:
                _clear_instruction_cache(base + start, base + end)
            if _libc().mprotect(base + start, end - start, prot) != 0:
                raise OSError(ctypes.get_errno(), "mprotect failed for loaded object code")


def _tables(obj: elf_object.ElfObject, placed: list) -> tuple[dict[int, int], dict[int, int]]:
    """The symbols that relocations of the `placed` sections need a table slot for, and those
    they call outside the object (a stub each), as dicts by symbol index to be filled with
    offsets."""
    got_types = elf_relocations.GOT_TYPES.get(obj.machine, set())
    branch_types = elf_relocations.BRANCH_TYPES.get(obj.machine, set())
    got: dict[int, int] = {}
    stubs: dict[int, int] = {}
    for section in placed:
        for relocation in obj.relocations.get(section.index, ()):
            if relocation.type in got_types:
                got[relocation.symbol] = 0
            elif relocation.type in branch_types and not obj.symbols[relocation.symbol].defined:
                stubs[relocation.symbol] = 0
    return got, stubs


def _address(obj, symbol, layout: _Layout, base: int, imports: Mapping[str, int]) -> int:
    """The address a symbol stands for in the mapped image or in the process."""
    if symbol.type == elf_object.STT_TLS:
        raise Unsupported(f"thread-local symbol {symbol.name}")
    if symbol.section == elf_object.SHN_UNDEF:
        return _resolve(symbol, imports) if symbol.name else 0
    if symbol.section == elf_object.SHN_ABS:
        return symbol.value
    if symbol.section >= elf_object.SHN_LORESERVE:
        raise Unsupported(f"symbol {symbol.name} in reserved section {symbol.section:#x}")
    offset = layout.offsets.get(symbol.section)
    if offset is None:  # in a section not loaded: only unwind tables name those
        return 0
    return base + offset + symbol.value


def _resolve(symbol, imports: Mapping[str, int]) -> int:
    if symbol.name in _LINKER_DEFINED:
        raise Unsupported(f"the linker-defined symbol {symbol.name}")
    address = imports.get(symbol.name)
    if address is None:
        address = _process_symbol(symbol.name)
    if address is None:
        if symbol.binding == elf_object.STB_WEAK:
            return 0
        raise LookupError(f"symbol `{symbol.name}` is found nowhere")
    return address


def _relocate(obj, section, image: bytearray, layout: _Layout, base: int, addresses, stubs):
    start = layout.offsets[section.index]
    for relocation in obj.relocations.get(section.index, ()):
        if relocation.offset >= section.size or section.type == elf_object.SHT_NOBITS:
            raise Unsupported(f"a relocation outside section {section.name}")
        symbol = relocation.symbol
        where = obj.symbols[symbol].section
        if where not in (elf_object.SHN_UNDEF, elf_object.SHN_ABS) and where not in layout.offsets:
            raise Unsupported(f"a relocation against an unloaded section, in {section.name}")
        got, stub = layout.got.get(symbol), stubs.get(symbol)
        fixup = elf_relocations.Fixup(
            relocation.type,
            S=addresses[symbol],
            A=relocation.addend,
            P=base + start + relocation.offset,
            G=0 if got is None else base + got,
            stub=0 if stub is None else base + stub,
        )
        elf_relocations.apply(obj.machine, image, start + relocation.offset, fixup)


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    size, address = ctypes.c_size_t, ctypes.c_void_p
    libc.mmap.argtypes = (address, size, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    libc.mmap.restype = address
    libc.munmap.argtypes = (address, size)
    libc.munmap.restype = ctypes.c_int
    libc.mprotect.argtypes = (address, size, ctypes.c_int)
    libc.mprotect.restype = ctypes.c_int
    return libc


def _process_symbol(name: str) -> int | None:
    """The address of `name` among the symbols the process exports, if any."""
    function = getattr(_libc(), name, None)
    return None if function is None else ctypes.cast(function, ctypes.c_void_p).value


def _clear_instruction_cache(begin: int, end: int) -> None:
    """Make instructions just written visible to instruction fetch: AArch64's instruction
    cache is not coherent with data writes. libgcc's `__clear_cache` cleans and invalidates
    the lines (every glibc system has libgcc_s; without it, LLVM's linker loads the code)."""
    clear = _clear_cache_function()
    if clear is None:
        raise Unsupported("no __clear_cache in this process")
    clear(begin, end)


@functools.cache
def _clear_cache_function():
    try:
        library = ctypes.CDLL("libgcc_s.so.1")
    except OSError:
        return None
    function = getattr(library, "__clear_cache", None)
    if function is not None:
        function.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
        function.restype = None
    return function
