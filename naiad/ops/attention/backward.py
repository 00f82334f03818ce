"""Attention's backward, as three kernels that recompute the probabilities instead of storing
them: p = exp2(s - lse * log2(e)) from the forward's log-sum-exp.

- `attention_delta`: delta[m] = sum(dO[m] * O[m]), the row term of softmax's gradient;
- `attention_dkdv`: one program per block of keys of one (batch, key head) walks the query
  blocks that see it (from the diagonal on, where causal) of every query head of its group:
  dV += p^T dO, dK += ds^T Q with ds = p * (dO V^T - delta);
- `attention_dq`: one program per block of queries walks the keys it sees: dQ += ds K.

As in the forward, the blocks every query and key of the pair sees whole (before the causal
diagonal, inside both sequences, no mask given) run unmasked: plain loads, and the scores go to
exp2 in one multiply-add per element. Each gradient is owned by one program, so nothing is
added atomically and results repeat. The sequences are batched or packed (sequence.py); a
packed program past its sequence's end stores nothing. With DROPOUT (dropout.py) dV takes the
probabilities the forward kept, scaled, and dO V^T is dropped alike before ds; delta, of the
dropped output, is what the softmax's gradient needs.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit
from .dropout import kept
from .runs import key_runs, query_runs
from .scores import hide, scores
from .sequence import causal_diagonal, query_block, sequence
from .tiles import load_block, load_rows

__all__ = ["attention_delta", "attention_dkdv", "attention_dq"]


@jit(do_not_specialize=["R"])
def attention_delta(o, do, delta, dq_sum, R, E: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_E: tl.constexpr):  # fmt: skip
    """o and do are contiguous (R, E), delta (R,) fp32: row r of each is one query and head.
    dq_sum, where not None, (R, E) fp32, gets zeros: the sum a dK/dV walk adding dQ starts
    from, written here rather than by a launch of its own."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_E)
    mask = (rows[:, None] < R) & (dims[None, :] < E)
    at = rows[:, None] * E + dims[None, :]
    product = tl.load(o + at, mask=mask, other=0).to(tl.float32) * tl.load(
        do + at, mask=mask, other=0
    ).to(tl.float32)
    tl.store(delta + rows, tl.sum(product, 1), mask=rows < R)
    if dq_sum is not None:
        tl.store(dq_sum + at, tl.zeros([BLOCK_M, BLOCK_E], tl.float32), mask=mask)


@jit
def _probabilities(q_tile, k_tile, rows, cols, L, S, diagonal, mask, sm_l, sm_s, scale_log2,
                   lse_log2, CAUSAL: tl.constexpr, MASK_KIND: tl.constexpr,
                   PRECISION: tl.constexpr, MASKED: tl.constexpr):  # fmt: skip
    """p = exp2(s - lse) of the [rows, cols] tile; 0 where masked and for rows that saw no key
    (lse = -inf). MASKED False: every pair is visible and every row saw keys."""
    if MASKED:
        s = scores(q_tile, k_tile, rows, cols, L, S, diagonal, mask, sm_l, sm_s, scale_log2,
                   CAUSAL, MASK_KIND, PRECISION)  # fmt: skip
        shift = tl.where(lse_log2 == float("-inf"), 0.0, lse_log2)
        return tl.math.exp2(s - shift[:, None])
    s = tl.dot(q_tile, tl.trans(k_tile), input_precision=PRECISION)
    return tl.math.exp2(s * scale_log2 - lse_log2[:, None])


@jit
def _row_values(base, rows, stride, L, MASKED: tl.constexpr):
    """lse or delta of `rows` (at base + rows * stride); 0 past L."""
    if MASKED:
        return tl.load(base + rows * stride, mask=rows < L, other=0)
    return tl.load(base + rows * stride)


@jit
def _key_block_gradients(dk_acc, dv_acc, k_tile, v_tile, cols, q_src, q_row, do_src, out_base,
                         lse, delta, mask, L, S, diagonal, sq_l, so_l, sm_l, sm_s, scale_log2,
                         dropout, lo, hi, E: tl.constexpr, CAUSAL: tl.constexpr,
                         MASK_KIND: tl.constexpr, PRECISION: tl.constexpr, DROPOUT: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_E: tl.constexpr, MASKED: tl.constexpr,
                         DESCRIPTORS: tl.constexpr):  # fmt: skip
    """dk_acc and dv_acc after the query blocks from `lo` to `hi` of one query head. The tiles
    are [keys, queries] (p^T, dp^T, ds^T): each is then the register operand of the product
    that accumulates it into dv or dk, with no transpose of a computed tile. DROPOUT: `dropout`
    is (seed, this head's first offset, the offsets' row stride, p, 1 / (1 - p)); dV takes the
    dropped probabilities, and dp^T is dropped the same way before the softmax's gradient."""
    for begin in range(lo, hi, BLOCK_M):
        rows = begin + tl.arange(0, BLOCK_M)
        q_tile = load_block(q_src, q_row, begin, sq_l, L, E, BLOCK_M, BLOCK_E, MASKED,
                            DESCRIPTORS)  # fmt: skip
        lse_log2 = _row_values(lse + out_base, rows, so_l, L, MASKED) * 1.4426950408889634
        s_t = tl.dot(k_tile, tl.trans(q_tile), input_precision=PRECISION)
        if MASKED:
            s_t = hide(s_t * scale_log2, rows[None, :], cols[:, None], L, S, diagonal, mask,
                       sm_l, sm_s, CAUSAL, MASK_KIND)  # fmt: skip
            shift = tl.where(lse_log2 == float("-inf"), 0.0, lse_log2)
            p_t = tl.math.exp2(s_t - shift[None, :])
        else:
            p_t = tl.math.exp2(s_t * scale_log2 - lse_log2[None, :])
        do_tile = load_block(do_src, out_base, begin, so_l * E, L, E, BLOCK_M, BLOCK_E, MASKED,
                             DESCRIPTORS)  # fmt: skip
        dp_t = tl.dot(v_tile, tl.trans(do_tile), input_precision=PRECISION)
        if DROPOUT:
            seed, first, stride, drop_p, drop_scale = dropout
            keep = kept(seed, first, rows[None, :], cols[:, None], stride, drop_p)
            dp_t = tl.where(keep, dp_t * drop_scale, 0.0)
            dv_acc = tl.dot(tl.where(keep, p_t * drop_scale, 0.0).to(do_tile.dtype), do_tile,
                            dv_acc, input_precision=PRECISION)  # fmt: skip
        else:
            dv_acc = tl.dot(p_t.to(do_tile.dtype), do_tile, dv_acc, input_precision=PRECISION)
        row_delta = _row_values(delta + out_base, rows, so_l, L, MASKED)
        ds_t = p_t * (dp_t - row_delta[None, :])
        dk_acc = tl.dot(ds_t.to(q_tile.dtype), q_tile, dk_acc, input_precision=PRECISION)
    return dk_acc, dv_acc


@jit(do_not_specialize=["L", "S", "H", "GROUP", "scale_log2", "seed", "drop_offset"])
def attention_dkdv(q, k, v, do, lse, delta, dk, dv, mask, cu_q, cu_k, L, S, H, GROUP, scale_log2,
                   sq_b, sq_h, sq_l, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s, sm_b, sm_h, sm_l, sm_s,
                   seed, drop_offset, drop_p, drop_scale, so_b, so_h, so_l, sd_b, sd_h, sd_s,
                   E: tl.constexpr, CAUSAL: tl.constexpr, MASK_KIND: tl.constexpr,
                   PACKED: tl.constexpr, PRECISION: tl.constexpr, DROPOUT: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr,
                   DESCRIPTORS: tl.constexpr):  # fmt: skip
    """do, lse and delta have their rows where the forward's o and lse have them (so_*); dk and
    dv theirs (one a key and key head) at b * sd_b + kv * sd_h + n * sd_s, E elements each; dk
    is returned scaled by `scale`. The query blocks run masked before the first block that sees
    the whole key block (causal), unmasked, then masked from the last partial block on.
    DESCRIPTORS: q and do are descriptors of their rows (flash.py); DROPOUT as the forward's."""
    start = tl.program_id(0) * BLOCK_N
    bkv = tl.program_id(1).to(tl.int64)
    b = bkv // (H // GROUP)
    kv = bkv % (H // GROUP)
    area, longest_k = L * S, S  # the dropout offsets' strides (the longest lengths, as forward's)
    q_first, L = sequence(cu_q, b, L, PACKED)
    k_first, S = sequence(cu_k, b, S, PACKED)
    diagonal = causal_diagonal(L, S, PACKED)
    cols = start + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, BLOCK_E)
    k_tile = load_rows(k + b * sk_b + kv * sk_h + k_first * sk_s, cols, sk_s, dims, S, E, BLOCK_E,
                       True)  # fmt: skip
    v_tile = load_rows(v + b * sv_b + kv * sv_h + k_first * sv_s, cols, sv_s, dims, S, E, BLOCK_E,
                       True)  # fmt: skip
    dk_acc = tl.zeros([BLOCK_N, BLOCK_E], tl.float32)
    dv_acc = tl.zeros([BLOCK_N, BLOCK_E], tl.float32)
    first, whole_from, whole_to, last = query_runs(start, L, S, diagonal, CAUSAL, MASK_KIND,
                                                    PACKED, BLOCK_M, BLOCK_N)  # fmt: skip
    for g in range(0, GROUP):
        h = kv * GROUP + g
        out_base = b * so_b + h * so_h + q_first * so_l
        if DESCRIPTORS:
            q_src, do_src = q, do
        else:
            q_src, do_src = q + b * sq_b + h * sq_h + q_first * sq_l, do + out_base * E
        q_row = (b * H + h) * L
        head_mask = mask + b * sm_b + h * sm_h
        dropout = (seed, drop_offset + (b * H + h) * area, longest_k, drop_p, drop_scale)
        dk_acc, dv_acc = _key_block_gradients(
            dk_acc, dv_acc, k_tile, v_tile, cols, q_src, q_row, do_src, out_base, lse, delta,
            head_mask, L, S, diagonal, sq_l, so_l, sm_l, sm_s, scale_log2, dropout,
            first, whole_from, E, CAUSAL, MASK_KIND, PRECISION, DROPOUT, BLOCK_M, BLOCK_E, True,
            DESCRIPTORS)  # fmt: skip
        dk_acc, dv_acc = _key_block_gradients(
            dk_acc, dv_acc, k_tile, v_tile, cols, q_src, q_row, do_src, out_base, lse, delta,
            head_mask, L, S, diagonal, sq_l, so_l, sm_l, sm_s, scale_log2, dropout,
            whole_from, whole_to, E, CAUSAL, MASK_KIND, PRECISION, DROPOUT, BLOCK_M, BLOCK_E, False,
            DESCRIPTORS)  # fmt: skip
        dk_acc, dv_acc = _key_block_gradients(
            dk_acc, dv_acc, k_tile, v_tile, cols, q_src, q_row, do_src, out_base, lse, delta,
            head_mask, L, S, diagonal, sq_l, so_l, sm_l, sm_s, scale_log2, dropout,
            whole_to, last, E, CAUSAL, MASK_KIND, PRECISION, DROPOUT, BLOCK_M, BLOCK_E, True,
            DESCRIPTORS)  # fmt: skip
    scale = scale_log2 * 0.6931471805599453
    out_at = (b * sd_b + kv * sd_h + (k_first + cols) * sd_s)[:, None] * E + dims[None, :]
    kv_mask = (cols[:, None] < S) & (dims[None, :] < E)
    tl.store(dk + out_at, (dk_acc * scale).to(dk.dtype.element_ty), mask=kv_mask)
    tl.store(dv + out_at, dv_acc.to(dv.dtype.element_ty), mask=kv_mask)


@jit
def _query_block_gradient(dq_acc, q_tile, do_tile, lse_log2, row_delta, rows, k_src, v_src,
                          kv_row, mask, L, S, diagonal, sk_s, sv_s, sm_l, sm_s, scale_log2,
                          dropout, lo, hi, E: tl.constexpr, CAUSAL: tl.constexpr,
                          MASK_KIND: tl.constexpr, PRECISION: tl.constexpr,
                          DROPOUT: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr,
                          MASKED: tl.constexpr, DESCRIPTORS: tl.constexpr):  # fmt: skip
    """dq_acc after the key blocks from `lo` to `hi`; DROPOUT as `_key_block_gradients`."""
    for begin in range(lo, hi, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        k_tile = load_block(k_src, kv_row, begin, sk_s, S, E, BLOCK_N, BLOCK_E, MASKED,
                            DESCRIPTORS)  # fmt: skip
        v_tile = load_block(v_src, kv_row, begin, sv_s, S, E, BLOCK_N, BLOCK_E, MASKED,
                            DESCRIPTORS)  # fmt: skip
        p = _probabilities(q_tile, k_tile, rows, cols, L, S, diagonal, mask, sm_l, sm_s,
                           scale_log2, lse_log2, CAUSAL, MASK_KIND, PRECISION, MASKED)  # fmt: skip
        dp = tl.dot(do_tile, tl.trans(v_tile), input_precision=PRECISION)
        if DROPOUT:
            seed, first, stride, drop_p, drop_scale = dropout
            keep = kept(seed, first, rows[:, None], cols[None, :], stride, drop_p)
            dp = tl.where(keep, dp * drop_scale, 0.0)
        ds = p * (dp - row_delta[:, None])
        dq_acc = tl.dot(ds.to(k_tile.dtype), k_tile, dq_acc, input_precision=PRECISION)
    return dq_acc


@jit(do_not_specialize=["L", "S", "H", "GROUP", "scale_log2", "seed", "drop_offset"])
def attention_dq(q, k, v, do, lse, delta, dq, mask, cu_q, cu_k, L, S, H, GROUP, scale_log2,
                 sq_b, sq_h, sq_l, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s,
                 sm_b, sm_h, sm_l, sm_s, seed, drop_offset, drop_p, drop_scale,
                 so_b, so_h, so_l, E: tl.constexpr, CAUSAL: tl.constexpr,
                 MASK_KIND: tl.constexpr, PACKED: tl.constexpr, PRECISION: tl.constexpr,
                 DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_E: tl.constexpr, DESCRIPTORS: tl.constexpr):  # fmt: skip
    """dq, do, lse and delta have their rows where the forward's o and lse have them (so_*); dq
    is returned already scaled by `scale`. The key blocks every query of the block sees whole
    run unmasked first, as in the forward. DESCRIPTORS: k and v are descriptors of their rows,
    as the forward's (flash.py)."""
    start = query_block(CAUSAL) * BLOCK_M
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    kv = h // GROUP
    dropout = (seed, drop_offset + bh * L * S, S, drop_p, drop_scale)  # as the forward's
    q_first, L = sequence(cu_q, b, L, PACKED)
    k_first, S = sequence(cu_k, b, S, PACKED)
    diagonal = causal_diagonal(L, S, PACKED)
    rows = start + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_E)
    q_tile = load_rows(q + b * sq_b + h * sq_h + q_first * sq_l, rows, sq_l, dims, L, E, BLOCK_E,
                       True)  # fmt: skip
    out_base = b * so_b + h * so_h + q_first * so_l
    do_tile = load_rows(do + out_base * E, rows, so_l * E, dims, L, E, BLOCK_E, True)
    lse_log2 = _row_values(lse + out_base, rows, so_l, L, True) * 1.4426950408889634
    row_delta = _row_values(delta + out_base, rows, so_l, L, True)
    if DESCRIPTORS:
        k_src, v_src = k, v
    else:
        k_src = k + b * sk_b + kv * sk_h + k_first * sk_s
        v_src = v + b * sv_b + kv * sv_h + k_first * sv_s
    kv_row = (b * (H // GROUP) + kv) * S
    head_mask = mask + b * sm_b + h * sm_h
    dq_acc = tl.zeros([BLOCK_M, BLOCK_E], tl.float32)
    whole, end = key_runs(start, L, S, diagonal, CAUSAL, MASK_KIND, PACKED, BLOCK_M, BLOCK_N)
    dq_acc = _query_block_gradient(dq_acc, q_tile, do_tile, lse_log2, row_delta, rows, k_src,
                                   v_src, kv_row, head_mask, L, S, diagonal, sk_s, sv_s, sm_l,
                                   sm_s, scale_log2, dropout, 0, whole, E, CAUSAL, MASK_KIND,
                                   PRECISION, DROPOUT, BLOCK_N, BLOCK_E, False,
                                   DESCRIPTORS)  # fmt: skip
    dq_acc = _query_block_gradient(dq_acc, q_tile, do_tile, lse_log2, row_delta, rows, k_src,
                                   v_src, kv_row, head_mask, L, S, diagonal, sk_s, sv_s, sm_l,
                                   sm_s, scale_log2, dropout, whole, end, E, CAUSAL, MASK_KIND,
                                   PRECISION, DROPOUT, BLOCK_N, BLOCK_E, True,
                                   DESCRIPTORS)  # fmt: skip
    scale = scale_log2 * 0.6931471805599453
    out_at = (out_base + rows * so_l)[:, None] * E + dims[None, :]
    q_mask = (rows[:, None] < L) & (dims[None, :] < E)
    tl.store(dq + out_at, (dq_acc * scale).to(dq.dtype.element_ty), mask=q_mask)
