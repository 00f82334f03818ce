"""The middle layer's `call @naiad_clock_ns_<n>() : () -> i64` (convert_polling.py): the
monotonic clock in nanoseconds, from the C library's `clock_gettime` (loader.py resolves it),
its `timespec` in a scratch slot of the program's, so a poll that reads the clock in a loop
does not grow the stack."""

from __future__ import annotations

from llvmlite import ir

from .function import I32, I64, PTR, FunctionLowering

_CLOCK_MONOTONIC = 1  # Linux, on x86-64 and AArch64
_TYPE = ir.FunctionType(I32, [I32, PTR])
_SYMBOL = "clock_gettime"


def clock_ns(fl: FunctionLowering, op) -> None:
    b = fl.builder
    timespec = fl.buffer([2], None, element=I64)
    function = fl.module.globals.get(_SYMBOL) or ir.Function(fl.module, _TYPE, _SYMBOL)
    b.call(function, [ir.Constant(I32, _CLOCK_MONOTONIC), timespec.pointer])
    seconds = b.load(timespec.pointer, typ=I64)
    rest = b.gep(timespec.pointer, [ir.Constant(I64, 1)], inbounds=True, source_etype=I64)
    nanoseconds = b.load(rest, typ=I64)
    fl.bind(op.results[0], b.add(b.mul(seconds, ir.Constant(I64, 1_000_000_000)), nanoseconds))
