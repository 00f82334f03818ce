"""Attention's forward where every block is whole: contiguous batched q, k, v whose lengths the
blocks divide, no mask given, head dims of one block (64 or 128), half precision. Such a problem
needs none of the general kernel's (forward.py) guards, so this kernel is the shortest form of
the flash forward, whose sm_90a loop is that of examples/06_fused_attention.py (the attention
tutorial, which runs at Triton's speed on an H200):

- q, k, v are read and the output written through host tensor descriptors of their rows (B *
  heads * length, E): on Hopper each key and value block is one tensor copy into a ring of
  shared buffers that the pipeliner fills `num_stages - 1` iterations ahead, and both products
  are asynchronous wgmma (P stays in registers as the second one's A operand);
- the scale is folded into the base-2 exponent: s = q.k^T stays unscaled, and one multiply-add
  per score gives s * scale * log2(e) - max before exp2;
- causal (top left, L <= S) runs two loops: the key blocks strictly before the query block's
  first row, which every query sees whole and which need no mask, then the BLOCK_M keys on the
  diagonal, where a key past its query is hidden. Non-causal runs the first loop over all keys.
  A causal call's programs take their query blocks last to first (sequence.query_block);
- ROTATED (non-causal only) shifts each step by one key block: block j's scores, then block
  j-1's P.V, then block j's softmax. P.V is then the loop's asynchronous wgmma, its result
  wanted only by the next iteration, so the tensor cores run it while the warps take the
  exponentials; in the plain order they idle through the softmax. On an H200 that gains at
  D128 (forward alone 0.55-0.58 -> 0.52-0.55 ms, fp16 2x16x4096) and loses at D64 (0.32 ->
  0.34) and in causal calls, so flash.py asks for it where it gains.

The online softmax is the general kernel's: a running maximum and sum per query, the
accumulator rescaled when the maximum grows. Query head h reads key/value head h // GROUP.
flash.py says when a call takes this kernel and with which tiles.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit
from .sequence import query_block

__all__ = ["attention_forward_whole"]


@jit
def _softmax(s, running_max, total, begin, first, scale_log2, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, DIAGONAL: tl.constexpr):  # fmt: skip
    """(p, rescale, running_max, total) after the unscaled scores `s` of the key block at
    `begin`: p = exp2 of the base-2 scores less the new running maximum, and `rescale` what
    the accumulator of the blocks before is multiplied by. DIAGONAL: the block may hold keys
    past some query of the block (queries from `first` on), which are hidden."""
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
def _keys(acc, total, running_max, q_tile, k_desc, v_desc, kv_row, first, lo, hi, scale_log2,
          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, DIAGONAL: tl.constexpr):  # fmt: skip
    """(acc, total, running_max) after the key blocks from `lo` to `hi` of the key head whose
    first row is `kv_row`, each step in the plain order (scores, softmax, P.V). DIAGONAL as
    in `_softmax`; the other blocks are seen whole."""
    row = kv_row + lo
    for begin in tl.range(lo, hi, BLOCK_N):
        s = tl.dot(q_tile, k_desc.load([row, 0]).T)
        p, rescale, running_max, total = _softmax(s, running_max, total, begin, first,
                                                  scale_log2, BLOCK_M, BLOCK_N,
                                                  DIAGONAL)  # fmt: skip
        v_tile = v_desc.load([row, 0])
        acc = tl.dot(p.to(v_tile.dtype), v_tile, acc * rescale[:, None])
        row += BLOCK_N
    return acc, total, running_max


@jit
def _keys_rotated(acc, total, running_max, q_tile, k_desc, v_desc, kv_row, S, scale_log2,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """`_keys` over all S (> 0) keys, unmasked, each step rotated by one key block (module
    doc): the first block's scores and softmax come before the loop, the last block's P.V
    after it."""
    s = tl.dot(q_tile, k_desc.load([kv_row, 0]).T)
    p, rescale, running_max, total = _softmax(s, running_max, total, 0, 0, scale_log2, BLOCK_M,
                                              BLOCK_N, False)  # fmt: skip
    p = p.to(q_tile.dtype)  # carried across the back edge in half the registers of fp32
    row = kv_row
    for begin in tl.range(BLOCK_N, S, BLOCK_N):
        s = tl.dot(q_tile, k_desc.load([row + BLOCK_N, 0]).T)
        acc = tl.dot(p, v_desc.load([row, 0]), acc * rescale[:, None])
        p, rescale, running_max, total = _softmax(s, running_max, total, begin, 0, scale_log2,
                                                  BLOCK_M, BLOCK_N, False)  # fmt: skip
        p = p.to(q_tile.dtype)
        row += BLOCK_N
    acc = tl.dot(p, v_desc.load([row, 0]), acc * rescale[:, None])
    return acc, total, running_max


@jit
def attention_forward_whole(q_desc, k_desc, v_desc, o_desc, lse, L, S, H, GROUP, scale_log2,
                            E: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr, ROTATED: tl.constexpr):  # fmt: skip
    """One program per block of BLOCK_M queries of one (batch, head). The descriptors are of
    the rows of q, the output (B * H * L, E), k and v (B * H // GROUP * S, E), in blocks of
    BLOCK_M and BLOCK_N rows; BLOCK_M and BLOCK_N divide L and S, BLOCK_N divides BLOCK_M, and
    a causal call has L <= S. ROTATED (module doc) only without CAUSAL and with keys (S > 0).
    lse gets each query's log-sum-exp (natural log), row by row."""
    first = query_block(CAUSAL) * BLOCK_M
    bh = tl.program_id(1)
    b = bh // H
    kv_row = (b * (H // GROUP) + (bh % H) // GROUP) * S
    q_row = bh * L + first
    q_tile = q_desc.load([q_row, 0])
    running_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, E], tl.float32)
    if ROTATED:
        acc, total, running_max = _keys_rotated(acc, total, running_max, q_tile, k_desc, v_desc,
                                                kv_row, S, scale_log2, BLOCK_M,
                                                BLOCK_N)  # fmt: skip
    else:
        whole = first if CAUSAL else S
        acc, total, running_max = _keys(acc, total, running_max, q_tile, k_desc, v_desc,
                                        kv_row, first, 0, whole, scale_log2, BLOCK_M, BLOCK_N,
                                        False)  # fmt: skip
    if CAUSAL:
        acc, total, running_max = _keys(acc, total, running_max, q_tile, k_desc, v_desc, kv_row,
                                        first, first, first + BLOCK_M, scale_log2, BLOCK_M,
                                        BLOCK_N, True)  # fmt: skip
    o_desc.store([q_row, 0], (acc / total[:, None]).to(o_desc.dtype))
    log_sum = (running_max + tl.math.log2(total)) * 0.6931471805599453
    tl.store(lse + q_row + tl.arange(0, BLOCK_M), log_sum)
