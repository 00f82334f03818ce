"""A K loop's accumulator kept in AMX tile registers across the loop.

`acc = tl.dot(a, b, acc)` in an `scf.for` updates the loop's buffer of `acc` in place
(lower_matmul.accumulates_in_place); on AMX tiles (lower_matmul_amx.py) each dot then loads
C's tiles from that buffer and stores them back, once per step of the loop: for tutorial 03's
32 × 32 × 32 blocks four `tileloadd` and four `tilestored` of C around four `tdpbf16ps`.
Where C's tiles, with one row of A's tiles and one column of B's, fit the eight tile
registers (C of 32 × 32 at most: 4 + 2 + 2), and the loop's body holds no other dot that
would want them, the tiles are loaded once before the loop, carried as phis of LLVM's
`x86_amx` through it (the dot takes them as its accumulators and gives back its results:
lower_matmul_amx.accumulate) and stored once at its exit, into the buffer that stands for the
loop's result. A larger C (64 × 64: sixteen tiles) does not fit: its steps are gathered into
panels instead (amx_panels.py).

The values are those of the buffered loop: the same instructions on the same tiles in the
same order; only where the accumulators wait between steps changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ....ir import element_type, f32, i32
from . import lower_matmul_amx
from .amx_panels import PanelSteps
from .lower_matmul import MATMULS, accumulates_in_place
from .lower_matmul_amx import TILE, TILE_COLUMNS, TILE_ROWS
from .views import View

TILE_REGISTERS = 8


@dataclass
class CarriedTiles:
    """The tiles of a loop's dot accumulator: `buffer` (the loop's, which holds C before the
    loop and after it), the dot's (m, n, k) `shape`, the tiles loaded before the loop
    (`entry`), their phis at the loop's head, and the dot's results in the body (`updated`)."""

    dot: object
    buffer: View
    shape: tuple[int, int, int]
    entry: list = field(default_factory=list)
    phis: list = field(default_factory=list)
    updated: list | None = None

    @property
    def rows(self) -> list[int]:
        return [TILE_ROWS * r for r in range(self.shape[0] // TILE_ROWS)]

    @property
    def columns(self) -> list[int]:
        return [TILE_COLUMNS * s for s in range(self.shape[1] // TILE_COLUMNS)]

    def load(self, fl) -> None:
        """Before the loop (its buffer holds the initial C): the tiles of C."""
        self.entry = lower_matmul_amx.load_tiles(fl, self.buffer, self.rows, self.columns)

    def enter(self, fl, preheader) -> None:
        """At the loop's head: a phi per tile, its first value from `preheader`; the dot of
        the body finds them through `fl.carried_tiles`."""
        self.phis = [[fl.builder.phi(TILE) for _ in row] for row in self.entry]
        for row, phi_row in zip(self.entry, self.phis):
            for value, phi in zip(row, phi_row):
                phi.add_incoming(value, preheader)
        fl.carried_tiles[self.dot] = self

    def next_iteration(self, fl) -> None:
        """At the end of the body: the dot's results become the next iteration's tiles."""
        for phi_row, row in zip(self.phis, self.updated):
            for phi, value in zip(phi_row, row):
                phi.add_incoming(value, fl.builder.block)

    def leave(self, fl) -> None:
        """At the loop's exit (reached from its head only): the tiles into the buffer."""
        del fl.carried_tiles[self.dot]
        lower_matmul_amx.store_tiles(fl, self.buffer, self.rows, self.columns, self.phis)

    def multiply(self, fl, a: View, b: View, c: View) -> None:
        """The body's dot: A @ B added to the tiles (C, the loop's buffer, is not touched)."""
        self.updated = lower_matmul_amx.accumulate(fl, a, b, self.phis, self.shape)


def carried_tiles(fl, op, buffers) -> CarriedTiles | PanelSteps | None:
    """How the dot of `scf.for` `op` keeps its accumulator across the loop: in tile registers
    where C fits them (see the module), else its steps gathered into panels (amx_panels.py);
    None where the loop has no such dot. `buffers` are the loop's buffers of its carried
    values."""
    block = op.body
    yielded = block.last_op.operands
    for argument, buffer, value in zip(op.region_iter_args, buffers, yielded):
        dot = value.defining_op
        if buffer is None or dot is None or dot.name != "linalg.matmul":
            continue
        if not accumulates_in_place(dot, argument, block) or not _on_tiles(fl, dot):
            return None
        # another dot of the body, nested or not, would want the tile registers too
        if sum(inner.name in MATMULS for inner in op.walk()) != 1:
            return None
        m, n = dot.outputs[0].type.shape
        shape = (m, n, dot.inputs[0].type.shape[-1])
        down, across = m // TILE_ROWS, n // TILE_COLUMNS
        if down * across + down + across <= TILE_REGISTERS:
            return CarriedTiles(dot, buffer, shape)
        return PanelSteps(dot, shape)
    return None


def _on_tiles(fl, dot) -> bool:
    """Whether `dot` runs on AMX tiles with an f32 or i32 C (its own buffer's elements)."""
    a_type, b_type = (v.type for v in dot.inputs)
    out_type = dot.outputs[0].type
    if element_type(out_type) not in (f32, i32):
        return False
    shape = (*out_type.shape, a_type.shape[-1])
    return lower_matmul_amx.applies(a_type, b_type, out_type, shape, fl.module.triple)
