"""perf's jitdump file: the CPU code Naiad loads, its bytes and its source lines, for `perf`.

A kernel's code lives in an anonymous mapping (elf_linker.py), which `perf record` samples but
cannot name. The jitdump format (tools/perf/Documentation/jitdump-specification.txt in Linux)
is how a JIT tells perf what it made: the file `jit-<pid>.dump` starts with a header, then
one record per event; a `JIT_CODE_DEBUG_INFO` record (the code's address, then an entry per
line-table row: address, line, discriminator, file name) comes before the `JIT_CODE_LOAD`
record of the same code (pid, tid, the code's address and size, a running index, its name,
its bytes). perf learns of the file from an executable mapping of it in the process, so the
header's page stays mapped `PROT_EXEC` while the process lives.

    perf record -k mono python my_script.py   # (NAIAD_CPU_PERF_MAP=1): monotonic clock
    perf inject --jit -i perf.data -o perf.jit.data
    perf report -i perf.jit.data              # kernels by name; perf annotate: their lines

Times are CLOCK_MONOTONIC's (the header's flags say no architecture timestamp), hence `-k
mono`. An entry's address is its code's own: `perf inject` moves the table with the code into
the ELF file it writes for each function (checked with perf 6.1: the file's line table starts
at its `.text`).
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
import time

DIRECTORY = "/tmp"
_MAGIC = 0x4A695444  # "JiTD"
_VERSION = 1
_HEADER = struct.Struct("<IIIIIIQQ")  # magic, version, size, ELF machine, pad, pid, time, flags
_RECORD = struct.Struct("<IIQ")  # id, total size (header included), time
_LOAD = struct.Struct("<IIQQQQ")  # pid, tid, vma, code address, code size, code index
_DEBUG = struct.Struct("<QQ")  # code address, entries
_ENTRY = struct.Struct("<Qii")  # address, line, discriminator (then the file's name)
JIT_CODE_LOAD = 0
JIT_CODE_DEBUG_INFO = 2


def path(pid: int | None = None) -> str:
    """Where the process `pid` (this one by default) writes its jitdump."""
    return os.path.join(DIRECTORY, f"jit-{os.getpid() if pid is None else pid}.dump")


class _Dump:
    """This process's open jitdump: its file, the mapping perf looks for, the next index."""

    def __init__(self, machine: int):
        self.pid = os.getpid()
        self.fd = os.open(path(), os.O_CREAT | os.O_TRUNC | os.O_RDWR, 0o644)
        header = _HEADER.pack(_MAGIC, _VERSION, _HEADER.size, machine, 0, self.pid, _now(), 0)
        os.write(self.fd, header)
        self.mapping = mmap.mmap(
            self.fd, _HEADER.size, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC
        )
        self.index = 0

    def close(self) -> None:
        self.mapping.close()
        os.close(self.fd)


_lock = threading.Lock()
_dump: list[_Dump | None] = [None]  # this process's (a child of a fork opens its own)


def record(machine: int, name: str, address: int, code: bytes, lines) -> None:
    """Tell perf of `code`, loaded at `address` as `name`, and its `lines` ((address, line,
    file) each); `machine` is the code's ELF machine (the header's, on first use)."""
    with _lock:
        dump = _dump[0]
        if dump is None or dump.pid != os.getpid():
            dump = _dump[0] = _Dump(machine)
        if lines:
            os.write(dump.fd, _debug_record(address, lines))
        thread = threading.get_native_id()
        load = _LOAD.pack(dump.pid, thread, address, address, len(code), dump.index)
        payload = load + name.encode() + b"\0" + code
        os.write(dump.fd, _RECORD.pack(JIT_CODE_LOAD, _RECORD.size + len(payload), _now()))
        os.write(dump.fd, payload)
        dump.index += 1


def _debug_record(address: int, lines) -> bytes:
    """A JIT_CODE_DEBUG_INFO record, each entry's file named in full (perf 6.1 reads the
    format's '\\xff' for "the previous file" as a file of its own)."""
    parts = [_DEBUG.pack(address, len(lines))]
    for where, line, file in lines:
        parts.append(_ENTRY.pack(where, line, 0) + file.encode() + b"\0")
    payload = b"".join(parts)
    return _RECORD.pack(JIT_CODE_DEBUG_INFO, _RECORD.size + len(payload), _now()) + payload


def close() -> None:
    """Close this process's jitdump (the next record starts a new file): for tests."""
    with _lock:
        dump, _dump[0] = _dump[0], None
        if dump is not None and dump.pid == os.getpid():
            dump.close()


def _now() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)
