"""Paged-KV decode attention as the tests' reference, and the caches they read: each sequence's
keys and values gathered through its block table into one (tokens, kv_heads, head_size) run,
then softmax attention of its one query token in float64."""

import torch


def paged_reference(q, k_cache, v_cache, block_tables, seq_lens, scale, alibi_slopes=None):
    """(num_seqs, num_heads, head_size) float64: query head h reads key/value head
    h // (num_heads // num_kv_heads); a sequence of no tokens gives zeros."""
    seqs, heads, E = q.shape
    block_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    out = torch.zeros(seqs, heads, E, dtype=torch.float64)
    for b, n in enumerate(seq_lens.tolist()):
        if not n:
            continue
        pages = block_tables[b, : -(-n // block_size)].long()
        k, v = (c[pages].reshape(-1, kv_heads, E)[:n].double() for c in (k_cache, v_cache))
        k, v = (t.repeat_interleave(heads // kv_heads, 1) for t in (k, v))
        s = torch.einsum("he,nhe->hn", q[b].double(), k) * scale
        if alibi_slopes is not None:
            s = s + alibi_slopes.double()[:, None] * (torch.arange(n) - (n - 1))[None, :]
        out[b] = torch.einsum("hn,nhe->he", s.softmax(-1), v)
    return out


def paged_cache(lengths, block_size, kv_heads, E, dtype, gen, spare=3):
    """(k_cache, v_cache, block_tables, seq_lens) for sequences of `lengths`: each sequence's
    pages drawn at random from a cache with `spare` pages more than they need, the table one
    entry wider than the longest sequence needs. Nothing the kernels must not read holds a
    number: the spare pages and the slots past a sequence's last token are NaN, the table's
    unused entries -1."""
    counts = [-(-n // block_size) for n in lengths]
    num_blocks = sum(counts) + spare
    shape = (num_blocks, block_size, kv_heads, E)
    k_cache, v_cache = (torch.full(shape, float("nan"), dtype=dtype) for _ in "kv")
    block_tables = torch.full((len(lengths), max(counts, default=0) + 1), -1, dtype=torch.int32)
    order = torch.randperm(num_blocks, generator=gen).to(torch.int32)
    first = 0
    for b, (n, count) in enumerate(zip(lengths, counts, strict=True)):
        pages = order[first : first + count]
        first += count
        block_tables[b, :count] = pages
        for cache in (k_cache, v_cache):
            tokens = torch.rand(n, kv_heads, E, generator=gen, dtype=torch.float64) * 2 - 1
            cache.view(-1, kv_heads, E)[_slots(pages, n, block_size)] = tokens.to(dtype)
    return k_cache, v_cache, block_tables, torch.tensor(lengths, dtype=torch.int32)


def _slots(pages, n, block_size):
    """The rows of a (num_blocks * block_size, ...) view that hold a sequence's n tokens."""
    tokens = torch.arange(n)
    return pages.long()[tokens // block_size] * block_size + tokens % block_size
