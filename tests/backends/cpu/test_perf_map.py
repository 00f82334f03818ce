"""NAIAD_CPU_PERF_MAP: the CPU code Naiad loads, described to perf (backends/cpu/perf_map.py,
jitdump.py), read back here as perf reads it: the perf map's `START SIZE name` lines, and the
jitdump's header, code-load records (the bytes in memory) and debug-info records (the
kernel's own lines). Nothing is written with the setting off. perf itself is not needed."""

import ctypes
import inspect
import os
import struct

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu import dwarf_lines, elf_object, jitdump, perf_map
from naiad.backends.cpu.loader import load_object

BLOCK = 128


@naiad.jit
def _axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + y, mask=mask)


_SOURCE, _FIRST = inspect.getsourcelines(_axpy.fn)
KERNEL_LINES = set(range(_FIRST, _FIRST + len(_SOURCE)))
LABEL = f"_axpy(*fp32, *fp32, *fp32, i32, fp32, BLOCK={BLOCK})"


@pytest.fixture(autouse=True)
def fresh_files():
    """This process's map and dump start empty and are removed after the test."""
    jitdump.close()
    for path in (perf_map.map_path(), jitdump.path()):
        if os.path.exists(path):
            os.remove(path)
    yield
    jitdump.close()
    for path in (perf_map.map_path(), jitdump.path()):
        if os.path.exists(path):
            os.remove(path)


def _inputs(n=1000):
    rng = np.random.default_rng(11)
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)


def _compiled(target="cpu", **settings):
    x, y = _inputs()
    with knobs.override(NAIAD_ALWAYS_COMPILE=1, **settings):
        return _axpy.warmup(x, y, x, x.size, 0.5, grid=(8,), BLOCK=BLOCK, target=target)


def _map_lines() -> dict[str, tuple[int, int]]:
    with open(perf_map.map_path()) as f:
        rows = [line.rstrip("\n").split(" ", 2) for line in f]
    return {name: (int(start, 16), int(size, 16)) for start, size, name in rows}


def _records() -> tuple[tuple, list[tuple[int, bytes]]]:
    """The jitdump's header fields and its records (id, payload)."""
    with open(jitdump.path(), "rb") as f:
        data = f.read()
    header = struct.unpack_from("<IIIIIIQQ", data)
    records, at = [], header[2]
    while at < len(data):
        kind, size, _ = struct.unpack_from("<IIQ", data, at)
        records.append((kind, data[at + 16 : at + size]))
        at += size
    return header, records


def _debug_entries(payload: bytes) -> tuple[int, list[tuple[int, int, str]]]:
    address, count = struct.unpack_from("<QQ", payload)
    entries, at = [], 16
    for _ in range(count):
        where, line, _ = struct.unpack_from("<Qii", payload, at)
        end = payload.index(b"\0", at + 16)
        entries.append((where, line, payload[at + 16 : end].decode()))
        at = end + 1
    return address, entries


@pytest.mark.parametrize("loader", ["naiad", "orc"])
def test_map_and_jitdump_describe_the_loaded_kernel(loader):
    compiled = _compiled()
    entry = compiled.metadata["entry"]
    label = perf_map.kernel_label(
        entry, compiled.metadata["signature"], compiled.metadata["constexprs"]
    )
    assert label == LABEL
    with knobs.override(NAIAD_CPU_PERF_MAP=1, NAIAD_CPU_LOADER=loader):
        loaded = load_object(compiled.binary, [entry], entry, label)
    address = loaded.address(entry)
    (symbol,) = [s for s in elf_object.parse(compiled.binary).symbols if s.name == entry]
    assert _map_lines()[LABEL] == (address, symbol.size)

    header, records = _records()
    assert header[:6] == (
        0x4A695444,
        1,
        40,
        62 if os.uname().machine == "x86_64" else 183,
        0,
        os.getpid(),
    )
    loads = {}
    for i, (kind, payload) in enumerate(records):
        if kind == jitdump.JIT_CODE_LOAD:
            pid, _, vma, code_address, size, index = struct.unpack_from("<IIQQQQ", payload)
            end = payload.index(b"\0", 40)
            loads[payload[40:end].decode()] = (i, code_address, size, index, payload[end + 1 :])
            assert pid == os.getpid() and vma == code_address
    i, code_address, size, _, code = loads[LABEL]
    assert (code_address, size) == (address, symbol.size)
    assert code == ctypes.string_at(address, size)  # the bytes that run
    # its line table comes just before it: every entry in its code, at the kernel's lines
    kind, payload = records[i - 1]
    assert kind == jitdump.JIT_CODE_DEBUG_INFO
    start, entries = _debug_entries(payload)
    assert start == address and entries
    assert all(address <= where < address + size for where, _, _ in entries)
    lines = {line for _, line, _ in entries} - {0}
    assert lines <= KERNEL_LINES and len(lines) >= 3
    assert {file for _, _, file in entries} == {os.path.abspath(__file__)}


def test_launch_names_the_specialization_and_computes():
    x, y = _inputs()
    out = np.full_like(x, np.nan)
    with knobs.override(NAIAD_CPU_PERF_MAP=1, NAIAD_BACKEND="cpu", NAIAD_CPU_TIERING="off"):
        _axpy.forget_compiled()
        _axpy[(8,)](x, y, out, x.size, 0.5, BLOCK=BLOCK)
    np.testing.assert_allclose(out, 0.5 * x.astype(np.float64) + y, rtol=1e-6, atol=1e-6)
    start, size = _map_lines()[LABEL]
    _, records = _records()
    loaded = [p for kind, p in records if kind == jitdump.JIT_CODE_LOAD]
    assert any(struct.unpack_from("<QQ", p, 16) == (start, size) for p in loaded)


def test_nothing_written_with_the_setting_off():
    compiled = _compiled()
    entry = compiled.metadata["entry"]
    with knobs.override(NAIAD_CPU_PERF_MAP=0):
        load_object(compiled.binary, [entry], entry)
    assert not os.path.exists(perf_map.map_path()) and not os.path.exists(jitdump.path())


def test_code_without_lines_is_still_named():
    compiled = _compiled(NAIAD_DISABLE_LINE_INFO=1)
    entry = compiled.metadata["entry"]
    with knobs.override(NAIAD_CPU_PERF_MAP=1):
        loaded = load_object(compiled.binary, [entry], entry, LABEL)
    assert _map_lines()[LABEL][0] == loaded.address(entry)
    kinds = [kind for kind, _ in _records()[1]]
    assert jitdump.JIT_CODE_LOAD in kinds and jitdump.JIT_CODE_DEBUG_INFO not in kinds


@pytest.mark.parametrize("target", ["cpu", "cpu:aarch64"])
def test_line_rows_of_the_object(target):
    """The object's line table as read for the jitdump (both architectures' relocations):
    rows in its code section, at the kernel's lines of this file."""
    obj = elf_object.parse(_compiled(target).binary)
    rows = dwarf_lines.line_rows(obj)
    (text,) = [s for s in obj.sections if s.name == ".text"]
    assert rows and {row.section for row in rows} == {text.index}
    assert all(0 <= row.offset < text.size for row in rows)
    assert {row.line for row in rows} - {0} <= KERNEL_LINES
    assert {row.file for row in rows} == {os.path.abspath(__file__)}
