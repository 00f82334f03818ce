"""Loading a tile of rows (queries, keys, values or their gradients' rows) for the attention
kernels: masked where the tile may pass the sequence's end, unmasked where the caller knows it
does not, so that the copies of the blocks every query sees whole are plain 16-byte vectors;
or through a tensor descriptor of the tensor's rows, which a Hopper GPU copies by its
tensor-copy engine (no address per thread, no registers held for the copy).
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["load_block", "load_rows"]


@jit
def load_rows(base, rows, stride, dims, n, E: tl.constexpr, BLOCK_E: tl.constexpr,
              MASKED: tl.constexpr):  # fmt: skip
    """The [rows, BLOCK_E] tile at base + rows * stride + dims: rows past n and dims past E
    read as 0; with MASKED False every row is known to be below n."""
    where = base + rows[:, None] * stride + dims[None, :]
    if MASKED:
        return tl.load(where, mask=(rows[:, None] < n) & (dims[None, :] < E), other=0)
    if E == BLOCK_E:
        return tl.load(where)
    return tl.load(where, mask=dims[None, :] < E, other=0)


@jit
def load_block(src, first_row, start, stride, n, E: tl.constexpr, BLOCK_ROWS: tl.constexpr,
               BLOCK_E: tl.constexpr, MASKED: tl.constexpr, DESCRIPTOR: tl.constexpr):  # fmt: skip
    """Rows start .. start + BLOCK_ROWS of one sequence, [BLOCK_ROWS, BLOCK_E]: where
    DESCRIPTOR, through `src`, a descriptor of the tensor's rows end to end (the sequence's
    first at `first_row`; the block lies inside the sequence); else `src` points at the
    sequence's first row and rows are `stride` apart (`load_rows`)."""
    if DESCRIPTOR:
        return src.load([(first_row + start).to(tl.int32), 0])
    rows = start + tl.arange(0, BLOCK_ROWS)
    return load_rows(src, rows, stride, tl.arange(0, BLOCK_E), n, E, BLOCK_E, MASKED)
