"""The order in which a product's programs take their output tiles: groups of GROUP_M tile rows,
column after column, so that the programs running at once share their rows of `a` and
columns of `b` in the L2 cache (matmul.py's and copied_tiles.py's kernels)."""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["tile_of"]


@jit
def tile_of(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(tile row, tile column) of program `pid` of an M x N product in BLOCK_M x BLOCK_N
    tiles."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * tiles_n)
    first_m = group * GROUP_M
    group_m = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % (GROUP_M * tiles_n)) % group_m
    tile_n = (pid % (GROUP_M * tiles_n)) // group_m
    return tile_m, tile_n
