"""Attention's backward where every block is whole (the problems whole_blocks.py's forward
takes): dK/dV and dQ as backward.py computes them, without its guards.

Every tile is read and every gradient written through host tensor descriptors of the tensors'
rows, so on Hopper each loop's operand tiles are tensor copies into rings of shared buffers, and
the products are asynchronous wgmma. The probabilities are recomputed in base 2 as
p = exp2(s * scale * log2(e) - lse * log2(e)), one multiply-add per score. Causal (top left, L <=
S) splits each walk in two: the blocks on the diagonal, where a key past its query is hidden,
and those seen whole, with no mask.

- `attention_dkdv_whole`: one program per block of BLOCK_N keys of one (batch, key head) walks
  the query blocks of BLOCK_M that see it, of every query head of its group: dV += p^T dO,
  dK += ds^T Q with ds = p * (dO V^T - delta). Not causal, the group's query heads are rows
  next to each other, so the walk is one loop over GROUP * L rows. dp^T = V dO^T is taken
  before p^T's dV product: wgmma are issued in program order, so where dV (which reads p^T)
  came first, dp^T waited for the exponentials; now ptxas issues it among them.
- `attention_dq_whole`: one program per block of BLOCK_M queries of one (batch, head) walks the
  key blocks its queries see: dQ += ds K.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit
from .sequence import query_block

__all__ = ["attention_dkdv_whole", "attention_dq_whole"]


@jit
def _query_blocks(dk_acc, dv_acc, k_tile, v_tile, q_desc, do_desc, lse, delta, row, key, lo,
                  hi, scale_log2, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  DIAGONAL: tl.constexpr):  # fmt: skip
    """dk_acc and dv_acc after the query rows from `row + lo` to `row + hi` (BLOCK_M at a time),
    the keys' first being `key`; DIAGONAL hides the keys past each query (query i of the walk
    is lo + i)."""
    at = row + lo
    for begin in tl.range(lo, hi, BLOCK_M):
        q_tile = q_desc.load([at, 0])
        lse_log2 = tl.load(lse + at + tl.arange(0, BLOCK_M)) * 1.4426950408889634
        s_t = tl.dot(k_tile, q_tile.T)
        do_tile = do_desc.load([at, 0])
        dp_t = tl.dot(v_tile, do_tile.T)  # before dV's (module doc)
        p_t = tl.math.exp2(s_t * scale_log2 - lse_log2[None, :])
        if DIAGONAL:
            queries = begin + tl.arange(0, BLOCK_M)
            keys = key + tl.arange(0, BLOCK_N)
            p_t = tl.where(keys[:, None] <= queries[None, :], p_t, 0.0)
        dv_acc = tl.dot(p_t.to(do_tile.dtype), do_tile, dv_acc)
        ds_t = p_t * (dp_t - tl.load(delta + at + tl.arange(0, BLOCK_M))[None, :])
        dk_acc = tl.dot(ds_t.to(q_tile.dtype), q_tile, dk_acc)
        at += BLOCK_M
    return dk_acc, dv_acc


@jit
def attention_dkdv_whole(q_desc, k_desc, v_desc, do_desc, lse, delta, dk_desc, dv_desc, L, S,
                         H, GROUP, scale_log2, E: tl.constexpr, CAUSAL: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """q, dO (and lse, delta) are rows of (B * H * L, E), k, v, dk, dv of (B * H // GROUP * S,
    E); BLOCK_M divides L and BLOCK_N, BLOCK_N divides S; dk comes out scaled by `scale`."""
    key = tl.program_id(0) * BLOCK_N
    bkv = tl.program_id(1)
    kv_row = bkv * S + key
    k_tile = k_desc.load([kv_row, 0])
    v_tile = v_desc.load([kv_row, 0])
    dk_acc = tl.zeros([BLOCK_N, E], tl.float32)
    dv_acc = tl.zeros([BLOCK_N, E], tl.float32)
    first_row = (bkv // (H // GROUP) * H + bkv % (H // GROUP) * GROUP) * L
    if CAUSAL:
        for g in range(0, GROUP):
            row = first_row + g * L
            diagonal_end = tl.minimum(key + BLOCK_N, L)
            dk_acc, dv_acc = _query_blocks(dk_acc, dv_acc, k_tile, v_tile, q_desc, do_desc, lse,
                                           delta, row, key, key, diagonal_end, scale_log2,
                                           BLOCK_M, BLOCK_N, True)  # fmt: skip
            dk_acc, dv_acc = _query_blocks(dk_acc, dv_acc, k_tile, v_tile, q_desc, do_desc, lse,
                                           delta, row, key, key + BLOCK_N, L, scale_log2,
                                           BLOCK_M, BLOCK_N, False)  # fmt: skip
    else:
        dk_acc, dv_acc = _query_blocks(dk_acc, dv_acc, k_tile, v_tile, q_desc, do_desc, lse,
                                       delta, first_row, key, 0, GROUP * L, scale_log2, BLOCK_M,
                                       BLOCK_N, False)  # fmt: skip
    scale = scale_log2 * 0.6931471805599453
    dk_desc.store([kv_row, 0], (dk_acc * scale).to(dk_desc.dtype))
    dv_desc.store([kv_row, 0], dv_acc.to(dv_desc.dtype))


@jit
def _key_blocks(dq_acc, q_tile, do_tile, lse_log2, row_delta, k_desc, v_desc, kv_row, first, lo,
                hi, scale_log2, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                DIAGONAL: tl.constexpr):  # fmt: skip
    """dq_acc after the key blocks from `lo` to `hi` of the key head whose first row is
    `kv_row`; DIAGONAL hides the keys past each query (the queries from `first` on)."""
    at = kv_row + lo
    for begin in tl.range(lo, hi, BLOCK_N):
        k_tile = k_desc.load([at, 0])
        v_tile = v_desc.load([at, 0])
        p = tl.math.exp2(tl.dot(q_tile, k_tile.T) * scale_log2 - lse_log2[:, None])
        if DIAGONAL:
            keys = begin + tl.arange(0, BLOCK_N)
            queries = first + tl.arange(0, BLOCK_M)
            p = tl.where(keys[None, :] <= queries[:, None], p, 0.0)
        dp = tl.dot(do_tile, v_tile.T)
        ds = p * (dp - row_delta[:, None])
        dq_acc = tl.dot(ds.to(k_tile.dtype), k_tile, dq_acc)
        at += BLOCK_N
    return dq_acc


@jit
def attention_dq_whole(q_desc, k_desc, v_desc, do_desc, lse, delta, dq_desc, L, S, H, GROUP,
                       scale_log2, E: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr):  # fmt: skip
    """The rows as `attention_dkdv_whole`'s; BLOCK_M divides L, BLOCK_N divides BLOCK_M and S;
    dq comes out scaled by `scale`."""
    first = query_block(CAUSAL) * BLOCK_M
    bh = tl.program_id(1)
    kv_row = (bh // H * (H // GROUP) + bh % H // GROUP) * S
    row = bh * L + first
    q_tile = q_desc.load([row, 0])
    do_tile = do_desc.load([row, 0])
    lse_log2 = tl.load(lse + row + tl.arange(0, BLOCK_M)) * 1.4426950408889634
    row_delta = tl.load(delta + row + tl.arange(0, BLOCK_M))
    dq_acc = tl.zeros([BLOCK_M, E], tl.float32)
    whole = first if CAUSAL else S
    dq_acc = _key_blocks(dq_acc, q_tile, do_tile, lse_log2, row_delta, k_desc, v_desc, kv_row,
                         first, 0, whole, scale_log2, BLOCK_M, BLOCK_N, False)  # fmt: skip
    if CAUSAL:
        dq_acc = _key_blocks(dq_acc, q_tile, do_tile, lse_log2, row_delta, k_desc, v_desc, kv_row,
                             first, first, first + BLOCK_M, scale_log2, BLOCK_M, BLOCK_N,
                             True)  # fmt: skip
    scale = scale_log2 * 0.6931471805599453
    dq_desc.store([row, 0], (dq_acc * scale).to(dq_desc.dtype))
