"""The relocations LLVM emits for Naiad's code on x86-64 and AArch64, as arithmetic on bytes.

Code is compiled position-independent with the small code model (llvm_tools.py), so what LLVM
leaves to the linker is few kinds of fix-ups. Each is a formula over

    S  the address of the symbol the relocation names,
    A  its addend,
    P  the address of the place patched,
    G  the address of the symbol's slot in the global offset table (elf_linker.py makes one),

written into the place as the relocation type says: a whole 32- or 64-bit word, or an
instruction's immediate field. The formulas and field layouts are those of the psABIs: the
System V AMD64 ABI (section 4.4) and Arm's ELF for the Arm 64-bit Architecture (AAELF64,
section 5.7). A call goes to S directly or, beyond the instruction's reach, to the stub
elf_linker.py makes for S; a value that does not fit its field raises `Unsupported`, so that
the object goes to LLVM's linker rather than run with a wrong address.
"""

from __future__ import annotations

import struct

from .elf_object import Unsupported

X86_64 = 62  # e_machine
AARCH64 = 183

# x86-64 relocation types
R_X86_64_NONE = 0
R_X86_64_64 = 1
R_X86_64_PC32 = 2
R_X86_64_PLT32 = 4
R_X86_64_GOTPCREL = 9
R_X86_64_32 = 10
R_X86_64_32S = 11
R_X86_64_PC64 = 24
R_X86_64_GOTPCRELX = 41
R_X86_64_REX_GOTPCRELX = 42

# AArch64 relocation types
R_AARCH64_NONE = 0
R_AARCH64_ABS64 = 257
R_AARCH64_ABS32 = 258
R_AARCH64_PREL64 = 260
R_AARCH64_PREL32 = 261
R_AARCH64_ADR_PREL_LO21 = 274
R_AARCH64_ADR_PREL_PG_HI21 = 275
R_AARCH64_ADR_PREL_PG_HI21_NC = 276
R_AARCH64_ADD_ABS_LO12_NC = 277
R_AARCH64_LDST8_ABS_LO12_NC = 278
R_AARCH64_TSTBR14 = 279
R_AARCH64_CONDBR19 = 280
R_AARCH64_JUMP26 = 282
R_AARCH64_CALL26 = 283
R_AARCH64_LDST16_ABS_LO12_NC = 284
R_AARCH64_LDST32_ABS_LO12_NC = 285
R_AARCH64_LDST64_ABS_LO12_NC = 286
R_AARCH64_LDST128_ABS_LO12_NC = 299
R_AARCH64_ADR_GOT_PAGE = 311
R_AARCH64_LD64_GOT_LO12_NC = 312

# How each type uses the table and stubs: relocations through the global offset table need a
# slot for their symbol; branches need a stub for a symbol that may lie out of their reach.
GOT_TYPES = {
    X86_64: {R_X86_64_GOTPCREL, R_X86_64_GOTPCRELX, R_X86_64_REX_GOTPCRELX},
    AARCH64: {R_AARCH64_ADR_GOT_PAGE, R_AARCH64_LD64_GOT_LO12_NC},
}
BRANCH_TYPES = {
    X86_64: {R_X86_64_PLT32},
    AARCH64: {R_AARCH64_JUMP26, R_AARCH64_CALL26},
}
# The code of a stub jumping to the 64-bit address in its last 8 bytes (16 bytes in all):
# x86-64 `jmp *2(%rip)` over a `ud2` that is never reached; AArch64 `ldr x16, #8; br x16`.
STUB_CODE = {
    X86_64: b"\xff\x25\x02\x00\x00\x00\x0f\x0b",
    AARCH64: struct.pack("<II", 0x58000050, 0xD61F0200),
}
STUB_BYTES = 16


class Fixup:
    """One relocation with its addresses resolved (a plain class: see elf_object.py)."""

    __slots__ = ("A", "G", "P", "S", "stub", "type")

    def __init__(self, type: int, S: int, A: int, P: int, G: int, stub: int):
        self.type, self.S, self.A, self.P = type, S, A, P
        self.G = G  # the symbol's table slot (0 when it has none)
        self.stub = stub  # the symbol's stub (0 when it has none)


def apply(machine: int, image: bytearray, offset: int, fixup: Fixup) -> None:
    """Patch `image[offset:]`, the place at address `fixup.P`, as `fixup.type` says."""
    if machine == X86_64:
        _x86_64(image, offset, fixup)
    elif machine == AARCH64:
        _aarch64(image, offset, fixup)
    else:
        raise Unsupported(f"ELF machine {machine}")


def _x86_64(image: bytearray, offset: int, f: Fixup) -> None:
    kind = f.type
    if kind == R_X86_64_NONE:
        return
    if kind == R_X86_64_64:
        _word(image, offset, 64, f.S + f.A, signed=None)
    elif kind == R_X86_64_PC64:
        _word(image, offset, 64, f.S + f.A - f.P, signed=None)
    elif kind == R_X86_64_PC32:
        _word(image, offset, 32, f.S + f.A - f.P, signed=True)
    elif kind == R_X86_64_PLT32:
        value = f.S + f.A - f.P
        if not _fits(value, 32, True) and f.stub:
            value = f.stub + f.A - f.P
        _word(image, offset, 32, value, signed=True)
    elif kind in GOT_TYPES[X86_64]:
        _word(image, offset, 32, f.G + f.A - f.P, signed=True)
    elif kind == R_X86_64_32:
        _word(image, offset, 32, f.S + f.A, signed=False)
    elif kind == R_X86_64_32S:
        _word(image, offset, 32, f.S + f.A, signed=True)
    else:
        raise Unsupported(f"x86-64 relocation type {kind}")


def _aarch64(image: bytearray, offset: int, f: Fixup) -> None:
    kind = f.type
    if kind == R_AARCH64_NONE:
        return
    if kind == R_AARCH64_ABS64:
        _word(image, offset, 64, f.S + f.A, signed=None)
    elif kind == R_AARCH64_ABS32:
        _word(image, offset, 32, f.S + f.A, signed=None)
    elif kind == R_AARCH64_PREL64:
        _word(image, offset, 64, f.S + f.A - f.P, signed=None)
    elif kind == R_AARCH64_PREL32:
        _word(image, offset, 32, f.S + f.A - f.P, signed=None)
    elif kind in (R_AARCH64_ADR_PREL_PG_HI21, R_AARCH64_ADR_PREL_PG_HI21_NC):
        checked = kind == R_AARCH64_ADR_PREL_PG_HI21
        _adr(image, offset, (_page(f.S + f.A) - _page(f.P)) >> 12, checked)
    elif kind == R_AARCH64_ADR_GOT_PAGE:
        _adr(image, offset, (_page(f.G) - _page(f.P)) >> 12, True)
    elif kind == R_AARCH64_ADR_PREL_LO21:
        _adr(image, offset, f.S + f.A - f.P, True)
    elif kind in _LOW12_SHIFT:
        _imm12(image, offset, ((f.S + f.A) & 0xFFF) >> _LOW12_SHIFT[kind])
    elif kind == R_AARCH64_LD64_GOT_LO12_NC:
        _imm12(image, offset, (f.G & 0xFFF) >> 3)
    elif kind in (R_AARCH64_JUMP26, R_AARCH64_CALL26):
        value = f.S + f.A - f.P
        if not _fits(value, 28, True) and f.stub:
            value = f.stub + f.A - f.P
        _branch(image, offset, value, bits=26, shift=0)
    elif kind == R_AARCH64_CONDBR19:
        _branch(image, offset, f.S + f.A - f.P, bits=19, shift=5)
    elif kind == R_AARCH64_TSTBR14:
        _branch(image, offset, f.S + f.A - f.P, bits=14, shift=5)
    else:
        raise Unsupported(f"AArch64 relocation type {kind}")


# The low 12 bits of an address as the immediate of an `add` or of a load or store, which the
# instruction scales by its access size (the *_ABS_LO12_NC relocations).
_LOW12_SHIFT = {
    R_AARCH64_ADD_ABS_LO12_NC: 0,
    R_AARCH64_LDST8_ABS_LO12_NC: 0,
    R_AARCH64_LDST16_ABS_LO12_NC: 1,
    R_AARCH64_LDST32_ABS_LO12_NC: 2,
    R_AARCH64_LDST64_ABS_LO12_NC: 3,
    R_AARCH64_LDST128_ABS_LO12_NC: 4,
}


def _page(address: int) -> int:
    return address & ~0xFFF


def _fits(value: int, bits: int, signed: bool) -> bool:
    if signed:
        return -(1 << (bits - 1)) <= value < 1 << (bits - 1)
    return 0 <= value < 1 << bits


def _word(image: bytearray, offset: int, bits: int, value: int, signed: bool | None) -> None:
    """Write `value` as a little-endian word; `signed` None accepts either reading (a 64-bit
    word, or a 32-bit one that AAELF64 checks as signed or unsigned)."""
    fits = (
        _fits(value, bits, True) or _fits(value, bits, False)
        if signed is None
        else _fits(value, bits, signed)
    )
    if not fits:
        raise Unsupported(f"a {bits}-bit relocation does not reach {value:#x}")
    image[offset : offset + bits // 8] = (value & ((1 << bits) - 1)).to_bytes(bits // 8, "little")


def _patch(image: bytearray, offset: int, mask: int, field: int) -> None:
    """Replace the bits `mask` of the 32-bit instruction at `offset` with `field`."""
    (word,) = struct.unpack_from("<I", image, offset)
    struct.pack_into("<I", image, offset, (word & ~mask) | (field & mask))


def _adr(image: bytearray, offset: int, value: int, checked: bool) -> None:
    """An `adr`/`adrp` immediate: 21 signed bits, the low 2 in bits 29-30, the rest in 5-23."""
    if checked and not _fits(value, 21, True):
        raise Unsupported(f"an adr/adrp immediate does not hold {value:#x}")
    field = ((value & 0x3) << 29) | (((value >> 2) & 0x7FFFF) << 5)
    _patch(image, offset, (0x3 << 29) | (0x7FFFF << 5), field)


def _imm12(image: bytearray, offset: int, value: int) -> None:
    """An `add` or load/store unsigned 12-bit immediate, in bits 10-21."""
    _patch(image, offset, 0xFFF << 10, value << 10)


def _branch(image: bytearray, offset: int, value: int, bits: int, shift: int) -> None:
    """A branch's word offset: `bits` signed bits starting at bit `shift`."""
    if value & 0x3 or not _fits(value >> 2, bits, True):
        raise Unsupported(f"a branch does not reach {value:#x}")
    mask = ((1 << bits) - 1) << shift
    _patch(image, offset, mask, (value >> 2) << shift)
