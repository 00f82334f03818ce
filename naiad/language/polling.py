"""`tl.atomic_poll`: wait until memory holds a value (Triton 3.9), written in the language itself.

    matched = tl.atomic_poll(flag, 1, sem="acquire", scope="gpu")

Each poll is a compare-and-swap of the expected value with itself, which reads the value with
the ordering asked for (`sem`, `scope`) and never changes memory. The program spins until the
value is there, so it must be written by another program running at the same time (on a GPU)
or before (the interpreter and the CPU run programs in order, some on one thread: a program
waiting for a later one waits for ever, as in Triton's interpreter). `timeout_ns` is not
supported yet (it needs a clock on every back end): it is refused at compile time.
"""

from __future__ import annotations

from .core import _tensor_member, jit
from .debug import static_assert
from .memory import atomic_cas


@_tensor_member
@jit
def atomic_poll(pointer, expected_value, sem=None, scope=None, timeout_ns=None):
    """Wait until `*pointer == expected_value` (a 16-, 32- or 64-bit integer); with `sem`
    "acquire" (the default) or "relaxed", at `scope` "gpu" (the default), "cta" or "sys".
    Returns True (int1), the value having been seen."""
    static_assert(
        timeout_ns is None, "tl.atomic_poll(timeout_ns=...) is not supported by Naiad yet"
    )
    # A poll only reads: release (or acq_rel) ordering would order no write of its own, and
    # Triton refuses it at compile time rather than quietly weakening it.
    static_assert(
        sem is None or sem == "acquire" or sem == "relaxed",
        "tl.atomic_poll takes sem='acquire' or sem='relaxed'",
    )
    seen = atomic_cas(pointer, expected_value, expected_value, sem=_sem(sem), scope=_scope(scope))
    while seen != expected_value:
        seen = atomic_cas(
            pointer, expected_value, expected_value, sem=_sem(sem), scope=_scope(scope)
        )
    return seen == expected_value


def _sem(sem):
    return "acquire" if sem is None else sem


def _scope(scope):
    return "gpu" if scope is None else scope
