"""The shared-memory addresses a thread's registers of a buffer live at.

A register's element offset in a swizzled buffer is linear over GF(2): the thread's part (from
its lane and warp) XOR a constant per register. The buffer may be one slot of a ring: its slot's
bytes (`dynamic`, a value that changes as a pipelined loop goes round) are added, which commutes
with the XOR because a slot starts at a multiple of a power of two above every offset.

Only the constant's bits that some thread can also set need the XOR. The other bits are added:
an addition of a constant folds into the instruction's immediate offset (`ld.shared [r+512]`).
So addresses are made once per distinct XOR part, `(thread ^ part) + dynamic`, and the XOR
depends on the thread alone, which LLVM hoists out of the loop. A tensor-core loop reading its
operands this way computes an address per group of registers instead of one per register.
"""

from __future__ import annotations

from ..layouts.linear_layout import LinearLayout
from .context import Context
from .indexing import emit_thread_coords


def thread_bits(layout: LinearLayout) -> int:
    """The output bits some thread's part of `layout` (its lane and warp bases) may set."""
    bits = 0
    for name in layout.in_dims:
        if name != "register":
            for (basis,) in layout.bases(name):
                bits |= basis
    return bits


class ThreadAddresses:
    """The addresses of one thread's registers: `layout` maps (register, lane, warp) to an
    element offset, elements of `nbytes`; `dynamic` (an i32 value or None) bytes are added."""

    def __init__(self, ctx: Context, layout: LinearLayout, nbytes: int, dynamic=None):
        self._em = ctx.em
        (offset,) = emit_thread_coords(ctx.em, layout)
        shift = nbytes.bit_length() - 1
        self._thread = ctx.em.op(f"shl i32 {offset}, {shift}") if shift else offset
        self._thread_bits = thread_bits(layout) << shift
        self._dynamic = dynamic
        self._parts: dict[int, str] = {}

    def address(self, constant: int) -> str:
        """The shared address of byte offset `thread ^ constant` (plus the slot's bytes)."""
        byte = self._part(constant & self._thread_bits)
        added = constant & ~self._thread_bits
        if added:
            byte = self._em.op(f"add i32 {byte}, {added}")
        return self._em.shared_address(byte)

    def split(self, constant: int) -> tuple[str, int]:
        """The same address as an operand of inline PTX: the shared address of the
        constant's XOR part and the bytes to write as the operand's immediate
        (`[$0+bytes]`). LLVM folds an added constant into a load's or store's immediate but
        never into an `asm` operand: made into an address of its own there, and hoisted out
        of a loop with it, each constant kept a register live across the loop."""
        address = self._em.shared_address(self._part(constant & self._thread_bits))
        return address, constant & ~self._thread_bits

    def _part(self, xor: int) -> str:
        """The byte offset `thread ^ xor` (plus the slot's bytes), made once per `xor`."""
        if xor not in self._parts:
            part = self._em.op(f"xor i32 {self._thread}, {xor}") if xor else self._thread
            if self._dynamic is not None:
                part = self._em.op(f"add i32 {part}, {self._dynamic}")
            self._parts[xor] = part
        return self._parts[xor]
