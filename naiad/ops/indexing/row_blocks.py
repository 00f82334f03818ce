"""What select.py's and triangle.py's kernels share: each program copies a block of up to 1024
elements of one row of a (rows, C) view; `blocks_and_grid` sizes the launch on the host and
`row_block` tells a program its row and columns."""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["blocks_and_grid", "row_block"]

MAX_BLOCK = 1024


def blocks_and_grid(rows: int, C: int) -> tuple[int, tuple[int]]:
    """(BLOCK, grid): a power of 2 covering C (at most MAX_BLOCK), and a program per block."""
    block = min(1 << max(C - 1, 0).bit_length(), MAX_BLOCK)
    return block, (rows * ((C + block - 1) // block),)


@jit
def row_block(C, BLOCK: tl.constexpr):
    """(row, columns, mask) of this program's block; 64-bit indices."""
    pid = tl.program_id(0).to(tl.int64)
    blocks = (C + BLOCK - 1) // BLOCK
    columns = (pid % blocks) * BLOCK + tl.arange(0, BLOCK)
    return pid // blocks, columns, columns < C
