"""What each Python thread that launches CPU kernels owns (its lane), and the grids of at most
one program that run on it by one direct call of the entry point.

A lane is a status record (abi.py), a scratch arena and the pool state of the grids the thread
runs alone (pool_caller_ir.py): launches from several Python threads never share memory. A grid
of at most one program has nothing to hand out, and no time slice could end before its program
does, so the pool runs it by one ctypes call of the entry point (`run_direct`; through the
pool's native functions it cost 7 us more on a loaded 2-core machine: bench/cpu/
launch_overhead.py, "inline launch" against "bare ctypes call", which is what small ops launch
many of). A prepared launch, which runs one kernel's small grids again and again, makes that
call once (`direct_launch`) with its arguments ready.
"""

from __future__ import annotations

import ctypes
import struct
import threading

import numpy as np

from . import abi, pool_ir

# The entry point's C type (abi.py): params, first program, end, scratch, status.
ENTRY_TYPE = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p
)
_FIRST = ctypes.c_int64(0)  # the first program, as `direct_launch`'s call passes it
_ENDS_KEPT = 1024  # program counts kept as ctypes objects (program_count)
_ENTRY_CALLS_KEPT = 4096  # entry points' ctypes functions kept, by address (_entry_call)


class Arena:
    """A block of memory aligned to `abi.SCRATCH_ALIGN`, grown on demand (never shrunk)."""

    __slots__ = ("_buffer", "address", "pointer", "size")

    def __init__(self, size: int = 0):
        self.size = -1
        self.reserve(size)

    def reserve(self, size: int) -> bool:
        """Make the arena hold at least `size` bytes; True if it moved."""
        if size <= self.size:
            return False
        size = max(size, 4096)
        self._buffer = np.empty(size + abi.SCRATCH_ALIGN, np.uint8)
        start = self._buffer.ctypes.data
        self.address = start + (-start % abi.SCRATCH_ALIGN)
        self.pointer = ctypes.c_void_p(self.address)  # as `direct_launch` passes it
        self.size = size
        return True


class Lane:
    """What one launching Python thread owns: its status record, its scratch arena, and the
    pool state of the grids it runs alone (no worker invited: pool_caller_ir.py)."""

    def __init__(self):
        self.status = Arena(abi.STATUS_BYTES)
        self.code = ctypes.c_int32.from_address(self.status.address + abi.STATUS_CODE_OFFSET)
        self.scratch = Arena()
        self.state = Arena(pool_ir.STATE_BYTES)
        ctypes.memset(self.state.address, 0, pool_ir.STATE_BYTES)


# `local.lane`: this thread's lane, made by its first launch (`lane`); a cancelled launch whose
# programs did not end leaves its lane to them, and the thread takes a new one (pool._cancel).
local = threading.local()
_entry_calls: dict = {}  # entry address -> its ctypes function (_entry_call)
_ends: dict = {}  # program count -> it as a ctypes int64 (program_count)


def lane() -> Lane:
    """This thread's lane."""
    try:
        return local.lane
    except AttributeError:
        made = local.lane = Lane()
        return made


def run_direct(entry: int, params: int, n_programs: int, lane: Lane) -> int:
    """Run programs [0, n_programs) (at most one) by a direct call of the entry point, and
    return the status code. The record's first 64 bytes are zero before a launch (abi.py): a
    failed or cancelled launch left them set, which a pool launch clears itself."""
    if lane.code.value:
        ctypes.memset(lane.status.address, 0, 64)
    call = _entry_calls.get(entry)
    if call is None:
        call = _entry_call(entry)
    call(params, 0, n_programs, lane.scratch.address, lane.status.address)
    return lane.code.value


def direct_launch(entry_address: int, scratch_bytes: int, sites):
    """`launch(params, end)`, which runs programs [0, end) of a grid by one call of the entry
    point on this thread's lane, as `pool.run(entry_address, params, n, scratch_bytes, sites)`
    runs a grid of one program, for a caller that launches the kernel many times (a prepared
    launch): a grid of one program, or one whose work the launcher knows is small
    (runtime/cpu_inline_grid.py), a few microseconds, which needs no time slices for a Ctrl-C
    to stop it. `params` is the parameter block, a ctypes array that stays alive during the
    call, and `end` the grid's program count as `program_count` keeps it: the call passes
    ctypes objects made before. A ctypes function with argument types converts each Python
    int it is passed, and `pool.run` finds the entry's function, the block's address and the
    lane's arena at each call: about 0.65 us of a small launch's host time on the development
    CPU (2.45 -> 1.8); a small grid of several programs also went through the pool's native
    caller in slices (8.2 -> 5.3 us for 16 programs of 128 elements)."""
    call = ENTRY_TYPE(entry_address)
    call.argtypes = None  # every argument is a ctypes object of the entry's own type

    def launch(params, end) -> None:
        try:
            owner = local.lane
        except AttributeError:
            owner = lane()
        scratch = owner.scratch
        if scratch.size < scratch_bytes:
            scratch.reserve(scratch_bytes)
        if owner.code.value:  # run_direct says why
            ctypes.memset(owner.status.address, 0, 64)
        call(params, _FIRST, end, scratch.pointer, owner.status.pointer)
        if owner.code.value:
            raise_fault(owner, ctypes.addressof(params), sites)

    return launch


def program_count(n: int):
    """`n` as `direct_launch`'s `end` (a ctypes int64, made once per count)."""
    end = _ends.get(n)
    if end is None:
        if len(_ends) >= _ENDS_KEPT:
            _ends.clear()
        end = _ends[n] = ctypes.c_int64(n)
    return end


def raise_fault(lane: Lane, params_address: int, sites):
    """Raise the error of the failed launch whose status `lane` holds, located at its site."""
    raw = ctypes.string_at(lane.status.address, abi.STATUS_BYTES)
    grid = struct.unpack("<3q", ctypes.string_at(params_address, 3 * abi.SLOT_BYTES))
    raise abi.fault_error(abi.decode_status(raw), sites, grid)


def _entry_call(entry: int):
    """The ctypes function of the entry point at `entry`, made once per address. Every entry
    point has abi.py's signature, so one kept for code since unloaded and replaced at the
    same address still calls what is there now."""
    if len(_entry_calls) >= _ENTRY_CALLS_KEPT:
        _entry_calls.clear()
    call = _entry_calls[entry] = ENTRY_TYPE(entry)
    return call
