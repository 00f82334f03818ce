"""`tt.atomic_poll`: a loop of atomic reads until the value is there or the time is up.

    %start = func.call @naiad_clock_ns_0() : () -> i64           (with a timeout only)
    %first = <read *ptr atomically> == %expected
    %seen = scf.while (%m = %first) : (i1) -> i1 {
      %again = !%m && (func.call @naiad_clock_ns_0() - %start) <u %timeout
      scf.condition(%again) %m
    } do { ^bb0(%m: i1): scf.yield <read *ptr atomically> == %expected }

The read is a compare-and-swap of the expected value with itself (emit_atomics.py): it never
changes memory, and it is ordered as the back end's atomics are (acquire-release on the CPU),
so a program polling for a write another worker thread makes sees it. The first read comes
before the clock is compared, so a timeout of zero still reads once. `naiad_clock_ns` is a
runtime function of no arguments: the monotonic clock in nanoseconds (the CPU back end calls
`clock_gettime`, codegen/lower_clock.py).
"""

from __future__ import annotations

from ...dialects import func, tt
from ...ir import i1, i64
from . import emit, emit_atomics
from .conversion import FunctionConversion, converts

CLOCK_FUNCTION = "naiad_clock_ns"


@converts(tt.AtomicPollOp)
def _atomic_poll(c: FunctionConversion, op) -> None:
    pointer, expected = c.pointer(op.ptr), c.value(op.expected)

    def matches():
        old = emit_atomics.atomic(c, pointer, "cas", [expected, expected], None, expected.type)
        return emit.compare(c, "eq", old, expected)

    timeout = None if op.timeout is None else c.value(op.timeout)
    start = None if timeout is None else _clock(c)
    true = emit.scalar_constant(c, 1, i1)

    def again(values):
        waiting = emit.op(c, "arith.xori", [values[0], true], i1)
        if timeout is None:
            return waiting
        elapsed = emit.op(c, "arith.subi", [_clock(c), start], i64)
        in_time = emit.compare(c, "ult", elapsed, timeout)
        return emit.op(c, "arith.andi", [waiting, in_time], i1)

    seen = emit.while_loop(c, [matches()], again, lambda values: [matches()])
    c.bind(op.result, seen[0])


def _clock(c: FunctionConversion):
    symbol = c.runtime.declare(CLOCK_FUNCTION, [], [i64])
    return c.emit(func.CallOp(symbol, [], [i64])).results[0]
