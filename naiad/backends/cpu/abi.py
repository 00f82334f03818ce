"""The native ABI between a compiled CPU kernel and the runtime that launches it.

Every kernel compiles to one entry point that runs a range of the programs of its grid:

    void <kernel>(i64* params, i64 pid_begin, i64 pid_end, i8* scratch, i8* status)

`params` is the parameter block: three slots holding the grid size (x, y, z), then one 8-byte slot
per kernel argument, in order. Pointers are addresses; integers are sign- or zero-extended to 64
bits (by their language type's signedness); an fp32 is its bits in the low half (the high half is
zero); an fp64 is its bits. Constexpr arguments have no slot: they are folded into the code.
A kernel compiled in debug mode takes two more slots per pointer argument after its arguments,
in the order of the pointers: the *extent* `[low, high)`, the bytes around the pointer that the
array's underlying storage (a NumPy array's base buffer, a torch tensor's storage) allows, as
signed offsets from the pointer (`low <= 0 <= high`; a null pointer's extent is empty). Every
access is checked against it (middle/linalg/bounds_checks.py). The last slot, after all of
those, is the launch's store mode: the bytes a program's stores that the kernel leaves to the
launch must write for them to go past the caches (non-temporal; a store in a loop counted by
the loop's trips; codegen/streaming.py, runtime/cpu_streaming.py): 1 streams them always, 0
never.

The entry point runs the linear program ids `pid_begin <= p < pid_end` in increasing order, where
p = x + gx * (y + gy * z) for the program (x, y, z) of a grid (gx, gy, gz). The runner calls it once
for a small grid (0, n) on the calling thread, or once per chunk of consecutive ids on the worker
threads, chunks being taken in increasing order: a program may therefore wait for one of a lower
id (a spin lock handed down the grid), never for a higher one.

`scratch` is the calling worker's arena: at least the kernel's `scratch_bytes` (from its
metadata), `SCRATCH_ALIGN`-byte aligned, reused by every program that worker runs. Per-program
buffers live there (or on the stack), never in a malloc per program.

`status` is a `STATUS_BYTES` record shared by the whole launch, whose first 64 bytes (the code
among them) are zeroed before it:

    offset  0  i32 code      0 while every program succeeds; else a FAULT_* value
    offset  4  i32 site      index into the kernel's site table (metadata)
    offset  8  i64 pid       the linear id of the failing program
    offset 16  i64 info[10]  values the site's message shows ({0} .. {9}): for a bounds check,
                             the failing lanes' count, the storage's size in elements and the
                             first eight offending offsets

A program that fails (a device_assert, or a bounds check in debug mode) claims the record with a
compare-and-swap of `code` from 0, writes the other fields only if it won (so the first failure is
the one reported), and returns; the entry point then returns without running its later programs,
and may return early whenever it sees `code != 0`. The runner takes no new chunk once `code != 0`
and, after the launch, raises the site's error at the user's file:line.
"""

from __future__ import annotations

import linecache
import struct
from typing import TYPE_CHECKING, NamedTuple

from ...errors import (
    CompilationError,
    InternalError,
    KernelAssertionError,
    KernelIndexError,
    NaiadError,
    SourceLocation,
    enclosing_definition,
)

if TYPE_CHECKING:
    from llvmlite import ir

# -- the parameter block ------------------------------------------------------------------------
GRID_SLOTS = 3  # params[0:3] = grid size (x, y, z); the kernel's arguments start at params[3]
SLOT_BYTES = 8

# -- the per-worker scratch arena ---------------------------------------------------------------
SCRATCH_ALIGN = 64  # a cache line, and enough for every vector type the back end emits

# -- the status record ----------------------------------------------------------------------------
STATUS_BYTES = 96
STATUS_CODE_OFFSET = 0
STATUS_SITE_OFFSET = 4
STATUS_PID_OFFSET = 8
STATUS_INFO_OFFSET = 16
STATUS_INFO_SLOTS = 10
_STATUS_FORMAT = "<iiq10q"  # little-endian: both supported targets (x86-64, AArch64) are

FAULT_NONE = 0
FAULT_ASSERT = 1  # tl.device_assert (or `assert` in a kernel) failed
FAULT_BOUNDS = 2  # debug mode: an access outside its argument's extent

_FAULT_ERRORS: dict[int, type[CompilationError]] = {
    FAULT_ASSERT: KernelAssertionError,
    FAULT_BOUNDS: KernelIndexError,
}


def entry_function_type() -> ir.FunctionType:
    """The entry point's LLVM type, for code generators building it with `llvmlite.ir`
    (imported here: the launcher reads this module's constants, and a launch of a cached
    kernel builds no IR)."""
    from llvmlite import ir

    ptr = ir.PointerType()
    i64 = ir.IntType(64)
    return ir.FunctionType(ir.VoidType(), [ptr, i64, i64, ptr, ptr])


class Site(NamedTuple):
    """Where a failing check sits in the user's source, and what it says.

    `message` is a `str.format` template over the record's `info` values (`{0}` .. `{9}`), and
    for a bounds check `{offsets}`, the list of the offending offsets it holds after the count
    and the storage's size (middle/linalg/bounds_checks.py); a literal brace is doubled.
    `column` (1-based; 0: unknown) places the caret, `kernel` names the kernel."""

    file: str
    line: int
    message: str
    column: int = 0
    kernel: str = ""


class Fault(NamedTuple):
    """A decoded status record."""

    code: int
    site: int
    pid: int
    info: tuple[int, ...]


def decode_status(raw: bytes) -> Fault:
    """The fields of a status record (`STATUS_BYTES` raw bytes)."""
    code, site, pid, *info = struct.unpack_from(_STATUS_FORMAT, raw)
    return Fault(code, site, pid, tuple(info))


def program_coords(pid: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    """The (x, y, z) program of linear id `pid` in `grid`."""
    gx, gy, _ = grid
    return pid % gx, (pid // gx) % gy, pid // (gx * gy)


def fault_error(fault: Fault, sites, grid: tuple[int, int, int]) -> NaiadError:
    """The exception a failed launch raises: located at the site's file:line, naming the program.

    `sites` maps a site id to a `Site` (or a (file, line, message) triple): a list or a dict. A
    record the site table cannot explain is Naiad's own bug: an InternalError."""
    error_class = _FAULT_ERRORS.get(fault.code)
    try:
        site = Site(*sites[fault.site])
    except (IndexError, KeyError, TypeError):
        return InternalError(
            f"a kernel failed with code {fault.code} at site {fault.site}, which its site table "
            f"does not hold"
        )
    if error_class is None:
        return InternalError(f"a kernel set the unknown status code {fault.code} ({site.file})")
    try:
        message = site.message.format(*fault.info, offsets=_offsets(fault.info))
    except (IndexError, KeyError, ValueError):
        message = site.message
    line_text = linecache.getline(site.file, site.line)
    location = SourceLocation(site.file, site.line, site.column, line_text,
                              *enclosing_definition(site.file, site.line))  # fmt: skip
    where = f"program {program_coords(fault.pid, grid)}"
    if site.kernel:
        where += f" of `{site.kernel}`"
    return error_class(f"{message} in {where}", location)


def _offsets(info: tuple[int, ...]) -> str:
    """The offending offsets a bounds report holds (count, storage size, then the first
    offsets), listed as the interpreter lists them."""
    count, shown = info[0], info[2:]
    listed = ", ".join(str(x) for x in shown[: max(count, 0)])
    return listed + (", ..." if count > len(shown) else "")
