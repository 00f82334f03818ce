"""Attention's forward by whole blocks: contiguous batched q, k, v of any lengths, no mask
given, head dims of one block (64, 128 or 256), half precision. Every key block but the last is
whole, so the loop over them needs none of the general kernel's (forward.py) guards: this
kernel is the shortest form of the flash forward, whose sm_90a loop is that of
examples/06_fused_attention.py (the attention tutorial, which runs at Triton's speed on an
H200):

- q, k, v are read and the output written through host tensor descriptors of their heads (B *
  heads, length, E) in blocks [1, BLOCK, E]: on Hopper each key and value block is one tensor
  copy into a ring of shared buffers that the pipeliner fills `num_stages - 1` iterations
  ahead, and both products are asynchronous wgmma (P stays in registers as the second one's A
  operand). A block that passes its head's last row reads zeros there and its store drops
  those rows (the tensor-copy engine bounds each dimension), so a length the blocks do not
  divide costs one masked key block at the end (keys from S on get -inf, as the causal
  diagonal hides keys) and the log-sum-exp's store a mask;
- the scale is folded into the base-2 exponent: s = q.k^T stays unscaled, and one multiply-add
  per score gives s * scale * log2(e) - max before exp2;
- causal (top left, L <= S) runs two loops: the key blocks strictly before the query block's
  first row, which every query sees whole and which need no mask, then the BLOCK_M keys on the
  diagonal, where a key past its query is hidden (keys from S on too: past every query below
  L). Non-causal runs the first loop over the whole key blocks, then the last one masked where
  BLOCK_N does not divide S. A causal call's programs take their query blocks last to first
  (sequence.query_block);
- ROTATED (non-causal only, at least one whole key block) shifts each step of the whole
  blocks by one key block: block j's scores, then block j-1's P.V, then block j's softmax.
  P.V is then the loop's asynchronous wgmma, its result wanted only by the next iteration, so
  the tensor cores run it while the warps take the exponentials; in the plain order they idle
  through the softmax. On an H200 that gains at D128 (forward alone 0.55-0.58 -> 0.52-0.55
  ms, fp16 2x16x4096) and loses at D64 (0.32 -> 0.34) and in causal calls, so flash.py asks
  for it where it gains.

The online softmax is the general kernel's: a running maximum and sum per query, the
accumulator rescaled when the maximum grows. Query head h reads key/value head h // GROUP.
flash.py says when a call takes this kernel and with which tiles.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit
from .sequence import query_block

__all__ = ["attention_forward_whole"]

# What a key block's scores hide (`_softmax`): nothing, the keys past each query (the causal
# diagonal), or the keys from S on (the last block of a length BLOCK_N does not divide).
WHOLE = tl.constexpr(0)
DIAGONAL = tl.constexpr(1)
END = tl.constexpr(2)


@jit
def _softmax(s, running_max, total, begin, first, S, scale_log2, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, HIDE: tl.constexpr):  # fmt: skip
    """(p, rescale, running_max, total) after the unscaled scores `s` of the key block at
    `begin`: p = exp2 of the base-2 scores less the new running maximum, and `rescale` what
    the accumulator of the blocks before is multiplied by. HIDE (WHOLE, DIAGONAL, END) says
    which keys get -inf: DIAGONAL those past a query of the block (queries from `first` on),
    END those from S on."""
    if HIDE == WHOLE:
        new_max = tl.maximum(running_max, tl.max(s, 1) * scale_log2)
        p = tl.math.exp2(s * scale_log2 - new_max[:, None])
    else:
        keys = begin + tl.arange(0, BLOCK_N)
        if HIDE == DIAGONAL:
            queries = first + tl.arange(0, BLOCK_M)
            visible = keys[None, :] <= queries[:, None]
        else:
            visible = (keys < S)[None, :]
        s = tl.where(visible, s * scale_log2, float("-inf"))
        new_max = tl.maximum(running_max, tl.max(s, 1))
        p = tl.math.exp2(s - new_max[:, None])
    rescale = tl.math.exp2(running_max - new_max)
    return p, rescale, new_max, total * rescale + tl.sum(p, 1)


@jit
def _step(acc, total, running_max, q_tile, k_desc, v_desc, kv_head, begin, first, S,
          scale_log2, E: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
          HIDE: tl.constexpr):  # fmt: skip
    """(acc, total, running_max) after the key block at `begin` of key head `kv_head`, in the
    plain order (scores, softmax, P.V). HIDE as in `_softmax`."""
    k_tile = k_desc.load([kv_head, begin, 0]).reshape(BLOCK_N, E)
    s = tl.dot(q_tile, k_tile.T)
    p, rescale, running_max, total = _softmax(s, running_max, total, begin, first, S,
                                              scale_log2, BLOCK_M, BLOCK_N, HIDE)  # fmt: skip
    v_tile = v_desc.load([kv_head, begin, 0]).reshape(BLOCK_N, E)
    acc = tl.dot(p.to(v_tile.dtype), v_tile, acc * rescale[:, None])
    return acc, total, running_max


@jit
def _keys(acc, total, running_max, q_tile, k_desc, v_desc, kv_head, first, lo, hi, S,
          scale_log2, E: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
          HIDE: tl.constexpr):  # fmt: skip
    """(acc, total, running_max) after the key blocks from `lo` to `hi` (`_step`)."""
    for begin in tl.range(lo, hi, BLOCK_N):
        acc, total, running_max = _step(acc, total, running_max, q_tile, k_desc, v_desc,
                                        kv_head, begin, first, S, scale_log2, E, BLOCK_M,
                                        BLOCK_N, HIDE)  # fmt: skip
    return acc, total, running_max


@jit
def _keys_rotated(acc, total, running_max, q_tile, k_desc, v_desc, kv_head, whole, scale_log2,
                  E: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """`_keys` over the `whole` (> 0) keys of whole blocks, unmasked, each step rotated by one
    key block (module doc): the first block's scores and softmax come before the loop, the
    last block's P.V after it."""
    s = tl.dot(q_tile, k_desc.load([kv_head, 0, 0]).reshape(BLOCK_N, E).T)
    p, rescale, running_max, total = _softmax(s, running_max, total, 0, 0, 0, scale_log2,
                                              BLOCK_M, BLOCK_N, WHOLE)  # fmt: skip
    p = p.to(q_tile.dtype)  # carried across the back edge in half the registers of fp32
    for begin in tl.range(BLOCK_N, whole, BLOCK_N):
        s = tl.dot(q_tile, k_desc.load([kv_head, begin, 0]).reshape(BLOCK_N, E).T)
        v_tile = v_desc.load([kv_head, begin - BLOCK_N, 0]).reshape(BLOCK_N, E)
        acc = tl.dot(p, v_tile, acc * rescale[:, None])
        p, rescale, running_max, total = _softmax(s, running_max, total, begin, 0, 0,
                                                  scale_log2, BLOCK_M, BLOCK_N,
                                                  WHOLE)  # fmt: skip
        p = p.to(q_tile.dtype)
    v_tile = v_desc.load([kv_head, whole - BLOCK_N, 0]).reshape(BLOCK_N, E)
    acc = tl.dot(p, v_tile, acc * rescale[:, None])
    return acc, total, running_max


@jit
def attention_forward_whole(q_desc, k_desc, v_desc, o_desc, lse, L, S, H, GROUP, scale_log2,
                            E: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr, ROTATED: tl.constexpr):  # fmt: skip
    """One program per block of BLOCK_M queries of one (batch, head). The descriptors are of
    the heads of q, the output (B * H, L, E), k and v (B * H // GROUP, S, E), in blocks of
    [1, BLOCK_M, E] and [1, BLOCK_N, E]; BLOCK_N divides BLOCK_M, and a causal call has L <=
    S. ROTATED (module doc) only without CAUSAL and with a whole key block (S >= BLOCK_N).
    lse gets each query's log-sum-exp (natural log), row by row."""
    first = query_block(CAUSAL) * BLOCK_M
    bh = tl.program_id(1)
    kv_head = bh // H * (H // GROUP) + bh % H // GROUP
    q_tile = q_desc.load([bh, first, 0]).reshape(BLOCK_M, E)
    running_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, E], tl.float32)
    whole = first if CAUSAL else S - S % BLOCK_N
    if ROTATED:
        acc, total, running_max = _keys_rotated(acc, total, running_max, q_tile, k_desc, v_desc,
                                                kv_head, whole, scale_log2, E, BLOCK_M,
                                                BLOCK_N)  # fmt: skip
    else:
        acc, total, running_max = _keys(acc, total, running_max, q_tile, k_desc, v_desc,
                                        kv_head, first, 0, whole, S, scale_log2, E, BLOCK_M,
                                        BLOCK_N, WHOLE)  # fmt: skip
    if CAUSAL:
        acc, total, running_max = _keys(acc, total, running_max, q_tile, k_desc, v_desc,
                                        kv_head, first, first, first + BLOCK_M, S, scale_log2,
                                        E, BLOCK_M, BLOCK_N, DIAGONAL)  # fmt: skip
    elif whole < S:  # the last key block, which BLOCK_N does not fill
        acc, total, running_max = _step(acc, total, running_max, q_tile, k_desc, v_desc,
                                        kv_head, whole, first, S, scale_log2, E, BLOCK_M,
                                        BLOCK_N, END)  # fmt: skip
    out = (acc / total[:, None]).to(o_desc.dtype)
    o_desc.store([bh, first, 0], out.reshape(1, BLOCK_M, E))
    log_sum = (running_max + tl.math.log2(total)) * 0.6931471805599453
    queries = first + tl.arange(0, BLOCK_M)
    tl.store(lse + bh * L + queries, log_sum, mask=queries < L)
