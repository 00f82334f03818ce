"""`tl.atomic_poll`: wait until memory holds a value (Triton 3.9).

    matched = tl.atomic_poll(flag, 1, sem="acquire", scope="gpu", timeout_ns=1_000_000)

One op, `tt.atomic_poll`, as in Triton: each back end writes its own loop. The GPU reads the
value with a relaxed load at `scope` until it is there, then, for `sem="acquire"`, fences, so
what the writer wrote before it is visible; `timeout_ns` bounds the loop by the GPU's global
timer. The CPU reads it atomically and bounds the loop by the monotonic clock, the interpreter
by Python's. Programs run in order there (some on one thread), so a program waiting, without a
timeout, for a later program waits for ever, as in Triton's interpreter.
"""

from __future__ import annotations

from .core import _tensor_member, builtin


@_tensor_member
@builtin
def atomic_poll(pointer, expected_value, sem=None, scope=None, timeout_ns=None, _semantic=None):
    """Wait until `*pointer == expected_value` (a scalar 16-, 32- or 64-bit integer); with `sem`
    "acquire" (the default) or "relaxed", at `scope` "gpu" (the default), "cta" or "sys".
    Returns an int1: True once the value was seen, False if `timeout_ns` nanoseconds passed
    first (a timeout of zero still reads once); without a timeout it waits for ever."""
    return _semantic.atomic_poll(pointer, expected_value, sem, scope, timeout_ns)
