"""What select.py's, flip.py's, triangle.py's and one_hot.py's kernels share: each program
copies a tile of an (outer, K, inner) view, a block of up to MAX_TILE elements that spans
several rows or several matrices where those are short; `tiles_and_grid` sizes the launch on
the host and `tile` tells a program its coordinates, one per dim, so that no element's index
is divided to find them (a division an element: on the CPU an integer division does not
vectorize, on a GPU a 64-bit one is a software routine).

A program of a few elements costs a launch's share of work for nothing: gather along the last
dim of a 1024 x 1024 matrix was a million programs of one element each (on the CPU 9 ms where
torch takes 0.8), one_hot of ten classes a program a sample."""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["tile", "tiles_and_grid"]

MAX_TILE = 1024


def tiles_and_grid(outer: int, K: int, inner: int, device) -> tuple[int, int, int, tuple[int]]:
    """(BLOCK_O, BLOCK_K, BLOCK_I, grid) for tensors on `device`: powers of 2 covering inner
    first, then K, then outer, as far as a tile of about MAX_TILE elements reaches, and a program
    per tile. On the CPU a tile spans one dim: K where rows have one element, else a row. (Its
    code generator makes a masked load of a tile of several rows element by element: triu of a
    batch of 32 x 32 matrices ran 2.3 times slower in tiles of 32 rows than a row at a time.)"""
    block_i = min(_power_of_2(inner), MAX_TILE)
    block_k = min(_power_of_2(K), MAX_TILE // block_i)
    block_o = min(_power_of_2(outer), MAX_TILE // (block_i * block_k))
    if device.type == "cpu":
        block_o = 1
        block_k = block_k if block_i == 1 else 1
    tiles = _cdiv(outer, block_o) * _cdiv(K, block_k) * _cdiv(inner, block_i)
    return block_o, block_k, block_i, (tiles,)


def _power_of_2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _cdiv(n: int, d: int) -> int:
    return (n + d - 1) // d


@jit
def tile(O, K, INNER, BLOCK_O: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_I: tl.constexpr):
    """(o, k, i, mask) of this program's tile of the (O, K, INNER) view, 64-bit: each
    coordinate a range along its own dim of the tile, or one number where its block is 1 (the
    tile keeps the dims it spans: the CPU's code generator vectorizes along a tile's last dim,
    which a trailing dim of one would make scalar)."""
    pid = tl.program_id(0).to(tl.int64)
    blocks_i = (INNER + BLOCK_I - 1) // BLOCK_I
    blocks_k = (K + BLOCK_K - 1) // BLOCK_K
    i = (pid % blocks_i) * BLOCK_I
    rest = pid // blocks_i
    o = (rest // blocks_k) * BLOCK_O
    k = (rest % blocks_k) * BLOCK_K
    if BLOCK_I == 1:
        if BLOCK_O == 1:
            k = k + tl.arange(0, BLOCK_K)
        else:
            o = o + tl.arange(0, BLOCK_O)[:, None]
            k = k + tl.arange(0, BLOCK_K)[None, :]
    elif BLOCK_O == 1:
        if BLOCK_K == 1:
            i = i + tl.arange(0, BLOCK_I)
        else:
            k = k + tl.arange(0, BLOCK_K)[:, None]
            i = i + tl.arange(0, BLOCK_I)[None, :]
    else:
        o = o + tl.arange(0, BLOCK_O)[:, None, None]
        k = k + tl.arange(0, BLOCK_K)[None, :, None]
        i = i + tl.arange(0, BLOCK_I)[None, None, :]
    return o, k, i, (o < O) & (k < K) & (i < INNER)
