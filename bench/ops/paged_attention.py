"""naiad.ops.paged_attention_decode (a decode step over a paged KV cache) against torch doing
the same work with what it has: gather each sequence's keys and values through its block table,
then F.scaled_dot_product_attention of the one query token under a mask of the padding.

    python bench/ops/paged_attention.py [--device cuda] [--quick] [--sweep]

Per case (dtype, sequences, query/key heads, head size, block size, context): every sequence
holds `context` tokens less a random few (so the last page is partial), in pages drawn at random
from a cache with as many pages as the batch needs. The outputs are checked against each other
first, then each side is timed with naiad.testing.do_bench (median of its repetitions); ratio =
torch time / Naiad time (> 1: Naiad is faster), and Naiad's rate of reading the keys and values
(GB/s: the bound of a decode step, the products being tiny). Both sides are given max_seq_len, as
a serving engine passes it. --sweep times Naiad's kernels again at each tile of `SWEEP` (BLOCK_N
keys, PARTITION tokens, warps) for the case's head size, in place of paged.BLOCKS' row.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("NAIAD_BACKEND", "auto")

import torch
import torch.nn.functional as F

import naiad.ops as ops
from naiad.ops.attention import paged
from naiad.ops.device_kind import device_kind
from naiad.testing import do_bench

# (BLOCK_N, PARTITION, num_warps) that --sweep tries on a GPU
SWEEP = [(32, 256, 4), (32, 512, 4), (64, 512, 4), (64, 512, 8), (64, 1024, 8), (128, 512, 8),
         (32, 512, 8), (16, 512, 4)]  # fmt: skip


def _batch(dtype, seqs, H, HK, E, block_size, context, device, gen):
    """(q, k_cache, v_cache, block_tables, seq_lens) of one decode step."""
    lengths = (context - torch.randint(0, block_size, (seqs,), generator=gen)).clamp(min=1)
    width = -(-context // block_size)
    pages = torch.randperm(seqs * width, generator=gen).to(torch.int32).view(seqs, width)
    cache = (seqs * width, block_size, HK, E)
    k_cache, v_cache = (torch.randn(cache, generator=gen).to(device, dtype) for _ in "kv")
    q = torch.randn(seqs, H, E, generator=gen).to(device, dtype)
    return q, k_cache, v_cache, pages.to(device), lengths.to(device, torch.int32)


def torch_paged(q, k_cache, v_cache, block_tables, seq_lens, max_seq_len):
    """Gather + SDPA: each sequence's tokens (padded to max_seq_len) through its table row, the
    padding masked, grouped heads through enable_gqa."""
    block_size = k_cache.shape[1]
    tokens = torch.arange(max_seq_len, device=q.device)
    slots = block_tables[:, tokens // block_size].long() * block_size + tokens % block_size
    k, v = (c.flatten(0, 1)[slots].transpose(1, 2) for c in (k_cache, v_cache))
    mask = (tokens[None, :] < seq_lens[:, None])[:, None, None, :]
    out = F.scaled_dot_product_attention(q[:, :, None], k, v, attn_mask=mask, enable_gqa=True)
    return out[:, :, 0]


def _case(dtype, seqs, H, HK, E, block_size, context, device, gen, sweep):
    arguments = _batch(dtype, seqs, H, HK, E, block_size, context, device, gen)
    mine = ops.paged_attention_decode(*arguments, max_seq_len=context)
    theirs = torch_paged(*arguments, context)
    error = (mine.float() - theirs.float()).abs().max().item()
    assert error < 2e-2, f"outputs differ by {error}"
    ms_mine = do_bench(lambda: ops.paged_attention_decode(*arguments, max_seq_len=context))
    ms_theirs = do_bench(lambda: torch_paged(*arguments, context))
    read = 2 * int(arguments[4].sum()) * HK * E * arguments[1].element_size()
    swept = _sweep(arguments, context) if sweep else []
    return ms_mine, ms_theirs, read / ms_mine / 1e6, swept


def _sweep(arguments, context):
    """Naiad's ms at each tile of SWEEP (one row standing for every head size)."""
    q = arguments[0]
    key = (device_kind(q.device), q.dtype == torch.float32)
    kept = paged.BLOCKS[key]
    times = []

    def run():
        return ops.paged_attention_decode(*arguments, max_seq_len=context)

    try:
        for block_n, partition, warps in SWEEP:
            paged.BLOCKS[key] = ((256, block_n, partition, warps),)
            times.append(do_bench(run))
    finally:
        paged.BLOCKS[key] = kept
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(0)
    # (sequences, H, HK, E, block size, context): a serving batch of mid-length contexts, a few
    # long ones (the partitions fill the GPU), one very long one, ordinary heads, wide groups
    cases = [(64, 32, 8, 128, 16, 1024), (8, 32, 8, 128, 16, 8192), (1, 32, 8, 128, 16, 32768),
             (128, 32, 32, 128, 16, 512), (32, 64, 8, 128, 32, 2048), (64, 16, 2, 64, 16, 2048),
             (16, 32, 8, 256, 16, 2048)]  # fmt: skip
    if args.device == "cpu":
        cases = [(8, 32, 8, 128, 16, 512), (2, 32, 8, 128, 16, 4096), (16, 16, 16, 64, 16, 256)]
    cases = cases[:2] if args.quick else cases
    dtypes = [torch.float16, torch.bfloat16] if args.device == "cuda" else [torch.float32]
    where = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print(f"# {where}, torch {torch.__version__}; ms, torch / naiad, naiad's GB/s of K and V")
    for dtype in dtypes:
        for case in cases:
            mine, theirs, rate, swept = _case(dtype, *case, args.device, gen, args.sweep)
            name = "{} {} seqs H{}/{} E{} pages of {} context {}".format(str(dtype)[6:], *case)
            print(f"{name:<52} naiad {mine:.3f}, torch gather+sdpa {theirs:.3f} "
                  f"({theirs / mine:.2f}), {rate:.0f} GB/s", flush=True)  # fmt: skip
            for (block_n, partition, warps), ms in zip(SWEEP, swept, strict=False):
                print(f"    BLOCK_N {block_n} PARTITION {partition} warps {warps}: {ms:.3f}")


if __name__ == "__main__":
    main()
