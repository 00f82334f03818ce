"""Attention's backward, as three kernels that recompute the probabilities instead of storing
them: p = exp2(s - lse * log2(e)) from the forward's log-sum-exp.

- `attention_delta`: delta[m] = sum(dO[m] * O[m]), the row term of softmax's gradient;
- `attention_dkdv`: one program per block of keys of one (batch, key head) walks the query
  blocks that see it (from the diagonal on, where causal) of every query head of its group:
  dV += p^T dO, dK += ds^T Q with ds = p * (dO V^T - delta);
- `attention_dq`: one program per block of queries walks the keys it sees: dQ += ds K.

Each gradient is owned by one program, so nothing is added atomically and results repeat. The
sequences are batched or packed (sequence.py); a packed program past its sequence's end
stores nothing.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit
from .scores import scores
from .sequence import causal_diagonal, sequence

__all__ = ["attention_delta", "attention_dkdv", "attention_dq"]


@jit(do_not_specialize=["R"])
def attention_delta(o, do, delta, R, E: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_E: tl.constexpr):  # fmt: skip
    """o and do are contiguous (R, E), delta (R,) fp32: row r of each is one query and head."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_E)
    mask = (rows[:, None] < R) & (dims[None, :] < E)
    at = rows[:, None] * E + dims[None, :]
    product = tl.load(o + at, mask=mask, other=0).to(tl.float32) * tl.load(
        do + at, mask=mask, other=0
    ).to(tl.float32)
    tl.store(delta + rows, tl.sum(product, 1), mask=rows < R)


@jit
def _probabilities(s, lse_log2):
    """exp2(s - lse) per row, 0 for rows that saw no key (lse = -inf)."""
    shift = tl.where(lse_log2 == float("-inf"), 0.0, lse_log2)
    return tl.math.exp2(s - shift[:, None])


@jit(do_not_specialize=["L", "S", "H", "GROUP", "scale_log2"])
def attention_dkdv(q, k, v, do, lse, delta, dk, dv, mask, cu_q, cu_k, L, S, H, GROUP, scale_log2,
                   sq_b, sq_h, sq_l, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s,
                   sm_b, sm_h, sm_l, sm_s, so_b, so_h, so_l, sd_b, sd_h, sd_s,
                   E: tl.constexpr, CAUSAL: tl.constexpr, MASK_KIND: tl.constexpr,
                   PACKED: tl.constexpr, PRECISION: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr):  # fmt: skip
    """do, lse and delta have their rows where the forward's o and lse have them (so_*); dk and
    dv theirs (one a key and key head) at b * sd_b + kv * sd_h + n * sd_s, E elements each; dk
    is returned already scaled by `scale`."""
    start = tl.program_id(0) * BLOCK_N
    bkv = tl.program_id(1).to(tl.int64)
    hk = H // GROUP
    b = bkv // hk
    kv = bkv % hk
    q_first, L = sequence(cu_q, b, L, PACKED)
    k_first, S = sequence(cu_k, b, S, PACKED)
    diagonal = causal_diagonal(L, S, PACKED)
    cols = start + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, BLOCK_E)
    e_in = dims < E
    kv_mask = (cols[:, None] < S) & e_in[None, :]
    k_tile = tl.load(k + b * sk_b + kv * sk_h + (k_first + cols[:, None]) * sk_s + dims[None, :],
                     mask=kv_mask, other=0)  # fmt: skip
    v_tile = tl.load(v + b * sv_b + kv * sv_h + (k_first + cols[:, None]) * sv_s + dims[None, :],
                     mask=kv_mask, other=0)  # fmt: skip
    dk_acc = tl.zeros([BLOCK_N, BLOCK_E], tl.float32)
    dv_acc = tl.zeros([BLOCK_N, BLOCK_E], tl.float32)
    first = 0
    if CAUSAL:
        first = (tl.maximum(start - diagonal, 0) // BLOCK_M) * BLOCK_M
    last = L
    if PACKED:
        last = L if start < S else 0
    for g in range(0, GROUP):
        h = kv * GROUP + g
        q_base = q + b * sq_b + h * sq_h + q_first * sq_l
        out_base = b * so_b + h * so_h + q_first * so_l
        for begin in range(first, last, BLOCK_M):
            rows = begin + tl.arange(0, BLOCK_M)
            out_rows = out_base + rows * so_l
            q_mask = (rows[:, None] < L) & e_in[None, :]
            q_tile = tl.load(q_base + rows[:, None] * sq_l + dims[None, :], mask=q_mask, other=0)
            s = scores(q_tile, k_tile, rows, cols, L, S, diagonal, mask + b * sm_b + h * sm_h,
                       sm_l, sm_s, scale_log2, CAUSAL, MASK_KIND, PRECISION)  # fmt: skip
            lse_log2 = tl.load(lse + out_rows, mask=rows < L, other=0) * 1.4426950408889634
            p = _probabilities(s, lse_log2)
            do_tile = tl.load(do + out_rows[:, None] * E + dims[None, :], mask=q_mask, other=0)
            dv_acc = tl.dot(tl.trans(p.to(do_tile.dtype)), do_tile, dv_acc,
                            input_precision=PRECISION)  # fmt: skip
            dp = tl.dot(do_tile, tl.trans(v_tile), input_precision=PRECISION)
            row_delta = tl.load(delta + out_rows, mask=rows < L, other=0)
            ds = p * (dp - row_delta[:, None])
            dk_acc = tl.dot(tl.trans(ds.to(q_tile.dtype)), q_tile, dk_acc,
                            input_precision=PRECISION)  # fmt: skip
    scale = scale_log2 * 0.6931471805599453
    key_rows = b * sd_b + kv * sd_h + (k_first + cols) * sd_s
    out_at = key_rows[:, None] * E + dims[None, :]
    tl.store(dk + out_at, (dk_acc * scale).to(dk.dtype.element_ty), mask=kv_mask)
    tl.store(dv + out_at, dv_acc.to(dv.dtype.element_ty), mask=kv_mask)


@jit(do_not_specialize=["L", "S", "H", "GROUP", "scale_log2"])
def attention_dq(q, k, v, do, lse, delta, dq, mask, cu_q, cu_k, L, S, H, GROUP, scale_log2,
                 sq_b, sq_h, sq_l, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s,
                 sm_b, sm_h, sm_l, sm_s, so_b, so_h, so_l, E: tl.constexpr,
                 CAUSAL: tl.constexpr, MASK_KIND: tl.constexpr, PACKED: tl.constexpr,
                 PRECISION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_E: tl.constexpr):  # fmt: skip
    """dq, do, lse and delta have their rows where the forward's o and lse have them (so_*); dq
    is returned already scaled by `scale`."""
    start = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    kv = h // GROUP
    q_first, L = sequence(cu_q, b, L, PACKED)
    k_first, S = sequence(cu_k, b, S, PACKED)
    diagonal = causal_diagonal(L, S, PACKED)
    rows = start + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_E)
    e_in = dims < E
    q_mask = (rows[:, None] < L) & e_in[None, :]
    q_tile = tl.load(q + b * sq_b + h * sq_h + (q_first + rows[:, None]) * sq_l + dims[None, :],
                     mask=q_mask, other=0)  # fmt: skip
    out_rows = b * so_b + h * so_h + (q_first + rows) * so_l
    do_tile = tl.load(do + out_rows[:, None] * E + dims[None, :], mask=q_mask, other=0)
    lse_log2 = tl.load(lse + out_rows, mask=rows < L, other=0) * 1.4426950408889634
    row_delta = tl.load(delta + out_rows, mask=rows < L, other=0)
    k_base = k + b * sk_b + kv * sk_h + k_first * sk_s
    v_base = v + b * sv_b + kv * sv_h + k_first * sv_s
    dq_acc = tl.zeros([BLOCK_M, BLOCK_E], tl.float32)
    end = S
    if CAUSAL:
        end = tl.minimum(S, start + BLOCK_M + diagonal)
    if PACKED:
        end = end if start < L else 0
    for begin in range(0, end, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        kv_mask = (cols[:, None] < S) & e_in[None, :]
        k_tile = tl.load(k_base + cols[:, None] * sk_s + dims[None, :], mask=kv_mask, other=0)
        v_tile = tl.load(v_base + cols[:, None] * sv_s + dims[None, :], mask=kv_mask, other=0)
        s = scores(q_tile, k_tile, rows, cols, L, S, diagonal, mask + b * sm_b + h * sm_h, sm_l,
                   sm_s, scale_log2, CAUSAL, MASK_KIND, PRECISION)  # fmt: skip
        p = _probabilities(s, lse_log2)
        dp = tl.dot(do_tile, tl.trans(v_tile), input_precision=PRECISION)
        ds = p * (dp - row_delta[:, None])
        dq_acc = tl.dot(ds.to(k_tile.dtype), k_tile, dq_acc, input_precision=PRECISION)
    scale = scale_log2 * 0.6931471805599453
    out_at = out_rows[:, None] * E + dims[None, :]
    tl.store(dq + out_at, (dq_acc * scale).to(dq.dtype.element_ty), mask=q_mask)
