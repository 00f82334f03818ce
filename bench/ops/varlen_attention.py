"""naiad.ops.varlen_attention (packed sequences) against what torch offers for the same work,
forward and forward + backward, on the same tensors.

    python bench/ops/varlen_attention.py [--device cuda] [--quick]

Per case (dtype, sequences, heads, head dim, causal or not): self-attention of sequences of random
lengths (seeded) packed end to end. torch's sides: F.scaled_dot_product_attention called once per
sequence on views of the packed tensors, the same padded to the longest sequence with a boolean
mask (padding keys hidden), and on a GPU torch.nn.attention.varlen.varlen_attn. The outputs are
checked against each other first (padded rows dropped), then each side is timed with
naiad.testing.do_bench (median of its repetitions); ratio = torch time / Naiad time (> 1: Naiad
is faster).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("NAIAD_BACKEND", "auto")

import torch
import torch.nn.functional as F

import naiad.ops as ops
from naiad.testing import do_bench


def _per_sequence(q, k, v, cu, longest, causal):
    """Each sequence as a batch of one, (1, H, L, E): torch's fused kernels take four dims."""
    bounds = zip(cu.tolist(), cu[1:].tolist())
    heads = [t.transpose(0, 1)[None] for t in (q, k, v)]
    outputs = [F.scaled_dot_product_attention(*(t[:, :, a:b] for t in heads), is_causal=causal)
               for a, b in bounds]  # fmt: skip
    return torch.cat(outputs, 2)[0].transpose(0, 1)


def _padded(q, k, v, cu, longest, causal):
    """Packed -> (B, H, longest, E) with zeros after each sequence, attention under a mask that
    hides padding keys (and later keys where causal), then packed again."""
    lengths = cu.diff().tolist()
    B, (_, H, E) = len(lengths), q.shape
    tokens = torch.arange(longest, device=q.device)
    valid = tokens[None, :] < cu.diff()[:, None]
    keep = valid[:, None, None, :].expand(B, 1, longest, longest)
    if causal:
        keep = keep & torch.ones(longest, longest, dtype=torch.bool, device=q.device).tril()
    padded = []
    for t in (q, k, v):
        full = t.new_zeros(B, longest, H, E)
        full[valid] = t
        padded.append(full.transpose(1, 2))
    out = F.scaled_dot_product_attention(*padded, attn_mask=keep)
    return out.transpose(1, 2)[valid]


def _naiad(q, k, v, cu, longest, causal):
    return ops.varlen_attention(q, k, v, cu, cu, longest, longest, causal=causal)


def _torch_varlen(q, k, v, cu, longest, causal):
    from torch.nn.attention.varlen import varlen_attn

    return varlen_attn(
        q, k, v, cu, cu, longest, longest, window_size=(-1, 0) if causal else (-1, -1)
    )


def _case(dtype, count, H, E, causal, device, gen):
    lengths = torch.randint(64, 1025, (count,), generator=gen).tolist()
    cu = torch.tensor([0, *lengths], dtype=torch.int32).cumsum(0, dtype=torch.int32).to(device)
    q, k, v = (torch.randn(sum(lengths), H, E, generator=gen).to(device, dtype).requires_grad_()
               for _ in "qkv")  # fmt: skip
    grad = torch.randn(sum(lengths), H, E, generator=gen).to(device, dtype)
    sides = {"naiad": _naiad, "torch per sequence": _per_sequence, "torch padded": _padded}
    if device == "cuda":
        sides["torch varlen_attn"] = _torch_varlen
    mine = _naiad(q, k, v, cu, max(lengths), causal)
    for name, fn in sides.items():
        error = (fn(q, k, v, cu, max(lengths), causal).float() - mine.float()).abs().max().item()
        assert error < 2e-2, f"{name} differs by {error}"
    rows = {}
    for backward in (False, True):

        def run(fn, backward=backward):
            out = fn(q, k, v, cu, max(lengths), causal)
            if backward:
                torch.autograd.grad(out, (q, k, v), grad)

        rows[backward] = {name: do_bench(lambda f=fn, r=run: r(f)) for name, fn in sides.items()}
    return lengths, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(0)
    cases = [(8, 8, 64)] if args.quick else [(8, 8, 64), (8, 8, 128), (32, 16, 64)]
    dtypes = [torch.float16, torch.bfloat16] if args.device == "cuda" else [torch.float32]
    where = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print(f"# {where}, torch {torch.__version__}; ms (torch / naiad)")
    for dtype in dtypes:
        for count, H, E in cases:
            for causal in (False, True):
                lengths, rows = _case(dtype, count, H, E, causal, args.device, gen)
                name = (f"{str(dtype)[6:]} {count} seqs ({sum(lengths)} tokens) H{H} E{E}"
                        f"{' causal' if causal else ''}")  # fmt: skip
                for backward, times in rows.items():
                    mine = times.pop("naiad")
                    others = ", ".join(f"{side} {ms:.2f} ({ms / mine:.2f})"
                                       for side, ms in times.items())  # fmt: skip
                    kind = "fwd+bwd" if backward else "fwd"
                    print(f"{name:<44} {kind:<8} naiad {mine:.2f}, {others}", flush=True)


if __name__ == "__main__":
    main()
