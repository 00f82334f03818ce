"""Attention backward (or forward) through Naiad and through Triton on one GPU, side by side.

    python bench/gpu/attention_backward.py TUTORIAL [--forward] [--cases TEXT] [--rounds 2]
                                           [--out DIR]

TUTORIAL is Triton's own `python/tutorials/06-fused-attention.py`, from a checkout (nothing is
fetched): its `_attention` autograd function, unmodified, is run once through Naiad (a process
that calls `naiad.install_as_triton()` before importing it) and once through the installed
Triton (a process of its own), one after the other on the same GPU. Per case (fp16, Z4 H32
N4096, D64 and D128, causal and not; `--cases` keeps the labels containing one of its
comma-separated words):

- the check first, at Z1 H2 N1024: dq, dk, dv and the output against float64 autograd of
  the same attention, relative error of each (a side over 2e-2 shows FAIL and is not timed);
- then `triton.testing.do_bench` (median) of `o.backward(do, retain_graph=True)` at the case's
  size, best of `--rounds`: the backward's two kernels (`_attn_bwd_preprocess`, `_attn_bwd`),
  in TFLOP/s as the tutorial counts them (2.5 times the forward's 4·Z·H·N²·D, halved when
  causal).

Printed: each side's TFLOP/s and Naiad / Triton (> 1: Naiad faster). The forward pass the
tutorial runs first is autotuned on both sides; its time is not counted. With `--forward`,
the forward pass is timed instead (without autograd; 4·Z·H·N²·D, halved when causal): the
tutorial's own host descriptors, which Naiad reads by tensor copies on Hopper.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from tutorial_sides import cell, load_tutorial, ratio, run_sides, write

CASES = [(d, causal) for d in (64, 128) for causal in (False, True)]
Z, H, N = 4, 32, 4096
TOL = 2e-2
DEVICE = "cuda"


def label(d: int, causal: bool) -> str:
    return f"D{d}{' causal' if causal else ''}"


def _errors(attention, torch, d: int, causal: bool) -> dict:
    """Relative errors of the output and the three gradients at Z1 H2 N1024 against float64
    autograd."""
    gen = torch.Generator(device=DEVICE).manual_seed(d + causal)
    shape = (1, 2, 1024, d)
    q, k, v, do = (
        torch.randn(shape, generator=gen, device=DEVICE, dtype=torch.float16) for _ in range(4)
    )
    sm_scale = 1 / math.sqrt(d)
    inputs = [x.clone().requires_grad_() for x in (q, k, v)]
    out = attention(*inputs, causal, sm_scale, False)
    out.backward(do)
    exact = [x.double().requires_grad_() for x in (q, k, v)]
    s = exact[0] @ exact[1].transpose(-1, -2) * sm_scale
    if causal:
        keep = torch.ones(1024, 1024, dtype=torch.bool, device=DEVICE).tril()
        s = s.masked_fill(~keep, float("-inf"))
    want = torch.softmax(s, dim=-1) @ exact[2]
    want.backward(do.double())
    pairs = [(out, want)] + [(x.grad, y.grad) for x, y in zip(inputs, exact)]
    names = ["o", "dq", "dk", "dv"]
    return {
        name: ((got.double() - ref).norm() / ref.norm()).item()
        for name, (got, ref) in zip(names, pairs)
    }


def side_main(tutorial: Path, side: str, cases, rounds: int, forward: bool) -> dict:
    """This process's side: {label: {"errors": ..., "tflops": ...}}."""
    module = load_tutorial(tutorial, side)
    import torch
    import triton

    results = {}
    for d, causal in cases:
        name = label(d, causal)
        # The forward's autotune key leaves out STAGE, so a config tuned for a non-causal call
        # (BLOCK_M < BLOCK_N, which the causal kernel's prune refuses) would be reused for the
        # causal one of the same size, on either side: each case tunes afresh.
        module._attn_fwd.cache.clear()
        try:
            errors = _errors(module.attention, torch, d, causal)
            row = {"errors": errors, "tflops": None}
            results[name] = row
            if not all(math.isfinite(e) and e < TOL for e in errors.values()):
                continue
            q, k, v = (
                torch.randn((Z, H, N, d), device=DEVICE, dtype=torch.float16).requires_grad_()
                for _ in range(3)
            )
            scale = 1 / math.sqrt(d)
            out = module.attention(q, k, v, causal, scale, False)
            if forward:
                q, k, v = (x.detach() for x in (q, k, v))

                def run(q=q, k=k, v=v, causal=causal, scale=scale):
                    with torch.no_grad():
                        module.attention(q, k, v, causal, scale, False)

            else:
                do = torch.randn_like(out)
                out.backward(do, retain_graph=True)  # compiles the backward

                def run(out=out, do=do):
                    out.backward(do, retain_graph=True)

            ms = min(triton.testing.do_bench(run, return_mode="median") for _ in range(rounds))
            flops = (1.0 if forward else 2.5) * 4 * Z * H * N * N * d * (0.5 if causal else 1.0)
            row["tflops"] = flops / ms * 1e-9
        except Exception as exc:  # a report: say what failed and go on
            results[name] = {"failure": f"{type(exc).__name__}: {exc}"[:400]}
        print(side, name, results[name], flush=True)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tutorial", type=Path, help="Triton's 06-fused-attention.py")
    parser.add_argument("--cases", default="", help="labels containing one of these words")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, help="write attention_backward.json here")
    parser.add_argument("--forward", action="store_true", help="time the forward pass instead")
    parser.add_argument("--side", choices=["naiad", "triton"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    words = [w.strip() for w in args.cases.split(",") if w.strip()]
    cases = [c for c in CASES if not words or any(w in label(*c) for w in words)]
    if args.side:
        print(json.dumps(side_main(args.tutorial, args.side, cases, args.rounds, args.forward)))
        return 0
    forwarded = ["--forward"] if args.forward else []
    results = run_sides(
        __file__,
        [str(args.tutorial), "--cases", args.cases, "--rounds", str(args.rounds), *forwarded],
    )
    which = "forward" if args.forward else "backward"
    print(f"\nattention {which}, fp16, Z{Z} H{H} N{N} (TFLOP/s)")
    print("| case | Naiad | Triton | Naiad / Triton | Naiad errors (o, dq, dk, dv) |")
    print("|---|---|---|---|---|")
    for case in cases:
        name = label(*case)
        ours, theirs = results["naiad"].get(name), results["triton"].get(name)
        errors = "-"
        if ours and "errors" in ours:
            errors = ", ".join(f"{e:.1e}" for e in ours["errors"].values())
        print(f"| {name} | {cell(ours)} | {cell(theirs)} | {ratio(ours, theirs)} | {errors} |")
    write(args.out, f"attention_{which}.json", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
