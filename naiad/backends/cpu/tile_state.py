"""Whether this process may execute AMX instructions: the OS must grant it the tile state.

AMX's eight tile registers (8 KiB of state) are saved and restored by the kernel only for a
process that asked for them: on Linux a process that executes an AMX instruction without having
called `arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)` first dies of SIGILL, even on a CPU
that has AMX. The grant is the process's (its threads share it, children inherit it) and cannot
be taken back, so it is asked once, through the C library's `syscall` (ctypes: no C compiler),
and only where a kernel may use the tiles (target.py asks when NAIAD_CPU_AMX is on and the CPU
reports AMX). The request fails — and the AMX path stays off — on a CPU without AMX, on a
kernel older than 5.16, where a thread's signal stack is too small for the larger state, and
on any OS other than Linux on x86-64.
"""

from __future__ import annotations

import ctypes
import functools
import platform
import sys

_SYS_ARCH_PRCTL = 158  # x86-64 Linux's system call number
_ARCH_GET_XCOMP_PERM = 0x1022
_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18


@functools.cache
def tiles_granted() -> bool:
    """Ask the OS for the tile state, once per process; whether the process holds it now."""
    if sys.platform != "linux" or platform.machine() != "x86_64":
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    request = ctypes.c_long(_ARCH_REQ_XCOMP_PERM)
    if libc.syscall(ctypes.c_long(_SYS_ARCH_PRCTL), request, ctypes.c_long(_XFEATURE_XTILEDATA)):
        return False
    granted = ctypes.c_uint64(0)
    query = ctypes.c_long(_ARCH_GET_XCOMP_PERM)
    if libc.syscall(ctypes.c_long(_SYS_ARCH_PRCTL), query, ctypes.byref(granted)):
        return False
    return bool(granted.value >> _XFEATURE_XTILEDATA & 1)
