"""Dots on narrow operands on the CPU: a 1024³ matmul on int8 (int32 accumulator) and on fp8
(e5m2, e4m3fn; f32 accumulator), one thread in thread CPU time.

    NAIAD_BACKEND=cpu python bench/cpu/narrow_dots.py [--rounds 15] [--size 1024]

The kernel is the tutorial matmul's shape (64 × 64 blocks of C, BLOCK_K 32, the accumulator
carried through the K loop), one program per block of C. Each value is checked exactly (int8)
or against float64 (fp8). Baselines: `torch._int_mm` on the int8 operands; for fp8, which
torch's CPU build does not multiply, torch.matmul on the same values in bf16 (each fp8 value is
one). Times are the minimum and median of `--rounds` calls each, Naiad and torch alternated.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ["NAIAD_NUM_THREADS"] = "1"
os.environ.setdefault("NAIAD_BACKEND", "cpu")

import torch

import naiad
import naiad.language as tl


@naiad.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, ACC: tl.constexpr, BM: tl.constexpr,
           BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    pid = tl.program_id(0)
    pm, pn = pid // (N // BN), pid % (N // BN)
    om, on, ok = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + om[:, None] * K + (k + ok)[None, :])
        b = tl.load(b_ptr + (k + ok)[:, None] * N + on[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + om[:, None] * N + on[None, :], acc)


def timed(naiad_fn, base_fn, rounds: int) -> tuple[list[float], list[float]]:
    ours, theirs = [], []
    for _ in range(rounds):
        start = time.thread_time()
        naiad_fn()
        ours.append(time.thread_time() - start)
        start = time.thread_time()
        base_fn()
        theirs.append(time.thread_time() - start)
    return ours, theirs


def case(dtype: torch.dtype, size: int, rounds: int) -> str:
    """One row: `dtype` operands, checked, then timed."""
    integer = dtype == torch.int8
    gen = torch.Generator().manual_seed(0)
    if integer:
        a, b = (torch.randint(-128, 128, (size, size), generator=gen, dtype=dtype) for _ in "ab")
    else:
        a, b = (torch.randn(size, size, generator=gen).to(dtype) for _ in "ab")
    c = torch.empty(size, size, dtype=torch.int32 if integer else torch.float32)
    acc = tl.int32 if integer else tl.float32
    grid = ((size // 64) * (size // 64),)

    def run():
        matmul[grid](a, b, c, size, size, size, ACC=acc, BM=64, BN=64, BK=32)

    run()
    exact = a.double() @ b.double()
    if integer:
        assert torch.equal(c.long(), exact.long())
        base_a, base_b = a, b
        base = lambda: torch._int_mm(base_a, base_b)  # noqa: E731
    else:
        assert ((c.double() - exact).norm() / exact.norm()) < 1e-6
        base_a, base_b = a.to(torch.bfloat16), b.to(torch.bfloat16)
        base = lambda: torch.matmul(base_a, base_b)  # noqa: E731
    ours, theirs = timed(run, base, rounds)
    return (
        f"| {str(dtype).removeprefix('torch.')} {size}^3 | {min(ours) * 1e3:.2f} / "
        f"{statistics.median(ours) * 1e3:.2f} | {min(theirs) * 1e3:.2f} / "
        f"{statistics.median(theirs) * 1e3:.2f} |"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--size", type=int, default=1024)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| operands | Naiad ms, min / median | torch ms, min / median |")
    print("|---|---|---|")
    for dtype in (torch.int8, torch.float8_e5m2, torch.float8_e4m3fn):
        print(case(dtype, args.size, args.rounds), flush=True)


if __name__ == "__main__":
    main()
