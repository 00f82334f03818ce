"""A K loop's dot on AMX tiles whose C does not fit the tile registers: the operands of
`STEPS` consecutive steps gathered into panels, one product over all of them.

`acc = tl.dot(a, b, acc)` with a 64 × 64 C (tutorial 03's blocks) has sixteen tiles of C, twice
the eight tile registers (amx_carried.py keeps a C of four tiles in them instead), so each dot
loads C's tiles from the loop's buffer and stores them back: with BLOCK_K 32, one `tileloadd`
and one `tilestored` of C per `tdpbf16ps`. Here a step copies its A (m × k) into its slot of
an A panel (m × STEPS·k: one row copy per row of A) and packs its B straight into its slot of
a packed B panel (STEPS·k/2 × n dwords, where the dot's own packing would have put it); every
STEPS-th step, and the loop's last, multiplies the panels over the k of the steps gathered,
C's tiles loaded and stored once for all of them (lower_matmul_amx.multiply_panels). The
loop's buffer of C is read by the dot alone (lower_matmul.accumulates_in_place), so its
products may wait for the panel's turn; a loop that runs no step multiplies nothing.

The values are the per-step dots' except for the order of additions within a tile's
accumulation, which AMX leaves to the hardware anyway (within the f32 accumulation tolerance;
int8 into i32 exactly).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from . import lower_matmul_amx
from .loops import I64
from .row_copies import copy_rows
from .views import View, add, copy_elements

# Steps a panel gathers: C's tile traffic per product a quarter of the per-step dots'; the
# panels take 2 × 16 KiB of scratch at 64 × 64 × 32.
STEPS = 4


@dataclass
class PanelSteps:
    """The panels of a loop's dot: `dot`, its (m, n, k) `shape`, and the A and B panels
    (allocated before the loop by `load`)."""

    dot: object
    shape: tuple[int, int, int]
    a_panel: View | None = None
    b_panel: View | None = None

    def load(self, fl) -> None:
        """Before the loop: the panels, in the program's scratch."""
        m, n, k = self.shape
        tile_dot = lower_matmul_amx.tile_dot(self.dot)
        self.a_panel = fl.buffer([m, STEPS * k], None, tile_dot.element)
        self.b_panel = fl.buffer([STEPS * k // tile_dot.group, n], None, ir.IntType(32))

    def enter(self, fl, preheader) -> None:
        fl.carried_tiles[self.dot] = self

    def next_iteration(self, fl) -> None:
        """Nothing is carried: the panels are the program's scratch."""

    def leave(self, fl) -> None:
        del fl.carried_tiles[self.dot]

    def multiply(self, fl, a: View, b: View, c: View) -> None:
        """One step's dot: A and B into the step's slot; the product of the panels into C
        where the slot is the last or the loop ends after this step."""
        m, n, k = self.shape
        bld = fl.builder
        loop = fl.loops[-1]
        slot, last = _slot(bld, loop)
        tile_dot = lower_matmul_amx.tile_dot(self.dot)
        column = add(bld, self.a_panel.offset, bld.mul(slot, ir.Constant(I64, k)))
        a_slot = View(self.a_panel.pointer, a.element, column, [m, k], [STEPS * k, 1])
        if not copy_rows(bld, a, a_slot):
            copy_elements(bld, a, a_slot)
        rows = k // tile_dot.group
        first = add(bld, self.b_panel.offset, bld.mul(slot, ir.Constant(I64, rows * n)))
        b_slot = View(self.b_panel.pointer, self.b_panel.element, first, [rows, n], [n, 1])
        tile_dot.pack(fl, b, n, k, into=b_slot)
        full = bld.icmp_unsigned("==", slot, ir.Constant(I64, STEPS - 1))
        with bld.if_then(bld.or_(full, last)):
            gathered = bld.mul(bld.add(slot, ir.Constant(I64, 1)), ir.Constant(I64, k))
            panels = (self.a_panel, self.b_panel, c)
            lower_matmul_amx.multiply_panels(fl, tile_dot, panels, (m, n, gathered))


def _slot(bld: ir.IRBuilder, loop):
    """The step's slot in the panels ((iv - lower) / step mod STEPS, an i64) and whether the
    loop ends after this step (the comparison its head makes)."""
    iv_type = loop.iv.type
    count = bld.sdiv(bld.sub(loop.iv, loop.lower), loop.step)
    slot = bld.urem(count, ir.Constant(iv_type, STEPS))
    if iv_type.width < 64:
        slot = bld.zext(slot, I64)
    following = bld.add(loop.iv, loop.step)
    if loop.unsigned:
        last = bld.icmp_unsigned(">=", following, loop.upper)
    else:
        last = bld.icmp_signed(">=", following, loop.upper)
    return slot, last
