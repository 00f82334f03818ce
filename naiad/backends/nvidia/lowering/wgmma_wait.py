"""`ttng.warp_group_dot_wait` and the waits of the dots' own lowering (wgmma.py):
`wgmma.wait_group N` waits until at most N groups of this warpgroup's `wgmma`s are in flight.

The wait is inline assembly that takes every register it guards in and gives it back out
(tied operands), so that LLVM schedules no reader of a dot's accumulator before it. Triton's
wait also takes the buffers of the dots in flight (its pipeliner's IR: the accumulator and
the operand buffers pass through, so that no copy overwrites a buffer before the dots reading
it are done): a buffer has no registers and passes through as it is, the wait's place in the
program order is what keeps the copies after it.
"""

from __future__ import annotations

from ....ir import RankedTensorType
from .context import Context, lowers
from .emitter import llvm_type


def wait_group(em, acc: list[str], pendings: int, acc_type: str) -> list[str]:
    """`wgmma.wait_group pendings` holding every accumulator register (of LLVM type
    `acc_type`), so that their readers come after it."""
    return wait_holding(em, [(acc_type, v) for v in acc], pendings)


def wait_holding(em, registers: list[tuple[str, str]], pendings: int) -> list[str]:
    """`wgmma.wait_group pendings` holding every register of `registers` ((LLVM type, value)
    pairs, of any types), so that their readers come after it; 16-bit floats (a register A
    operand's, asynchronous_dots.py) are held as their bits. The waited registers, in order."""
    text = f"wgmma.wait_group.sync.aligned {pendings};"
    if not registers:
        em.asm("void", text, "", [], hint="wait")
        return []
    held = [
        ("i16", em.op(f"bitcast {t} {v} to i16")) if t in ("half", "bfloat") else (t, v)
        for t, v in registers
    ]
    n = len(held)
    constraints = ",".join(
        [f"={register_constraint(t)}" for t, _ in held] + [str(i) for i in range(n)]
    )
    struct = "{ " + ", ".join(t for t, _ in held) + " }"
    result = em.asm(struct, text, constraints, held, hint="wait")
    waited = [em.op(f"extractvalue {struct} {result}, {i}") for i in range(n)]
    return [
        em.op(f"bitcast i16 {w} to {t}") if t in ("half", "bfloat") else w
        for (t, _), w in zip(registers, waited, strict=True)
    ]


def register_constraint(acc_type: str) -> str:
    """The inline-assembly constraint of an accumulator register (32-bit integer or float) or
    of a 16-bit word."""
    return {"i32": "r", "i16": "h"}.get(acc_type, "f")


@lowers("ttng.warp_group_dot_wait")
def _warp_group_dot_wait(ctx: Context, op) -> None:
    """One wait holds the registers of every tensor input; a buffer input (Triton's, which
    keeps the buffers of the dots in flight alive) passes through as it is."""
    tensors = [v for v in op.inputs if isinstance(v.type, RankedTensorType)]
    registers = [(llvm_type(v.type), r) for v in tensors for r in ctx[v]]
    waited = iter(wait_holding(ctx.em, registers, op.pendings.value))
    for value, output in zip(op.inputs, op.outputs, strict=True):
        if isinstance(value.type, RankedTensorType):
            ctx[output] = [next(waited) for _ in ctx[value]]
        else:
            ctx.values[output] = ctx.values[value]
