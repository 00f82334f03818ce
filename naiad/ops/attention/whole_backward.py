"""Attention's backward by whole blocks (the problems whole_blocks.py's forward takes): dK/dV
and dQ as backward.py computes them, without its guards but at the last block of a length.

Every tile is read and every gradient written through host tensor descriptors of the tensors'
heads (B * heads, length, E), so on Hopper each loop's operand tiles are tensor copies into
rings of shared buffers, and the products are asynchronous wgmma; a block past a head's end
reads zeros there and its store drops those rows. The probabilities are recomputed in base 2
as p = exp2(s * scale * log2(e) - lse * log2(e)), one multiply-add per score. Each walk runs
its whole blocks unmasked, then its last block where the block does not divide the length:
dQ hides the keys from S on; dK/dV reads the lse and delta of the queries from L on as 0
(those queries, read as zeros, then add nothing). Causal (top left, L <= S) splits each walk
further: the blocks on the diagonal, where a key past its query is hidden, and those seen
whole.

- `attention_dkdv_whole`: one program per block of BLOCK_N keys of one (batch, key head) walks
  the query blocks of BLOCK_M that see it, of every query head of its group: dV += p^T dO,
  dK += ds^T Q with ds = p * (dO V^T - delta). dp^T = V dO^T is taken before p^T's dV
  product: wgmma are issued in program order, so where dV (which reads p^T) came first, dp^T
  waited for the exponentials; now ptxas issues it among them.
- `attention_dq_whole`: one program per block of BLOCK_M queries of one (batch, head) walks the
  key blocks its queries see: dQ += ds K.

Or the dK/dV walk adds each query block's dQ itself (`DQ_ADDED`), as dQ^T = K^T dS^T from the
tiles it holds, into an fp32 sum by block atomics: on Hopper one bulk tensor reduction per
step, which the copy engine does beside the products (backends/nvidia/passes/
bulk_reductions.py); `attention_dq_rounded` then rounds the sum into dq. Five products per
(query, key) block pair instead of seven, for the sum's traffic: flash.py says where it wins.

HALF (head dims above whole_tiles.HALVES_ABOVE): each program holds the gradients of half the
head dims (a walk adding dQ adds that half of it), the grid's third axis saying which half, so
that its accumulators are a 128-wide head's. Its scores and dp need the whole head dim: each is
two chained products, one over this program's half, one over the other's.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit
from .sequence import query_block
from .whole_blocks import DIAGONAL, END, WHOLE

__all__ = ["attention_dkdv_whole", "attention_dq_rounded", "attention_dq_whole"]


@jit
def _row_values(rows, at, queries, L, BLOCK_M: tl.constexpr, HIDE: tl.constexpr):
    """The BLOCK_M values of a per-query tensor (lse, delta) from row `at`; past WHOLE those of
    the queries from L on read as 0 (`_query_step`)."""
    if HIDE == WHOLE:
        values = tl.load(rows + at + tl.arange(0, BLOCK_M))
    else:
        values = tl.load(rows + at + tl.arange(0, BLOCK_M), mask=queries < L, other=0.0)
    return values


@jit
def _parts(desc, head, row, part, ROWS: tl.constexpr, WIDTH: tl.constexpr,
           HALF: tl.constexpr):  # fmt: skip
    """(this program's part, the other part) of the [ROWS, head dim] block at `row` of `head`:
    where HALF, the halves of WIDTH dims from `part` * WIDTH and from the other half's first;
    else the whole block twice (the other then unread)."""
    mine = desc.load([head, row, part * WIDTH]).reshape(ROWS, WIDTH)
    if HALF:
        return mine, desc.load([head, row, (1 - part) * WIDTH]).reshape(ROWS, WIDTH)
    return mine, mine


@jit
def _scores(a, b, a_other, b_other, HALF: tl.constexpr):
    """a b^T over the whole head dim: where HALF, a and b hold one half of it and a_other,
    b_other the other."""
    product = tl.dot(a, b.T)
    if HALF:
        product = tl.dot(a_other, b_other.T, product)
    return product


@jit
def _query_step(dk_acc, dv_acc, keys, values, q_desc, do_desc, lse, delta, dq_desc, head, key,
                begin, part, L, scale_log2, WIDTH: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, HIDE: tl.constexpr, DQ_ADDED: tl.constexpr,
                HALF: tl.constexpr):  # fmt: skip
    """dk_acc and dv_acc after the BLOCK_M queries from `begin` of query head `head`, the
    keys' first being `key`; `keys` and `values` are the key block's parts (`_parts`). HIDE
    (whole_blocks.WHOLE, DIAGONAL, END): past WHOLE, the block may pass L, where q and dO read
    zeros and lse and delta are read as 0, so those queries add nothing (p^T = 1 against a zero
    dO, ds^T = 0); DIAGONAL hides the keys past each query. DQ_ADDED: these queries' dQ from
    this key block (its dims of this program's part), scaled, is added into `dq_desc`'s fp32
    block by a block atomic (a bulk tensor reduction on Hopper)."""
    k_tile, k_other = keys
    v_tile, v_other = values
    q_tile, q_other = _parts(q_desc, head, begin, part, BLOCK_M, WIDTH, HALF)
    queries = begin + tl.arange(0, BLOCK_M)
    at = head * L + begin
    lse_log2 = _row_values(lse, at, queries, L, BLOCK_M, HIDE) * 1.4426950408889634
    s_t = _scores(k_tile, q_tile, k_other, q_other, HALF)
    do_tile, do_other = _parts(do_desc, head, begin, part, BLOCK_M, WIDTH, HALF)
    dp_t = _scores(v_tile, do_tile, v_other, do_other, HALF)  # before dV's (module doc)
    p_t = tl.math.exp2(s_t * scale_log2 - lse_log2[None, :])
    if HIDE == DIAGONAL:
        key_rows = key + tl.arange(0, BLOCK_N)
        p_t = tl.where(key_rows[:, None] <= queries[None, :], p_t, 0.0)
    row_delta = _row_values(delta, at, queries, L, BLOCK_M, HIDE)
    dv_acc = tl.dot(p_t.to(do_tile.dtype), do_tile, dv_acc)
    ds_t = p_t * (dp_t - row_delta[None, :])
    dk_acc = tl.dot(ds_t.to(q_tile.dtype), q_tile, dk_acc)
    if DQ_ADDED:  # as dQ^T = K^T dS^T, whose operands are both in shared memory for wgmma
        dq_t = tl.dot(tl.trans(k_tile), ds_t.to(k_tile.dtype)) * (scale_log2 * 0.6931471805599453)
        dq_desc.atomic_add([head, begin, part * WIDTH], tl.trans(dq_t).reshape(1, BLOCK_M, WIDTH))
    return dk_acc, dv_acc


@jit
def _query_blocks(dk_acc, dv_acc, keys, values, q_desc, do_desc, lse, delta, dq_desc, head, key,
                  lo, hi, part, L, scale_log2, WIDTH: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, HIDE: tl.constexpr, DQ_ADDED: tl.constexpr,
                  HALF: tl.constexpr):  # fmt: skip
    """dk_acc and dv_acc after the query blocks from `lo` to `hi` (`_query_step`)."""
    for begin in tl.range(lo, hi, BLOCK_M):
        dk_acc, dv_acc = _query_step(dk_acc, dv_acc, keys, values, q_desc, do_desc, lse, delta,
                                     dq_desc, head, key, begin, part, L, scale_log2, WIDTH,
                                     BLOCK_M, BLOCK_N, HIDE, DQ_ADDED, HALF)  # fmt: skip
    return dk_acc, dv_acc


@jit
def attention_dkdv_whole(q_desc, k_desc, v_desc, do_desc, lse, delta, dk_desc, dv_desc, dq_desc,
                         L, S, H, GROUP, scale_log2, E: tl.constexpr, CAUSAL: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         DQ_ADDED: tl.constexpr = False,
                         HALF: tl.constexpr = False):  # fmt: skip
    """q, dO (and lse, delta, row by row) are of (B * H, L, E), k, v, dk, dv of (B * H //
    GROUP, S, E), in blocks of [1, BLOCK_M, E] and [1, BLOCK_N, E] (E // 2 wide where HALF:
    the grid's third axis then says which half of the head dims a program's gradients take);
    BLOCK_M divides BLOCK_N; dk comes out scaled by `scale`. DQ_ADDED: dq_desc, fp32 of q's
    shape, gets dQ added (`_query_step`); else it is not read (None)."""
    WIDTH: tl.constexpr = E // 2 if HALF else E
    key = tl.program_id(0) * BLOCK_N
    bkv = tl.program_id(1)
    part = tl.program_id(2) if HALF else 0  # (a constant 0 where whole: no coordinate to add)
    keys = _parts(k_desc, bkv, key, part, BLOCK_N, WIDTH, HALF)
    values = _parts(v_desc, bkv, key, part, BLOCK_N, WIDTH, HALF)
    dk_acc = tl.zeros([BLOCK_N, WIDTH], tl.float32)
    dv_acc = tl.zeros([BLOCK_N, WIDTH], tl.float32)
    first_head = bkv // (H // GROUP) * H + bkv % (H // GROUP) * GROUP
    whole = L - L % BLOCK_M
    after = key + BLOCK_N if CAUSAL else 0  # the first query block seen whole
    for g in range(0, GROUP):
        head = first_head + g
        if CAUSAL:
            diagonal_end = tl.minimum(key + BLOCK_N, L)
            dk_acc, dv_acc = _query_blocks(dk_acc, dv_acc, keys, values, q_desc, do_desc, lse,
                                           delta, dq_desc, head, key, key, diagonal_end, part, L,
                                           scale_log2, WIDTH, BLOCK_M, BLOCK_N, DIAGONAL,
                                           DQ_ADDED, HALF)  # fmt: skip
        dk_acc, dv_acc = _query_blocks(dk_acc, dv_acc, keys, values, q_desc, do_desc, lse, delta,
                                       dq_desc, head, key, after, whole, part, L, scale_log2,
                                       WIDTH, BLOCK_M, BLOCK_N, WHOLE, DQ_ADDED,
                                       HALF)  # fmt: skip
        if (whole < L) & (whole >= after):  # the last query block, which BLOCK_M does not fill
            dk_acc, dv_acc = _query_step(dk_acc, dv_acc, keys, values, q_desc, do_desc, lse,
                                         delta, dq_desc, head, key, whole, part, L, scale_log2,
                                         WIDTH, BLOCK_M, BLOCK_N, END, DQ_ADDED,
                                         HALF)  # fmt: skip
    scale = scale_log2 * 0.6931471805599453
    at = [bkv, key, part * WIDTH]
    dk_desc.store(at, (dk_acc * scale).to(dk_desc.dtype).reshape(1, BLOCK_N, WIDTH))
    dv_desc.store(at, dv_acc.to(dv_desc.dtype).reshape(1, BLOCK_N, WIDTH))


@jit
def _key_step(dq_acc, queries, grads, lse_log2, row_delta, k_desc, v_desc, kv_head, first,
              begin, part, S, scale_log2, WIDTH: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, HIDE: tl.constexpr, HALF: tl.constexpr):  # fmt: skip
    """dq_acc after the key block at `begin` of key head `kv_head`; `queries` and `grads` are
    the query block's and its dO's parts (`_parts`). HIDE: DIAGONAL hides the keys past each
    query (the queries from `first` on), END the keys from S on."""
    k_tile, k_other = _parts(k_desc, kv_head, begin, part, BLOCK_N, WIDTH, HALF)
    v_tile, v_other = _parts(v_desc, kv_head, begin, part, BLOCK_N, WIDTH, HALF)
    s = _scores(queries[0], k_tile, queries[1], k_other, HALF)
    p = tl.math.exp2(s * scale_log2 - lse_log2[:, None])
    if HIDE != WHOLE:
        keys = begin + tl.arange(0, BLOCK_N)
        if HIDE == DIAGONAL:
            query_rows = first + tl.arange(0, BLOCK_M)
            visible = keys[None, :] <= query_rows[:, None]
        else:
            visible = (keys < S)[None, :]
        p = tl.where(visible, p, 0.0)
    dp = _scores(grads[0], v_tile, grads[1], v_other, HALF)
    ds = p * (dp - row_delta[:, None])
    return tl.dot(ds.to(k_tile.dtype), k_tile, dq_acc)


@jit
def attention_dq_whole(q_desc, k_desc, v_desc, do_desc, lse, delta, dq_desc, L, S, H, GROUP,
                       scale_log2, E: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, HALF: tl.constexpr = False):  # fmt: skip
    """The descriptors and HALF as `attention_dkdv_whole`'s; BLOCK_N divides BLOCK_M; dq comes
    out scaled by `scale`."""
    WIDTH: tl.constexpr = E // 2 if HALF else E
    first = query_block(CAUSAL) * BLOCK_M
    bh = tl.program_id(1)
    part = tl.program_id(2) if HALF else 0  # (a constant 0 where whole: no coordinate to add)
    kv_head = bh // H * (H // GROUP) + bh % H // GROUP
    queries = _parts(q_desc, bh, first, part, BLOCK_M, WIDTH, HALF)
    grads = _parts(do_desc, bh, first, part, BLOCK_M, WIDTH, HALF)
    query_rows = first + tl.arange(0, BLOCK_M)
    rows = bh * L + query_rows
    lse_log2 = tl.load(lse + rows, mask=query_rows < L, other=0.0) * 1.4426950408889634
    row_delta = tl.load(delta + rows, mask=query_rows < L, other=0.0)
    dq_acc = tl.zeros([BLOCK_M, WIDTH], tl.float32)
    whole = first if CAUSAL else S - S % BLOCK_N
    for begin in tl.range(0, whole, BLOCK_N):
        dq_acc = _key_step(dq_acc, queries, grads, lse_log2, row_delta, k_desc, v_desc, kv_head,
                           first, begin, part, S, scale_log2, WIDTH, BLOCK_M, BLOCK_N, WHOLE,
                           HALF)  # fmt: skip
    if CAUSAL:
        for begin in tl.range(first, first + BLOCK_M, BLOCK_N):
            dq_acc = _key_step(dq_acc, queries, grads, lse_log2, row_delta, k_desc, v_desc,
                               kv_head, first, begin, part, S, scale_log2, WIDTH, BLOCK_M,
                               BLOCK_N, DIAGONAL, HALF)  # fmt: skip
    elif whole < S:  # the last key block, which BLOCK_N does not fill
        dq_acc = _key_step(dq_acc, queries, grads, lse_log2, row_delta, k_desc, v_desc, kv_head,
                           first, whole, part, S, scale_log2, WIDTH, BLOCK_M, BLOCK_N, END,
                           HALF)  # fmt: skip
    scale = scale_log2 * 0.6931471805599453
    dq_desc.store([bh, first, part * WIDTH],
                  (dq_acc * scale).to(dq_desc.dtype).reshape(1, BLOCK_M, WIDTH))  # fmt: skip


@jit
def attention_dq_rounded(dq_sum, dq, n, BLOCK: tl.constexpr):
    """dq = dq_sum (fp32, summed by the dK/dV walk with DQ_ADDED) in dq's type, BLOCK of the n
    elements a program."""
    at = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = at < n
    tl.store(dq + at, tl.load(dq_sum + at, mask=inside).to(dq.dtype.element_ty), mask=inside)
