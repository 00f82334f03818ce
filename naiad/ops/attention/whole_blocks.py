"""Attention's forward where every block is whole: contiguous batched q, k, v whose lengths the
blocks divide, no mask given, head dims of one block (64 or 128), half precision. Such a problem
needs none of the general kernel's (forward.py) guards, so this kernel is the shortest form of
the flash forward:

- q, k, v are read and the output written through host tensor descriptors of their rows (B *
  heads * length, E): on Hopper each key and value block is one tensor copy into a ring of
  shared buffers that the pipeliner fills `num_stages - 1` iterations ahead, and both products
  are wgmma (P stays in registers as the second one's A operand);
- the scale is folded into the base-2 exponent: s = q.k^T stays unscaled, and one multiply-add
  per score gives s * scale * log2(e) - max before exp2;
- each step is rotated by one key block: it takes block j's scores, then adds the block
  before's P.V, then takes block j's softmax. In the loop P.V is the asynchronous dot (its
  result only goes on to the next iteration), so the tensor cores run it while the warps
  compute the exponentials, where in the plain order (scores, softmax, P.V) the tensor cores
  idled through the softmax. The first block's scores and softmax come before the steps, the
  last block's P.V after them;
- causal (top left, L <= S) starts on the diagonal: the BLOCK_M keys from the query block's
  first row, where a key past its query is hidden (every query sees the first of them, so no
  row is empty), then the loop walks the key blocks before them, which every query sees whole
  and which need no mask. Non-causal walks all keys in order, unmasked.

The online softmax is the general kernel's: a running maximum and sum per query, the
accumulator rescaled when the maximum grows (the blocks may come in any order). Query head h
reads key/value head h // GROUP. flash.py says when a call takes this kernel and with which
tiles.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["attention_forward_whole"]


@jit
def _softmax(s, running_max, total, begin, first, scale_log2, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, DIAGONAL: tl.constexpr):  # fmt: skip
    """(p, rescale, new maximum, new total) of the unscaled scores `s` of the key block at
    `begin`: p = exp2 of the base-2 scores less the new running maximum, `rescale` what the
    sums of the blocks before are multiplied by. DIAGONAL: keys past their query (queries from
    `first` on) are hidden."""
    if DIAGONAL:
        keys = begin + tl.arange(0, BLOCK_N)
        queries = first + tl.arange(0, BLOCK_M)
        s = tl.where(keys[None, :] <= queries[:, None], s * scale_log2, float("-inf"))
        new_max = tl.maximum(running_max, tl.max(s, 1))
        p = tl.math.exp2(s - new_max[:, None])
    else:
        new_max = tl.maximum(running_max, tl.max(s, 1) * scale_log2)
        p = tl.math.exp2(s * scale_log2 - new_max[:, None])
    rescale = tl.math.exp2(running_max - new_max)
    return p, rescale, new_max, total * rescale + tl.sum(p, 1)


@jit
def _step(acc, total, running_max, p, rescale, q_tile, k_desc, v_desc, k_row, p_row, begin,
          first, scale_log2, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
          DIAGONAL: tl.constexpr):  # fmt: skip
    """One rotated step: the scores of the key block at row `k_row` (`begin` in its sequence),
    the P.V of the block at `p_row` (`p`, `rescale`), then the softmax of the scores. (acc,
    total, running_max, p, rescale) after it; `p` of the new block, in the inputs' dtype."""
    s = tl.dot(q_tile, k_desc.load([k_row, 0]).T)
    v_tile = v_desc.load([p_row, 0])
    acc = tl.dot(p, v_tile, acc * rescale[:, None])
    p, rescale, running_max, total = _softmax(s, running_max, total, begin, first, scale_log2,
                                              BLOCK_M, BLOCK_N, DIAGONAL)  # fmt: skip
    return acc, total, running_max, p.to(v_tile.dtype), rescale


@jit
def attention_forward_whole(q_desc, k_desc, v_desc, o_desc, lse, L, S, H, GROUP, scale_log2,
                            E: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr):  # fmt: skip
    """One program per block of BLOCK_M queries of one (batch, head). The descriptors are of
    the rows of q, the output (B * H * L, E), k and v (B * H // GROUP * S, E), in blocks of
    BLOCK_M and BLOCK_N rows; BLOCK_M and BLOCK_N divide L and S (S > 0), BLOCK_N divides
    BLOCK_M, and a causal call has L <= S. lse gets each query's log-sum-exp (natural log), row
    by row."""
    first = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    b = bh // H
    kv_row = (b * (H // GROUP) + (bh % H) // GROUP) * S
    q_row = bh * L + first
    q_tile = q_desc.load([q_row, 0])
    start = first if CAUSAL else 0  # the first block's key
    s = tl.dot(q_tile, k_desc.load([kv_row + start, 0]).T)
    running_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    p, rescale, running_max, total = _softmax(s, running_max, tl.zeros([BLOCK_M], tl.float32),
                                              start, first, scale_log2, BLOCK_M, BLOCK_N,
                                              CAUSAL)  # fmt: skip
    p = p.to(q_tile.dtype)
    acc = tl.zeros([BLOCK_M, E], tl.float32)
    p_row = kv_row + start
    if CAUSAL:  # the diagonal's other key blocks
        for i in tl.static_range(1, BLOCK_M // BLOCK_N):
            acc, total, running_max, p, rescale = _step(
                acc, total, running_max, p, rescale, q_tile, k_desc, v_desc, p_row + BLOCK_N,
                p_row, first + i * BLOCK_N, first, scale_log2, BLOCK_M, BLOCK_N, True,
            )  # fmt: skip
            p_row += BLOCK_N
    lo = 0 if CAUSAL else BLOCK_N
    for begin in tl.range(lo, first if CAUSAL else S, BLOCK_N):
        acc, total, running_max, p, rescale = _step(
            acc, total, running_max, p, rescale, q_tile, k_desc, v_desc, kv_row + begin, p_row,
            begin, first, scale_log2, BLOCK_M, BLOCK_N, False,
        )  # fmt: skip
        p_row = kv_row + begin
    acc = tl.dot(p, v_desc.load([p_row, 0]), acc * rescale[:, None])
    o_desc.store([q_row, 0], (acc / total[:, None]).to(o_desc.dtype))
    log_sum = (running_max + tl.math.log2(total)) * 0.6931471805599453
    tl.store(lse + q_row + tl.arange(0, BLOCK_M), log_sum)
