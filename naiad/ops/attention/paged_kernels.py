"""The kernels of paged-KV decode attention (paged.py launches them): one query token per
sequence against keys and values held in fixed-size pages of a cache, found through the
sequence's row of the block table.

`paged_decode` is one program per (sequence, key/value head, chunk of the query heads that read
that head, partition of the sequence's tokens). The query heads of the chunk are the rows of a
[BLOCK_G, BLOCK_E] tile, so each key and value tile gathered from the cache serves all of them
(grouped-query attention reads a page once per group, not once per head); a group smaller than
16 (the rows of the GPU's smallest tensor-core product) is padded with masked rows. The keys of
the partition stream in tiles of BLOCK_N tokens with an online softmax in base 2 (a running
maximum and sum per row, the accumulator rescaled when the maximum grows). Token t of a
sequence lies at slot t % PAGE of page block_table[seq, t // PAGE]: each tile's rows are
gathered by address, so a tile may span pages (PAGE < BLOCK_N) or part of one (PAGE > BLOCK_N).
Tokens past the sequence's length are masked. With one partition (SPLIT False) a program writes
the output itself; otherwise it writes its partition's normalized output, maximum and sum
(fp32), and `paged_combine` (one program per (sequence, query head)) weighs each partition's
output by its share of the softmax's sum, sum_p * 2^(max_p - max), over the partitions the
sequence fills (a partition past its end stores nothing: without max_seq_len, a GPU's grid
covers the block table's whole capacity). A sequence of no tokens sums to 0 and gives zeros.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["paged_combine", "paged_decode"]


@jit
def _gather(cache, pages, slots, inside, dims, s_page, s_slot, s_dim, E: tl.constexpr):
    """The [BLOCK_N, BLOCK_E] tile of tokens at `slots` of `pages` (`cache` points at this
    program's head); tokens not `inside` the partition and dims past E read as 0."""
    rows = pages.to(tl.int64) * s_page + slots * s_slot
    where = cache + rows[:, None] + dims[None, :] * s_dim
    return tl.load(where, mask=inside[:, None] & (dims[None, :] < E), other=0)


@jit
def _scores(q_tile, k_tile, cols, inside, seq_len, slopes, scale_log2, ALIBI: tl.constexpr,
            PRECISION: tl.constexpr):  # fmt: skip
    """Scores of the query rows against one key tile, in base 2: q . k * scale (+ ALiBi's
    slope * (token - last token) per query head), -inf for tokens outside the partition."""
    s = tl.dot(q_tile, tl.trans(k_tile), input_precision=PRECISION) * scale_log2
    if ALIBI:
        distance = (cols - seq_len + 1).to(tl.float32)
        s = s + slopes[:, None] * distance[None, :]
    return tl.where(inside[None, :], s, float("-inf"))


@jit(do_not_specialize=["bt_stride"])
def paged_decode(q, k_cache, v_cache, block_tables, seq_lens, alibi, out, part_max, part_sum,
                 part_out, HK, GROUP, CHUNKS, PARTS, bt_stride, scale_log2, sq_s, sq_h, sq_d,
                 sk_b, sk_t, sk_h, sk_d, sv_b, sv_t, sv_h, sv_d, E: tl.constexpr,
                 PAGE: tl.constexpr, ALIBI: tl.constexpr, SPLIT: tl.constexpr,
                 PRECISION: tl.constexpr, PARTITION: tl.constexpr, BLOCK_G: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr):  # fmt: skip
    """Grid (sequences x HK x CHUNKS, PARTS). out is contiguous (sequences, HK * GROUP, E);
    part_max and part_sum (sequences, HK * GROUP, PARTS) and part_out (..., PARTS, E), fp32,
    are read only where SPLIT. `alibi` holds a slope per query head where ALIBI (log2(e)
    folded in)."""
    pid = tl.program_id(0).to(tl.int64)
    seq = pid // (HK * CHUNKS)
    kv = (pid // CHUNKS) % HK
    group_rows = (pid % CHUNKS) * BLOCK_G + tl.arange(0, BLOCK_G)
    row_in = group_rows < GROUP
    heads = kv * GROUP + group_rows
    dims = tl.arange(0, BLOCK_E)
    dim_in = dims < E
    q_where = q + seq * sq_s + heads[:, None] * sq_h + dims[None, :] * sq_d
    q_tile = tl.load(q_where, mask=row_in[:, None] & dim_in[None, :], other=0)
    slopes = 0.0
    if ALIBI:
        slopes = tl.load(alibi + heads, mask=row_in, other=0.0)
    seq_len = tl.load(seq_lens + seq)
    start = tl.program_id(1) * PARTITION
    end = tl.minimum(start + PARTITION, seq_len)
    table = block_tables + seq * bt_stride
    k_head = k_cache + kv * sk_h
    v_head = v_cache + kv * sv_h
    running_max = tl.full([BLOCK_G], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_E], tl.float32)
    for begin in range(start, end, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        inside = cols < end
        pages = tl.load(table + cols // PAGE, mask=inside, other=0)
        slots = cols % PAGE
        k_tile = _gather(k_head, pages, slots, inside, dims, sk_b, sk_t, sk_d, E)
        s = _scores(q_tile, k_tile, cols, inside, seq_len, slopes, scale_log2, ALIBI, PRECISION)
        new_max = tl.maximum(running_max, tl.max(s, 1))
        p = tl.math.exp2(s - new_max[:, None])
        rescale = tl.math.exp2(running_max - new_max)
        v_tile = _gather(v_head, pages, slots, inside, dims, sv_b, sv_t, sv_d, E)
        acc = tl.dot(p.to(v_tile.dtype), v_tile, acc * rescale[:, None], input_precision=PRECISION)
        total = total * rescale + tl.sum(p, 1)
        running_max = new_max
    result = acc / tl.where(total == 0, 1.0, total)[:, None]
    rows = seq * HK * GROUP + heads
    keep = row_in[:, None] & dim_in[None, :]
    if SPLIT:  # a partition past the sequence's end stores nothing: paged_combine skips it
        part = rows * PARTS + tl.program_id(1)
        filled = row_in & (start < seq_len)
        tl.store(part_out + part[:, None] * E + dims[None, :], result, mask=keep & filled[:, None])
        tl.store(part_max + part, running_max, mask=filled)
        tl.store(part_sum + part, total, mask=filled)
    else:
        tl.store(
            out + rows[:, None] * E + dims[None, :], result.to(out.dtype.element_ty), mask=keep
        )


@jit(do_not_specialize=["PARTS"])
def paged_combine(part_max, part_sum, part_out, seq_lens, out, H, PARTS, E: tl.constexpr,
                  PARTITION: tl.constexpr, BLOCK_P: tl.constexpr,
                  BLOCK_E: tl.constexpr):  # fmt: skip
    """Grid (sequences x H,): the output row of one (sequence, query head) from the partitions
    its sequence fills, BLOCK_P at a time, with a running maximum across them."""
    row = tl.program_id(0).to(tl.int64)
    seq_len = tl.load(seq_lens + row // H)
    filled = (seq_len + PARTITION - 1) // PARTITION
    dims = tl.arange(0, BLOCK_E)
    dim_in = dims < E
    running_max = tl.max(tl.full([BLOCK_P], float("-inf"), tl.float32), 0)
    total = tl.sum(tl.zeros([BLOCK_P], tl.float32), 0)
    acc = tl.zeros([BLOCK_E], tl.float32)
    for first in range(0, filled, BLOCK_P):
        parts = first + tl.arange(0, BLOCK_P)
        part_in = parts < filled
        where = row * PARTS + parts
        maxima = tl.load(part_max + where, mask=part_in, other=float("-inf"))
        sums = tl.load(part_sum + where, mask=part_in, other=0.0)
        outs = tl.load(part_out + where[:, None] * E + dims[None, :],
                       mask=part_in[:, None] & dim_in[None, :], other=0.0)  # fmt: skip
        new_max = tl.maximum(running_max, tl.max(maxima, 0))
        shift = tl.where(new_max == float("-inf"), 0.0, new_max)
        weights = tl.where(part_in, sums * tl.math.exp2(maxima - shift), 0.0)
        rescale = tl.math.exp2(running_max - shift)
        acc = acc * rescale + tl.sum(weights[:, None] * outs, 0)
        total = total * rescale + tl.sum(weights, 0)
        running_max = new_max
    result = acc / tl.where(total == 0, 1.0, total)
    tl.store(out + row * E + dims, result.to(out.dtype.element_ty), mask=dim_in)
