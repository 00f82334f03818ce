"""Values that cross a control-flow edge (control.py): what a loop carries, an `if` merges.

A tensor or a scalar crosses as its registers, a token (`!ttg.async.token`) as none. A buffer
view (`!ttg.memdesc`, a SharedView) crosses as its one register, the byte offset of the slot
it views: Triton's pipeliner carries the slot views of its rings through loops (the slot read
next), and on every edge such a value views the same ring at the same origin, so the static
parts come from one of them (the loop's initial value, the `if`'s first arm) and the others
are checked against it.
"""

from __future__ import annotations

from dataclasses import replace

from ....dialects.ttg.types import MemDescType
from ....passes.diagnostics import unsupported
from .context import Context
from .emitter import llvm_type
from .shared_memory import SharedView


def carried(ctx: Context, value) -> list[str]:
    """The registers `value` crosses an edge as."""
    held = ctx.values[value]
    if isinstance(held, SharedView):
        return [held.dynamic or "0"]
    return held


def phi_type(value) -> str:
    """The LLVM type of each register of `value` on an edge."""
    return "i32" if _is_view(value) else llvm_type(value.type)


def views_of(ctx: Context, values) -> list:
    """The SharedView of each buffer view in `values`; None for the other values."""
    return [ctx.values[v] if _is_view(v) else None for v in values]


def bind(ctx: Context, value, registers: list[str], view=None) -> None:
    """`value` is `registers`; a buffer view is `view` at the slot offset `registers[0]`."""
    if view is None:
        ctx[value] = registers
    else:
        ctx.values[value] = replace(view, dynamic=registers[0])


def check_same_buffers(op, first: list, other: list) -> None:
    """Each buffer view of `other` views what the one of `first` at its index views, but for
    the slot: the views one value takes on different edges."""
    for a, b in zip(first, other, strict=True):
        if a is not None and replace(a, dynamic=None) != replace(b, dynamic=None):
            unsupported(
                op, f"`{op.name}` carries views of different buffers in one value: {a}, {b}"
            )


def _is_view(value) -> bool:
    return isinstance(value.type, MemDescType)
