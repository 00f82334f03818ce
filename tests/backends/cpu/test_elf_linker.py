"""Naiad's own linker (elf_linker.py): objects LLVM emits with every relocation kind the back end
meets, linked and run on the host against Python's values; linked for AArch64 at a chosen address
and every patched field decoded here, independently of the linker, and checked against its
relocation's formula; and what the linker does not handle going to LLVM's linker."""

import ctypes
import math
import struct
import sys

import numpy as np
import pytest

from naiad import knobs
from naiad.backends.cpu import (
    elf_linker,
    elf_object,
    elf_relocations,
    llvm_tools,
    loader,
    pool_ir,
    runtime_library,
)
from naiad.backends.cpu.loader import RESOLVED_NAMES
from naiad.backends.cpu.target import cpu_target, host_target
from naiad.errors import InternalError

# A function table in relocated data, a writable counter, an imported global read through the
# GOT, calls and a tail call to the C library, constants from the constant pool (scalar and a
# 128-bit vector) and a jump table.
MODULE = """
@table = constant [4 x ptr] [ptr @f0, ptr @f1, ptr @f2, ptr @f3]
@counter = global i64 0
@counter_address = global ptr @counter
@hidden = internal global i32 0
@naiad_test_external = external global i64
declare double @fmod(double, double)
declare float @fmodf(float, float)

define internal i64 @f0(i64 %x) noinline {
  %r = add i64 %x, 11
  ret i64 %r
}
define internal i64 @f1(i64 %x) noinline {
  %r = mul i64 %x, 3
  ret i64 %r
}
define internal i64 @f2(i64 %x) noinline {
  %r = xor i64 %x, 21845
  ret i64 %r
}
define internal i64 @f3(i64 %x) noinline {
  %r = sub i64 %x, 7
  ret i64 %r
}

define i64 @dispatch(i64 %i, i64 %x) {
  %k = and i64 %i, 3
  %p = getelementptr [4 x ptr], ptr @table, i64 0, i64 %k
  %f = load ptr, ptr %p
  %r = call i64 %f(i64 %x)
  %c = load i64, ptr @counter
  %c1 = add i64 %c, 1
  store i64 %c1, ptr @counter
  %e = load i64, ptr @naiad_test_external
  %s = add i64 %r, %e
  ret i64 %s
}

define double @poly(double %x) {
  %a = fmul double %x, 1.2345678901234567
  %b = fadd double %a, -0.7071067811865476
  %m = call double @fmod(double %b, double 0.3141592653589793)
  %n = fmul double %m, 2.718281828459045
  ret double %n
}

define float @tail(float %x, float %y) {
  %s = fmul float %y, 1.234375
  %r = tail call float @fmodf(float %x, float %s)
  ret float %r
}

define ptr @where() {
  ret ptr @hidden
}

define i32 @bump(i32 %x) {
  %v = load i32, ptr @hidden
  %n = add i32 %v, %x
  store i32 %n, ptr @hidden
  ret i32 %n
}

define void @scale4(ptr %out, ptr %in) {
  %v = load <4 x float>, ptr %in, align 4
  %y = fmul <4 x float> %v, <float 1.5, float -2.25, float 3.125, float 0.625>
  store <4 x float> %y, ptr %out, align 4
  ret void
}

define i32 @pick(i32 %k, i32 %x) {
entry:
  switch i32 %k, label %other [
    i32 0, label %c0
    i32 1, label %c1
    i32 2, label %c2
    i32 3, label %c3
    i32 4, label %c4
    i32 5, label %c5
  ]
c0:
  %r0 = add i32 %x, 101
  ret i32 %r0
c1:
  %r1 = mul i32 %x, 7
  ret i32 %r1
c2:
  %r2 = xor i32 %x, 99
  ret i32 %r2
c3:
  %r3 = sub i32 %x, 13
  ret i32 %r3
c4:
  %r4 = shl i32 %x, 3
  ret i32 %r4
c5:
  %r5 = lshr i32 %x, 2
  ret i32 %r5
other:
  ret i32 -1
}
"""

ELF_HOST = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF objects")

_PICK = (
    lambda x: x + 101,
    lambda x: x * 7,
    lambda x: x ^ 99,
    lambda x: x - 13,
    lambda x: x << 3,
    lambda x: x >> 2,
)


def compiled(target) -> bytes:
    return llvm_tools.compile_ir(MODULE, target.machine, "linker_test")


@ELF_HOST
def test_linked_code_runs_as_python_computes():
    external = ctypes.c_int64(int(np.random.default_rng(0).integers(-(10**9), 10**9)))
    imports = {"naiad_test_external": ctypes.addressof(external)}
    image = elf_linker.link(compiled(host_target()), imports, "linker_test")
    rng = np.random.default_rng(1)
    i64 = ctypes.c_int64
    dispatch = ctypes.CFUNCTYPE(i64, i64, i64)(image["dispatch"])
    functions = (lambda x: x + 11, lambda x: x * 3, lambda x: x ^ 21845, lambda x: x - 7)
    calls = rng.integers(-(10**6), 10**6, (40, 2))
    for i, x in calls:
        assert dispatch(int(i), int(x)) == functions[int(i) & 3](int(x)) + external.value
    assert i64.from_address(image["counter"]).value == len(calls)

    poly = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(image["poly"])
    for x in rng.uniform(-50, 50, 20):
        expected = math.fmod(x * 1.2345678901234567 - 0.7071067811865476, 0.3141592653589793)
        assert poly(x) == expected * 2.718281828459045

    tail = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float, ctypes.c_float)(image["tail"])
    for x, y in rng.uniform(0.5, 40, (20, 2)).astype(np.float32):
        assert tail(x, y) == np.fmod(x, y * np.float32(1.234375))
    bump = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)(image["bump"])
    steps = rng.integers(-1000, 1000, 10)
    assert [bump(int(step)) for step in steps] == np.cumsum(steps).tolist()
    hidden = ctypes.CFUNCTYPE(ctypes.c_void_p)(image["where"])()
    assert ctypes.c_int32.from_address(hidden).value == steps.sum()
    assert ctypes.c_void_p.from_address(image["counter_address"]).value == image["counter"]

    source = rng.standard_normal(4).astype(np.float32)
    out = np.full(4, np.nan, np.float32)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(image["scale4"])(
        out.ctypes.data, source.ctypes.data
    )
    np.testing.assert_array_equal(out, source * np.float32([1.5, -2.25, 3.125, 0.625]))

    pick = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)(image["pick"])
    for k, x in zip(rng.integers(-2, 8, 40), rng.integers(0, 10**6, 40), strict=True):
        assert pick(int(k), int(x)) == (_PICK[k](int(x)) if 0 <= k < 6 else -1)


# Far from the image, so that calls must go through stubs.
_FAR_IMPORTS = {
    "fmod": 0x0000_7FFF_1234_5670,
    "fmodf": 0x0000_7FFF_1234_9A10,
    "naiad_test_external": 0x0000_5555_0000_0F48,
}
_BASE = 0x0000_7F3A_5B60_0000  # a multiple of 64 KiB, the largest AArch64 page


def _sign(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) else value


def _word(data: bytearray, address: int, base: int, size: int) -> int:
    return int.from_bytes(data[address - base : address - base + size], "little")


def _branch_reaches(data, base, target: int, wanted: int, machine: int) -> bool:
    """Whether a branch to `target` reaches `wanted`: directly, or through a stub whose code is
    the stub's and whose literal is `wanted`."""
    if target == wanted:
        return True
    stub = data[target - base : target - base + elf_relocations.STUB_BYTES]
    return (
        stub[:8] == elf_relocations.STUB_CODE[machine]
        and _word(data, target + 8, base, 8) == wanted
    )


def _aarch64_field(data, base, place: int, kind: int) -> int:
    """What the instruction or word at `place` encodes, decoded from the instruction set's
    layouts: an address for adrp/adr and branches, a byte offset for lo12 immediates."""
    word = _word(data, place, base, 4)
    if kind in (275, 276, 311):  # adrp: the page, from 21 bits split in two fields
        immediate = _sign(((word >> 29) & 3) | (((word >> 5) & 0x7FFFF) << 2), 21)
        assert word & 0x9F000000 == 0x90000000, f"not an adrp: {word:#x}"
        return (place & ~0xFFF) + (immediate << 12)
    if kind in (282, 283):  # b / bl
        assert word & 0x7C000000 == 0x14000000, f"not a b/bl: {word:#x}"
        return place + 4 * _sign(word & 0x3FFFFFF, 26)
    immediate = (word >> 10) & 0xFFF
    if kind == 277:  # add (immediate), unshifted
        assert word & 0x7FC00000 == 0x11000000, f"not an add: {word:#x}"
        return immediate
    # a load or store (unsigned immediate): the offset is scaled by the access size, which
    # bits 30-31 give, and a 128-bit SIMD access (V set, size 0, opc's high bit) by 16
    assert word & 0x3B000000 == 0x39000000, f"not a load/store: {word:#x}"
    size, simd, opc = word >> 30, (word >> 26) & 1, (word >> 22) & 3
    scale = 4 if simd and size == 0 and opc & 2 else size
    return immediate << scale


def checked_aarch64_relocations(code: bytes, imports: dict) -> set[int]:
    """Link `code` for AArch64 at _BASE and check every relocated field; its types."""
    obj = elf_object.parse(code)
    image = elf_linker.image_at(code, _BASE, imports)
    data, sections = image.data, image.sections
    seen, got_pages, got_offsets = set(), {}, {}
    for index, relocations in obj.relocations.items():
        if index not in sections:
            continue  # unwind tables: not loaded
        for r in relocations:
            place = sections[index] + r.offset
            S, A = image.addresses[r.symbol], r.addend
            seen.add(r.type)
            if r.type == 257:  # ABS64
                assert _word(data, place, _BASE, 8) == S + A
            elif r.type == 261:  # PREL32
                assert _sign(_word(data, place, _BASE, 4), 32) == S + A - place
            elif r.type in (275, 276):
                assert _aarch64_field(data, _BASE, place, r.type) == (S + A) & ~0xFFF
            elif r.type in (277, 278, 284, 285, 286, 299):
                assert _aarch64_field(data, _BASE, place, r.type) == (S + A) & 0xFFF
            elif r.type in (282, 283):
                reached = _aarch64_field(data, _BASE, place, r.type)
                assert _branch_reaches(data, _BASE, reached, S + A, elf_relocations.AARCH64)
            elif r.type == 311:
                got_pages.setdefault(r.symbol, set()).add(_aarch64_field(data, _BASE, place, 311))
            elif r.type == 312:  # ldr x, [x, #lo12]: the slot's low bits
                got_offsets.setdefault(r.symbol, set()).add(_aarch64_field(data, _BASE, place, 312))
            else:
                pytest.fail(f"relocation type {r.type} is not checked here")
    assert got_pages.keys() == got_offsets.keys()
    for symbol, pages in got_pages.items():
        (page,), (low,) = pages, got_offsets[symbol]
        assert _word(data, page + low, _BASE, 8) == image.addresses[symbol]
    return seen


def test_aarch64_relocations_match_their_formulas():
    seen = checked_aarch64_relocations(compiled(cpu_target("cpu:aarch64")), _FAR_IMPORTS)
    # calls and tail calls to the C library, data and constant-pool addresses, the GOT
    assert {257, 275, 277, 282, 283, 285, 286, 299, 311, 312} <= seen


def test_aarch64_pool_and_runtime_library_link():
    """The back end's own objects, as an AArch64 host links them from its cache."""
    target = cpu_target("cpu:aarch64")
    imports = {name: 0x0000_7FFF_0000_0000 + 64 * i for i, name in enumerate(RESOLVED_NAMES)}
    pool = llvm_tools.compile_ir(pool_ir.pool_module("aarch64"), target.machine, optimized=False)
    assert checked_aarch64_relocations(pool, imports) & {282, 283}  # calls into the C library
    library = llvm_tools.compile_ir(runtime_library.library_ir(), target.machine)
    checked_aarch64_relocations(library, imports)


@pytest.mark.skipif(host_target().arch != "x86_64", reason="x86-64 code is built for the host")
def test_x86_64_relocations_match_their_formulas():
    code = compiled(host_target())
    obj = elf_object.parse(code)
    image = elf_linker.image_at(code, _BASE, _FAR_IMPORTS)
    data, sections = image.data, image.sections
    seen = set()
    for index, relocations in obj.relocations.items():
        if index not in sections:
            continue
        for r in relocations:
            place = sections[index] + r.offset
            S, A = image.addresses[r.symbol], r.addend
            seen.add(r.type)
            field = _sign(_word(data, place, _BASE, 4), 32)
            if r.type == 1:
                assert _word(data, place, _BASE, 8) == S + A
            elif r.type == 2:
                assert field == S + A - place
            elif r.type == 4:  # a call: the displacement counts from the next instruction
                reached = field + place - A
                assert _branch_reaches(data, _BASE, reached, S, elf_relocations.X86_64)
            elif r.type in (9, 41, 42):
                slot = field + place - A
                assert _word(data, slot, _BASE, 8) == S
            else:
                pytest.fail(f"relocation type {r.type} is not checked here")
    assert {1, 2, 4} <= seen and seen & {9, 41, 42}


# A global constructor (in .ctors or .init_array), which Naiad's linker leaves to LLVM's.
WITH_CONSTRUCTOR = """
%ctor = type { i32, ptr, ptr }
@llvm.global_ctors = appending global [1 x %ctor] [%ctor { i32 65535, ptr @init, ptr null }]
declare i32 @sched_yield()
define internal void @init() {
  %r = call i32 @sched_yield()
  ret void
}
define i64 @answer(i64 %x) {
  %r = mul i64 %x, 6
  ret i64 %r
}
"""


@ELF_HOST
def test_what_the_linker_does_not_handle_goes_to_llvm():
    code = llvm_tools.compile_ir(WITH_CONSTRUCTOR, host_target().machine, "ctor")
    with pytest.raises(elf_object.Unsupported, match="ctors"):
        elf_linker.link(code, {})
    loaded = loader.load_object(code, ["answer"], "ctor")
    x = int(np.random.default_rng(2).integers(1, 10**9))
    assert ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(loaded.address("answer"))(x) == 6 * x
    with (
        knobs.override(NAIAD_CPU_LOADER="naiad"),
        pytest.raises(InternalError, match="cannot link `ctor`"),
    ):
        loader.load_object(code, ["answer"], "ctor")


# The GOT's base, which a static linker defines.
GOT_BASE = """
@_GLOBAL_OFFSET_TABLE_ = external global i8
define ptr @got() {
  ret ptr @_GLOBAL_OFFSET_TABLE_
}
"""


@ELF_HOST
def test_linker_defined_symbols_go_to_llvm():
    code = llvm_tools.compile_ir(GOT_BASE, host_target().machine, "got")
    with pytest.raises(elf_object.Unsupported, match="_GLOBAL_OFFSET_TABLE_"):
        elf_linker.link(code, {})
    assert loader.load_object(code, ["got"], "got").address("got")


TAIL_CALL = """
declare float @fmodf(float, float)
define float @tail(float %x, float %y) {
  %r = tail call float @fmodf(float %x, float %y)
  ret float %r
}
"""


@ELF_HOST
@pytest.mark.parametrize("choice", ["naiad", "orc"])
def test_either_linker_loads_an_object(choice):
    code = llvm_tools.compile_ir(TAIL_CALL, host_target().machine, "tail")
    with knobs.override(NAIAD_CPU_LOADER=choice):
        loaded = loader.load_object(code, ["tail"], "tail")
    tail = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float, ctypes.c_float)(loaded.address("tail"))
    for x, y in np.random.default_rng(3).uniform(1, 30, (10, 2)).astype(np.float32):
        assert tail(x, y) == np.fmod(x, y)


def test_stub_code_decodes_as_a_jump_to_its_literal():
    """The stub's bytes are the instructions its comment names."""
    x86 = elf_relocations.STUB_CODE[elf_relocations.X86_64]
    assert x86[:2] == b"\xff\x25" and struct.unpack_from("<i", x86, 2)[0] == 8 - 6
    ldr, br = struct.unpack("<II", elf_relocations.STUB_CODE[elf_relocations.AARCH64])
    assert ldr >> 24 == 0x58 and (ldr >> 5) & 0x7FFFF == 2 and ldr & 0x1F == 16  # ldr x16, #8
    assert br == 0xD61F0000 | (16 << 5)  # br x16
