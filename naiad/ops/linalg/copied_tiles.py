"""Matrix products whose operands the tensor memory accelerator reads (Hopper): `mm` and `bmm` of
half precision matrices in rows, through host tensor descriptors of (batch, rows, columns) (a
plain product is a batch of one).

matmul.py's kernel reads its tiles through pointers, which the pipeliner copies by `cp.async`;
here every tile is one tensor copy into the ring the asynchronous `wgmma` read, and the result
tile is one copy out, as Triton's tutorial 09 kernels do. The copy engine bounds each access: a
tile past the matrix reads zeros and its store drops what lies outside, so no row or column is
masked and K needs no multiple of BLOCK_K; the batch is a dimension of its own, so no tile
reaches into the next product. `b` is either (K, N) in rows or, as `F.linear`'s
weight comes (`W.t()`), the rows of (N, K) whose tiles the product reads transposed.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit
from .tile_order import tile_of

__all__ = ["matmul_copied"]


@jit
def matmul_copied(a_desc, b_desc, c_desc, M, N, K, B_TRANSPOSED: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):  # fmt: skip
    """c[p] = a[p] @ b[p] for the batch entry p = program_id(1), with a[p] (M, K) and c[p] (M, N)
    in rows, b[p] (K, N) in rows or, B_TRANSPOSED, b[p]^T (N, K) in rows; one BLOCK_M x BLOCK_N
    tile of c[p] a program, in tile_order's order. Each descriptor's blocks are one entry deep."""
    p = tl.program_id(1)
    tile_m, tile_n = tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    row, column = tile_m * BLOCK_M, tile_n * BLOCK_N
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in range(0, K, BLOCK_K):
        a_tile = a_desc.load([p, row, k]).reshape(BLOCK_M, BLOCK_K)
        if B_TRANSPOSED:
            b_tile = b_desc.load([p, column, k]).reshape(BLOCK_N, BLOCK_K).T
        else:
            b_tile = b_desc.load([p, k, column]).reshape(BLOCK_K, BLOCK_N)
        acc = tl.dot(a_tile, b_tile, acc)
    c_desc.store([p, row, column], acc.to(c_desc.dtype).reshape(1, BLOCK_M, BLOCK_N))
