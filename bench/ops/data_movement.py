"""naiad.ops' copies by index against torch eager, where rows or matrices are short: gather and
index_select along each kind of dim, flip, triu/tril of one large and of many small matrices,
one_hot, on a GPU or the CPU.

    PYTHONPATH=$PWD python bench/ops/data_movement.py [--device cuda] [--pairs 9] [--only ...]

These are the shapes where a tile of one row had left programs of a few elements (gather along
the last dim: a program an element; row_blocks.py). Each case's result is compared with torch's
first; timing as bench/ops/cpu_ops.py's (alternating batches of calls, the median of the
per-pair ratios torch time / Naiad time: > 1 means Naiad is faster). On the CPU the operands
are 16 times smaller.
"""

from __future__ import annotations

import argparse
import os
import platform

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # bench/cpu/kernels.py says why
os.environ.setdefault("NAIAD_CPU_TIERING", "off")  # CPU kernels timed compiled, never interpreted

import cpu_ops  # bench/ops/, the script's directory, is first on sys.path
import torch
import torch.nn.functional as F

import naiad.ops as ops


def cases(device: str) -> dict:
    """name -> (Naiad's call, torch's call) on shared operands."""
    g = torch.Generator().manual_seed(0)
    s = 1 if device == "cuda" else 4  # each side of the CPU's operands a quarter

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g).to(device, dtype)

    def randint(high, *shape):
        return torch.randint(0, high, shape, generator=g).to(device)

    rows = randn(8192 // s, 1024 // s)
    picks = randint(1024 // s, 8192 // s, 64 // s)
    square = randn(4096 // s, 4096 // s)
    small = randn(4096 // s, 32, 32)
    table = randn(32000 // s, 1024 // s, dtype=torch.bfloat16)
    tokens = randint(32000 // s, 4096 // s)
    labels = randint(10, 65536 // s)
    return {
        "gather last dim": (
            lambda: ops.gather(rows, 1, picks),
            lambda: torch.gather(rows, 1, picks),
        ),
        "index_select dim 0": (
            lambda: ops.index_select(table, 0, tokens),
            lambda: torch.index_select(table, 0, tokens),
        ),
        "index_select last": (
            lambda: ops.index_select(rows, 1, picks[0]),
            lambda: torch.index_select(rows, 1, picks[0]),
        ),
        "flip last dim": (lambda: ops.flip(square, (1,)), lambda: torch.flip(square, (1,))),
        "flip dim 0": (lambda: ops.flip(square, (0,)), lambda: torch.flip(square, (0,))),
        "triu large": (lambda: ops.triu(square, 1), lambda: torch.triu(square, 1)),
        "tril 32x32 batch": (lambda: ops.tril(small), lambda: torch.tril(small)),
        "one_hot 10": (lambda: ops.one_hot(labels, 10), lambda: F.one_hot(labels, 10)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    chosen = set(filter(None, args.only.split(",")))
    where = (
        torch.cuda.get_device_name()
        if args.device == "cuda"
        else f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    )
    print(f"# {where}, torch {torch.__version__}")
    print(f"{'op':<20} {'torch/naiad':>11} {'naiad ms':>9} {'torch ms':>9}")
    for name, (ours, theirs) in cases(args.device).items():
        if chosen and name not in chosen:
            continue
        if not torch.equal(ours(), theirs()):
            print(f"{name:<20} differs from torch", flush=True)
            continue
        ratio, mine, base = cpu_ops.measure(ours, theirs, args.pairs)
        print(f"{name:<20} {ratio:>11.2f} {mine * 1e3:>9.3f} {base * 1e3:>9.3f}", flush=True)


if __name__ == "__main__":
    main()
