"""Memory-bound patterns beyond the tutorials through Naiad and through Triton on one GPU.

    python bench/gpu/patterns.py [--rounds 3]

The kernels of bench/gpu/pattern_kernels.py, one source through both compilers, timed as
bench/gpu/kernels.py times the tutorials (do_bench medians, interleaved, best of `--rounds`),
printed as GB/s of each and the ratio Naiad / Triton. Each output is checked first: equal to
Triton's where both compute it exactly (transposition, argmax, fp8 rounding, unpacking), against
a float64 reference for the sums, whose last bits depend on the order a compiler combines in
(Naiad's is Triton 3.8's; Triton 3.6 adds a thread's registers one after the other).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernels import check, side_by_side, through  # (bench/gpu/kernels.py, after the path is set)

KERNELS = Path(__file__).resolve().parent / "pattern_kernels.py"


def _same(name: str, got, want) -> None:
    """Naiad's output `got` equals `want` (Triton's, or an exact reference) element for element."""
    if not torch.equal(got, want):
        raise AssertionError(f"{name}: Naiad's output differs from the exact one")


def rows(rounds: int):
    """(label, timing) of each pattern, its outputs checked first (`pair`)."""
    kn, kt = through(KERNELS, "naiad"), through(KERNELS, "triton")

    def pair(name, launch, make, nbytes, verify):
        out_n, out_t = make(), make()
        launch(kn, out_n)
        launch(kt, out_t)
        torch.cuda.synchronize()
        verify(out_n, out_t)
        timing = side_by_side(lambda: launch(kn, out_n), lambda: launch(kt, out_t), nbytes, rounds)
        return name, timing

    x = torch.randn(8192, 1024, device="cuda")
    yield pair(
        "row cumsum f32 8192x1024",
        lambda k, y: k.row_cumsum[(8192,)](x, y, N=1024, num_warps=4),
        lambda: torch.empty_like(x),
        8 * x.numel(),
        lambda n, t: check("row cumsum", n, x.double().cumsum(1), 1e-5),
    )
    tall = torch.randn(16384, 4096, device="cuda")
    yield pair(
        "column sums f32 16384x4096",
        lambda k, y: k.column_sums[(64,)](tall, y, 16384, N=4096, BM=64, BN=64, num_warps=4),
        lambda: torch.empty(4096, device="cuda"),
        4 * tall.numel(),
        lambda n, t: check("column sums", n, tall.double().sum(0), 1e-5),
    )
    for dtype, short in ((torch.float32, "f32"), (torch.float16, "f16")):
        square = torch.randn(8192, 8192, device="cuda").to(dtype)
        yield pair(
            f"transpose {short} 8192x8192 (64x64 tiles)",
            lambda k, y, s=square: k.transpose[(128, 128)](s, y, 8192, 8192, B=64, num_warps=4),
            lambda s=square: torch.empty_like(s),
            2 * square.numel() * square.element_size(),
            lambda n, t, s=square: _same("transpose", n, s.t()),
        )
    yield pair(
        "row argmax f32 8192x1024",
        lambda k, y: k.row_argmax[(8192,)](x, y, N=1024, num_warps=4),
        lambda: torch.empty(8192, dtype=torch.int32, device="cuda"),
        4 * x.numel(),
        lambda n, t: _same("argmax", n.long(), x.argmax(1)),
    )
    n = 1 << 26
    flat = torch.randn(n, device="cuda")
    yield pair(
        "f32 -> fp8e4nv 2^26",
        lambda k, y: k.to_fp8[(n // 1024,)](flat, y, n, BLOCK=1024),
        lambda: torch.empty(n, dtype=torch.float8_e4m3fn, device="cuda"),
        5 * n,
        lambda got, want: _same("fp8 cast", got.view(torch.uint8), want.view(torch.uint8)),
    )
    yield pair(
        "unpack pairs f32 2^26 (reshape + split)",
        lambda k, y: k.unpack_pairs[(n // 1024,)](flat, y[0], y[1], BLOCK=1024),
        lambda: torch.empty(2, n // 2, device="cuda"),
        8 * n,
        lambda got, want: _same("unpack", got, flat.view(-1, 2).t()),
    )
    h = torch.randn(8192, 4096, device="cuda").half()
    w = torch.rand(4096, device="cuda").half()
    h64 = h.double()
    reference = h64 * torch.rsqrt((h64 * h64).mean(1, keepdim=True) + 1e-6) * w.double()
    yield pair(
        "rms norm f16 8192x4096",
        lambda k, y: k.rms_norm[(8192,)](h, w, y, N=4096, num_warps=8),
        lambda: torch.empty_like(h),
        4 * h.numel(),
        lambda got, want: check("rms norm", got, reference, 1e-3),
    )

    values = torch.randint(0, 64, (1 << 24,), device="cuda", dtype=torch.int32)

    def histogram(k, y):
        y.zero_()
        k.histogram[(values.numel() // 4096,)](values, y, BLOCK=4096, BINS=64)

    yield pair(
        "histogram i32 2^24, 64 bins",
        histogram,
        lambda: torch.empty(64, dtype=torch.int32, device="cuda"),
        4 * values.numel(),
        lambda got, want: _same("histogram", got, torch.bincount(values, minlength=64).int()),
    )
    yield pair(
        "sort rows f32 8192x1024",
        lambda k, y: k.sort_rows[(8192,)](x, y, N=1024, num_warps=4),
        lambda: torch.empty_like(x),
        8 * x.numel(),
        lambda got, want: _same("sort", got, x.sort(1).values),
    )
    idx = torch.randint(0, 1024, x.shape, device="cuda", dtype=torch.int32)
    yield pair(
        "gather within rows f32 8192x1024",
        lambda k, y: k.gather_rows[(8192,)](x, idx, y, N=1024, num_warps=4),
        lambda: torch.empty_like(x),
        12 * x.numel(),
        lambda got, want: _same("gather", got, x.gather(1, idx.long())),
    )
    q = torch.randint(-128, 128, (8192, 4096), device="cuda", dtype=torch.int8)
    scale = torch.rand(8192, device="cuda")
    yield pair(
        "dequantize int8 -> bf16 8192x4096",
        lambda k, y: k.dequantize[(8192,)](q, scale, y, N=4096, num_warps=8),
        lambda: torch.empty(q.shape, dtype=torch.bfloat16, device="cuda"),
        3 * q.numel(),
        lambda got, want: _same("dequantize", got, (q.float() * scale[:, None]).bfloat16()),
    )
    odd = flat[: n - 77]
    yield pair(
        "masked scale f32 2^26 - 77",
        lambda k, y: k.masked_scale[(-(-odd.numel() // 1024),)](odd, y, odd.numel(), BLOCK=1024),
        lambda: torch.empty_like(odd),
        8 * odd.numel(),
        lambda got, want: _same("masked scale", got, odd * 3.0),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"# {torch.cuda.get_device_name()}")
    print("| pattern | Naiad | Triton | Naiad / Triton |")
    print("|---|---|---|---|")
    for label, row in rows(args.rounds):
        print(
            f"| {label} | {row['naiad_gbs']:.0f} GB/s | {row['triton_gbs']:.0f} GB/s | "
            f"{row['ratio']:.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
