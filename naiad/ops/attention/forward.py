"""Attention's forward: one program per block of BLOCK_M queries of one (batch, head), streaming
the keys and values in blocks of BLOCK_N with an online softmax (a running maximum and sum per
query, the accumulator rescaled when the maximum grows), so the L x S scores never reach memory.
It writes the output and each query's log-sum-exp (natural log), which the backward reads.
A causal program stops at the last key block its queries can see. The key blocks every query of
the program sees whole (all before the causal diagonal and the sequence's end, where no mask
is given) stream first with no mask: their scores go from the dot to exp2 in one multiply-add
per element, as Triton's attention tutorial does; only the rest (the diagonal, the last partial
block, or every block under a mask) are masked. Query head h reads key/value
head h // GROUP (grouped-query attention; GROUP == 1 for ordinary heads). The sequences are
batched or packed (sequence.py); a packed program past its sequence's end does nothing.
With DROPOUT (dropout.py) the probabilities that multiply V are dropped, not those the sum and
the log-sum-exp count, and the output is scaled by 1 / (1 - p), as FlashAttention does.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit
from .dropout import kept
from .runs import key_runs
from .scores import scores
from .sequence import causal_diagonal, query_block, sequence
from .tiles import load_rows

__all__ = ["attention_forward"]


@jit
def _stream(acc, total, running_max, q_tile, k_src, v_src, rows, L, S, diagonal,
            mask_base, sk_s, sv_s, sm_l, sm_s, scale_log2, dropout, lo, hi,
            E: tl.constexpr, CAUSAL: tl.constexpr, MASK_KIND: tl.constexpr,
            PRECISION: tl.constexpr, DROPOUT: tl.constexpr, BLOCK_N: tl.constexpr,
            BLOCK_E: tl.constexpr, MASKED: tl.constexpr):  # fmt: skip
    """The online softmax over the key blocks from `lo` to `hi`: (acc, total, running_max)
    after them. MASKED False: every query sees every key of these blocks, so no score is
    masked and the scale folds into the exponent's multiply-add. DROPOUT: the probabilities
    that multiply V are dropped (dropout.py; the caller scales the output), the sum is of all:
    `dropout` is (seed, this head's first offset, the offsets' row stride, p)."""
    dims = tl.arange(0, BLOCK_E)
    for begin in range(lo, hi, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        k_tile = load_rows(k_src, cols, sk_s, dims, S, E, BLOCK_E, MASKED)
        if MASKED:
            s = scores(q_tile, k_tile, rows, cols, L, S, diagonal, mask_base, sm_l, sm_s,
                       scale_log2, CAUSAL, MASK_KIND, PRECISION)  # fmt: skip
            new_max = tl.maximum(running_max, tl.max(s, 1))
            shift = tl.where(new_max == float("-inf"), 0.0, new_max)
            p = tl.math.exp2(s - shift[:, None])
        else:
            s = tl.dot(q_tile, tl.trans(k_tile), input_precision=PRECISION)
            new_max = tl.maximum(running_max, tl.max(s, 1) * scale_log2)
            shift = new_max
            p = tl.math.exp2(s * scale_log2 - shift[:, None])
        rescale = tl.math.exp2(running_max - shift)
        v_tile = load_rows(v_src, cols, sv_s, dims, S, E, BLOCK_E, MASKED)
        acc = acc * rescale[:, None]
        total = total * rescale + tl.sum(p, 1)
        if DROPOUT:
            seed, first, stride, drop_p = dropout
            p = tl.where(kept(seed, first, rows[:, None], cols[None, :], stride, drop_p), p, 0.0)
        acc = tl.dot(p.to(v_tile.dtype), v_tile, acc, input_precision=PRECISION)
        running_max = new_max
    return acc, total, running_max


@jit(do_not_specialize=["L", "S", "H", "GROUP", "scale_log2", "seed", "drop_offset"])
def attention_forward(q, k, v, o, lse, mask, cu_q, cu_k, L, S, H, GROUP, scale_log2,
                      sq_b, sq_h, sq_l, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s,
                      sm_b, sm_h, sm_l, sm_s, seed, drop_offset, drop_p, drop_scale,
                      so_b, so_h, so_l, E: tl.constexpr, CAUSAL: tl.constexpr,
                      MASK_KIND: tl.constexpr, PACKED: tl.constexpr, PRECISION: tl.constexpr,
                      DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_E: tl.constexpr):  # fmt: skip
    """q, k, v have a unit stride along the head dim E; o and lse have their rows (one a query
    and head) at b * so_b + h * so_h + l * so_l: o's row r is o[r * E:][:E], lse's is lse[r].
    (Problems of whole blocks take whole_blocks.py's kernel instead: flash.py.) DROPOUT: the
    output is of the dropped probabilities times `drop_scale`, 1 / (1 - drop_p) (0 at 1)."""
    start = query_block(CAUSAL) * BLOCK_M
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    kv = h // GROUP
    # the mask's offsets stride by the longest lengths: packed sequences' never overlap
    dropout = (seed, drop_offset + bh * L * S, S, drop_p)
    q_first, L = sequence(cu_q, b, L, PACKED)
    k_first, S = sequence(cu_k, b, S, PACKED)
    diagonal = causal_diagonal(L, S, PACKED)
    rows = start + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_E)
    q_tile = load_rows(q + b * sq_b + h * sq_h + q_first * sq_l, rows, sq_l, dims, L, E, BLOCK_E,
                       True)  # fmt: skip
    k_src = k + b * sk_b + kv * sk_h + k_first * sk_s
    v_src = v + b * sv_b + kv * sv_h + k_first * sv_s
    mask_base = mask + b * sm_b + h * sm_h
    running_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_E], tl.float32)
    whole, end = key_runs(start, L, S, diagonal, CAUSAL, MASK_KIND, PACKED, BLOCK_M, BLOCK_N)
    acc, total, running_max = _stream(acc, total, running_max, q_tile, k_src, v_src, rows,
                                      L, S, diagonal, mask_base, sk_s, sv_s, sm_l, sm_s,
                                      scale_log2, dropout, 0, whole, E,
                                      CAUSAL, MASK_KIND, PRECISION, DROPOUT, BLOCK_N, BLOCK_E,
                                      False)  # fmt: skip
    acc, total, running_max = _stream(acc, total, running_max, q_tile, k_src, v_src, rows,
                                      L, S, diagonal, mask_base, sk_s, sv_s, sm_l, sm_s,
                                      scale_log2, dropout, whole, end, E,
                                      CAUSAL, MASK_KIND, PRECISION, DROPOUT, BLOCK_N, BLOCK_E,
                                      True)  # fmt: skip
    safe_total = tl.where(total == 0, 1.0, total)
    out = acc / safe_total[:, None]
    if DROPOUT:
        out = out * drop_scale
    row_in = rows < L
    out_rows = b * so_b + h * so_h + (q_first + rows) * so_l
    where = o + out_rows[:, None] * E + dims[None, :]
    tl.store(where, out.to(o.dtype.element_ty), mask=row_in[:, None] & (dims[None, :] < E))
    log_sum = (running_max + tl.math.log2(safe_total)) * 0.6931471805599453
    tl.store(lse + out_rows, log_sum, mask=row_in)
