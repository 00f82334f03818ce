"""Loading a tile of rows (queries, keys, values or their gradients' rows) for the attention
kernels: masked where the tile may pass the sequence's end, unmasked where the caller knows it
does not, so that the copies of the blocks every query sees whole are plain 16-byte vectors.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["load_rows"]


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
