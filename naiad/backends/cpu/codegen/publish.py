"""Streamed stores published where another thread may look next, not after every store.

x86's non-temporal stores (streaming.py) are weakly ordered: another core may see a later
store, or an atomic, before them. Within a launch another thread can read what a program
stored only through an atomic of that program (a lock or a counter another program waits on),
and after it only once the entry point's range of programs has ended (the pool then reports
the chunk done, and the launch returns). So a kernel whose stores stream fences before each
atomic and once at the end of its range, not after each store. The entry point, made after the
program, knows whether any store streams and fences itself (`fence`); an atomic, lowered
before the stores that follow it, calls one internal function of the module, `naiad.publish`
(`publish`), whose body gets an `sfence` where the kernel streams and stays empty otherwise
(LLVM inlines it, or drops it). AArch64 orders `stnp` like any store and needs nothing.

A fence after every streamed store cost tutorial 05's layer norm (4096 programs of one row,
each a streamed store) 1.93 -> 1.46 ms on one Zen 4 core: each program's fence waited for
its row's stores to drain to memory before the next row's loads could run.
"""

from __future__ import annotations

import platform

from llvmlite import ir

NAME = "naiad.publish"
_SFENCE = "llvm.x86.sse.sfence"


def publish(b: ir.IRBuilder) -> None:
    """A call of the module's `naiad.publish` (made, empty, by the first call): for an atomic,
    lowered before the kernel's later stores are known."""
    function = b.module.globals.get(NAME)
    if function is None:
        function = ir.Function(b.module, ir.FunctionType(ir.VoidType(), []), NAME)
        function.linkage = "internal"
        function.attributes.add("alwaysinline")
        ir.IRBuilder(function.append_basic_block("entry")).ret_void()
    b.call(function, [])


def fence(b: ir.IRBuilder) -> None:
    """An `sfence` where the module is for x86 (the entry point's, once its stores are known)."""
    if not _x86(b.module):
        return
    function = b.module.globals.get(_SFENCE)
    if function is None:
        function = ir.Function(b.module, ir.FunctionType(ir.VoidType(), []), _SFENCE)
    b.call(function, [])


def finish(module: ir.Module, streamed: bool) -> None:
    """Give `naiad.publish` its fence where the kernel has streamed stores (`streamed`)."""
    function = module.globals.get(NAME)
    if function is not None and streamed:
        b = ir.IRBuilder()
        b.position_before(function.entry_basic_block.instructions[-1])
        fence(b)


def _x86(module: ir.Module) -> bool:
    return (module.triple or platform.machine()).startswith(("x86_64", "i386", "i686"))
