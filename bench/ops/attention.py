"""naiad.ops.scaled_dot_product_attention against torch's (its flash kernel on a GPU), forward
and forward + backward, on the same tensors.

    python bench/ops/attention.py [--device cuda] [--quick]

Per case (dtype, batch x heads x sequence x head dim, causal or not): the outputs are checked
against each other first, then each side is timed with naiad.testing.do_bench (median of its
repetitions) and reported in ms and TFLOP/s (4 * B * H * L * S * E flops forward, 2.5 times that
for the backward, halved where causal), with the ratio torch time / Naiad time (> 1: Naiad is
faster).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("NAIAD_BACKEND", "auto")

import torch
import torch.nn.functional as F

import naiad.ops as ops
from naiad.testing import do_bench


def _flops(B, H, L, E, causal, backward):
    forward = 4 * B * H * L * L * E / (2 if causal else 1)
    return forward * (3.5 if backward else 1.0)


def _case(dtype, B, H, L, E, causal, device):
    q, k, v = (torch.randn(B, H, L, E, device=device, dtype=dtype, requires_grad=True)
               for _ in "qkv")  # fmt: skip
    grad = torch.randn(B, H, L, E, device=device, dtype=dtype)
    mine = ops.scaled_dot_product_attention(q, k, v, is_causal=causal)
    theirs = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    error = (mine.float() - theirs.float()).abs().max().item()
    assert error < 2e-2, f"outputs differ by {error}"
    rows = []
    for backward in (False, True):

        def run(fn, backward=backward):
            out = fn(q, k, v, is_causal=causal)
            if backward:
                torch.autograd.grad(out, (q, k, v), grad)

        ms_mine = do_bench(lambda r=run: r(ops.scaled_dot_product_attention))
        ms_theirs = do_bench(lambda r=run: r(F.scaled_dot_product_attention))
        tflops = _flops(B, H, L, E, causal, backward) / 1e9
        rows.append((backward, ms_mine, ms_theirs, tflops / ms_mine, tflops / ms_theirs))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    shapes = [(4, 16, 1024, 64), (4, 16, 1024, 128)]
    if not args.quick:
        shapes += [(2, 16, 4096, 64), (2, 16, 4096, 128)]
    dtypes = [torch.float16, torch.bfloat16] if args.device == "cuda" else [torch.float32]
    where = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print(f"# {where}, torch {torch.__version__}")
    print(f"{'case':<34} {'pass':<8} {'torch/naiad':>11} {'naiad ms':>9} {'torch ms':>9} "
          f"{'naiad TF/s':>10} {'torch TF/s':>10}")  # fmt: skip
    for dtype in dtypes:
        for B, H, L, E in shapes:
            for causal in (False, True):
                name = f"{str(dtype)[6:]} {B}x{H}x{L}x{E}{' causal' if causal else ''}"
                for backward, mine, theirs, tf_mine, tf_theirs in _case(
                    dtype, B, H, L, E, causal, args.device
                ):
                    kind = "fwd+bwd" if backward else "fwd"
                    times = f"{theirs / mine:>11.2f} {mine:>9.3f} {theirs:>9.3f}"
                    rates = f"{tf_mine:>10.1f} {tf_theirs:>10.1f}"
                    print(f"{name:<34} {kind:<8} {times} {rates}", flush=True)


if __name__ == "__main__":
    main()
