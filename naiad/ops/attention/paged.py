"""Paged-KV decode attention: the one new query token of each sequence of a serving batch
against the keys and values of all its tokens, held in fixed-size pages of a shared cache.

    out = naiad.ops.paged_attention_decode(q, k_cache, v_cache, block_tables, seq_lens)

q is (num_seqs, num_heads, head_size); k_cache and v_cache are (num_blocks, block_size,
num_kv_heads, head_size), num_heads a multiple of num_kv_heads (query head h reads key/value
head h // (num_heads // num_kv_heads): grouped-query, multi-query or ordinary heads);
block_tables (num_seqs, max_blocks_per_seq) int32 lists each sequence's pages in order, and
seq_lens (num_seqs,) int32 its tokens: token t of sequence b is slot t % block_size of page
block_tables[b, t // block_size]. Entries of a row past the sequence's pages are not read.
The scale defaults to 1 / sqrt(head_size); alibi_slopes (num_heads,) float32 adds
slope * (t - (seq_len - 1)) to the scores of token t. fp32/fp16/bf16 (q and the caches alike),
any head size up to 256 (a power of two fills the tile; others are masked), any block size,
any strides (a unit stride along head_size is the fast one). fp32 products are tf32 on a GPU
where torch allows it (torch.backends.cuda.matmul.allow_tf32), as the other attention kernels'.
The output is (num_seqs, num_heads, head_size), contiguous, in q's dtype; a sequence of no
tokens gives zeros.

The kernels (paged_kernels.py) split each sequence's tokens into partitions of the device's
PARTITION tokens, a program each, so that a few long sequences still fill the GPU; where the
longest sequence fits one partition, one kernel writes the output and no combining kernel runs.
The longest is known on the host without reading the device: max_seq_len where given (a serving
engine passes it), else the lengths' maximum where they are on the CPU, else the block table's
capacity, max_blocks_per_seq * block_size. Seq_lens and the block table are checked where
they are on the CPU (lengths within the table's capacity and max_seq_len, pages within the
cache); on a GPU that read would wait for the device, so there they are the caller's promise.
No ATen operator takes this layout, so the switch registers nothing for it.
"""

from __future__ import annotations

import math

import torch

from ..allocate import empty
from ..device_kind import device_kind
from ..dtypes import Unsupported
from . import flash
from .paged_kernels import paged_combine, paged_decode
from .scores import LOG2E

__all__ = ["paged_attention_decode"]

# (device kind, fp32) -> rows (widest head block, BLOCK_N tokens a tile, PARTITION tokens a
# program, num_warps): the first row whose head block is at least the call's. A partition is a
# multiple of BLOCK_N. The GPU's partition is a serving engine's usual 512 tokens: a 4k-token
# context spreads over 8 programs per (sequence, head), an 8-sequence batch of 8 KV heads over
# 512. Decode reads memory and barely computes. The fp16/bf16 GPU rows are the fastest of
# bench/ops/paged_attention.py --sweep on an H200 (bench/RESULTS.md, 2026-11-30): E128 at 32
# keys and 4 warps (122 registers a thread at sm_90a) beat 64 keys at 8 warps (112) by 10-20 %
# in 11 of 12 cases; E256 at 64 keys and 4 warps beat every other tile by 10 % although it
# spills 16 bytes (255 registers). fp32's products are FMAs, not tensor cores, and hold far
# more: its tiles are the least-spilling of a compile for sm_90a (E128: 866 bytes at 64 keys
# and 4 warps, 214 at 32 keys and 8), not timed.
BLOCKS = {
    ("cuda", False): ((64, 64, 512, 4), (128, 32, 512, 4), (256, 64, 512, 4)),
    ("cuda", True): ((64, 32, 512, 4), (128, 32, 512, 8), (256, 16, 512, 8)),
    ("cpu", False): ((64, 64, 1024, 1), (256, 32, 1024, 1)),
    ("cpu", True): ((64, 64, 1024, 1), (256, 32, 1024, 1)),
}
# Elements of a program's query tile at most (its rows are query heads of one group, at least
# 16: the rows of the GPU's smallest tensor-core product): a wider group takes several programs,
# each reading the key/value tiles again. Compiled for sm_90a, fp16, 8 warps: E256 at 32 rows
# spills 32 bytes, at 16 none; E128 at 64 rows holds 222 registers a thread, at 32 140.
MAX_GROUP_TILE = 4096
# Partitions the combining kernel reads at a time.
COMBINED = 16


def _tiles(q, block_e: int) -> tuple[int, int, dict]:
    """(BLOCK_N, PARTITION, launch options) for q's device and dtype and a head block of
    `block_e`."""
    kind = device_kind(q.device)
    for widest, block_n, partition, warps in BLOCKS[(kind, q.dtype == torch.float32)]:
        if block_e <= widest:
            return block_n, partition, {} if kind == "cpu" else {"num_warps": warps}
    raise Unsupported(f"paged attention with a head block of {block_e}")


def _check_shapes(q, k_cache, v_cache, block_tables, seq_lens, alibi_slopes):
    """The ranks, shapes, dtypes and devices of the arguments, each error naming its argument."""
    if q.dim() != 3 or k_cache.dim() != 4:
        raise ValueError("q must be (num_seqs, num_heads, head_size) and k_cache (num_blocks, "
                         "block_size, num_kv_heads, head_size)")  # fmt: skip
    if v_cache.shape != k_cache.shape:
        raise ValueError(f"v_cache is {tuple(v_cache.shape)}, k_cache {tuple(k_cache.shape)}")
    seqs, heads, head_size = q.shape
    kv_heads = k_cache.shape[2]
    if k_cache.shape[3] != head_size:
        raise ValueError(f"k_cache's head_size is {k_cache.shape[3]}, q's {head_size}")
    if k_cache.shape[1] == 0:
        raise ValueError("k_cache's block_size is 0")
    if kv_heads == 0 or heads % kv_heads:
        raise ValueError(f"num_heads ({heads}) must be a multiple of num_kv_heads ({kv_heads})")
    if q.dtype not in flash.DTYPES:
        raise Unsupported(f"paged attention of {q.dtype}")
    if k_cache.dtype != q.dtype or v_cache.dtype != q.dtype:
        raise ValueError(f"the caches are {k_cache.dtype} and {v_cache.dtype}, q {q.dtype}")
    if head_size > flash.MAX_HEAD_DIM or head_size == 0:
        raise Unsupported(f"paged attention of head_size {head_size}")
    for name, t, rank in (("block_tables", block_tables, 2), ("seq_lens", seq_lens, 1)):
        if t.dtype != torch.int32 or t.dim() != rank or t.shape[0] != seqs:
            raise ValueError(f"{name} must be a {rank}-d int32 tensor of num_seqs ({seqs}) rows")
    if alibi_slopes is not None and (
        alibi_slopes.dtype != torch.float32 or alibi_slopes.shape != (heads,)
    ):
        raise ValueError(f"alibi_slopes must be a float32 tensor of num_heads ({heads}) slopes")
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache), ("block_tables", block_tables),
                    ("seq_lens", seq_lens), ("alibi_slopes", alibi_slopes)):  # fmt: skip
        if t is not None and t.device != q.device:
            raise ValueError(f"{name} is on {t.device}, q on {q.device}")


def _check_values(block_tables, seq_lens, num_blocks, block_size, max_seq_len):
    """Where they are on the CPU: each length within the table's capacity and max_seq_len,
    and each page a sequence reads within the cache."""
    capacity = block_tables.shape[1] * block_size
    if (seq_lens < 0).any() or (seq_lens > capacity).any():
        raise ValueError(f"seq_lens must lie in 0 .. {capacity} (the block table's capacity)")
    if max_seq_len is not None and (seq_lens > max_seq_len).any():
        raise ValueError(f"a sequence is longer than max_seq_len, {max_seq_len}")
    used = torch.arange(block_tables.shape[1]) < (seq_lens[:, None] + block_size - 1) // block_size
    pages = block_tables[used]
    if ((pages < 0) | (pages >= num_blocks)).any():
        raise ValueError(f"block_tables reads a page outside the cache's {num_blocks} blocks")


def _longest(block_tables, seq_lens, block_size, max_seq_len) -> int:
    """The longest sequence the grid must cover, known on the host: max_seq_len where given,
    the lengths' maximum where they are on the CPU, else the block table's capacity."""
    if max_seq_len is not None:
        return int(max_seq_len)
    if seq_lens.device.type == "cpu":
        return int(seq_lens.max()) if seq_lens.numel() else 0
    return block_tables.shape[1] * block_size


def paged_attention_decode(q, k_cache, v_cache, block_tables, seq_lens, *, scale=None,
                           alibi_slopes=None, max_seq_len=None):  # fmt: skip
    """Decode attention over a paged KV cache (module docstring). Not differentiable: it serves
    inference.

    Args:
        max_seq_len: at least every seq_lens entry, where the caller knows it: it sizes the
            grid (without it, on a GPU, the block table's capacity does).

    Raises:
        ValueError: for arguments of the wrong rank, shape, dtype or device, and (on the CPU)
            lengths or pages outside the block table or the cache.
        Unsupported: for dtypes other than fp32/fp16/bf16 and head sizes past 256.
    """
    _check_shapes(q, k_cache, v_cache, block_tables, seq_lens, alibi_slopes)
    num_blocks, block_size = k_cache.shape[:2]
    if q.device.type == "cpu":
        _check_values(block_tables, seq_lens, num_blocks, block_size, max_seq_len)
    seqs, heads, E = q.shape
    # the kernel steps through a table row and the lengths by one
    block_tables = block_tables if block_tables.stride(1) == 1 else block_tables.contiguous()
    seq_lens = seq_lens.contiguous()
    out = empty((seqs, heads, E), q.dtype, q.device)
    longest = _longest(block_tables, seq_lens, block_size, max_seq_len)
    if not out.numel():
        return out
    kv_heads = k_cache.shape[2]
    group = heads // kv_heads
    block_e = max(16, 1 << (E - 1).bit_length())
    block_g = min(max(16, MAX_GROUP_TILE // block_e), max(16, 1 << (group - 1).bit_length()))
    chunks = -(-group // block_g)
    block_n, partition, options = _tiles(q, block_e)
    parts = max(1, -(-longest // partition))
    split = parts > 1
    partials = (q, q, q)  # not read unless split
    if split:
        partials = (empty((seqs, heads, parts), torch.float32, q.device),
                    empty((seqs, heads, parts), torch.float32, q.device),
                    empty((seqs, heads, parts, E), torch.float32, q.device))  # fmt: skip
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    alibi = q if alibi_slopes is None else (alibi_slopes * LOG2E).contiguous()
    tf32 = q.dtype == torch.float32 and q.is_cuda and torch.backends.cuda.matmul.allow_tf32
    paged_decode[(seqs * kv_heads * chunks, parts)](
        q, k_cache, v_cache, block_tables, seq_lens, alibi, out, *partials, kv_heads, group,
        chunks, parts, block_tables.stride(0), scale * LOG2E, *q.stride(), *k_cache.stride(),
        *v_cache.stride(), E, block_size, alibi_slopes is not None, split,
        "tf32" if tf32 else "ieee", partition, block_g, block_n, block_e, **options,
    )  # fmt: skip
    if split:
        paged_combine[(seqs * heads,)](*partials, seq_lens, out, heads, parts, E, partition,
                                       COMBINED, block_e, **options)  # fmt: skip
    return out
