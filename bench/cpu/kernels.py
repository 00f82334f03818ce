"""Tutorial kernels compiled for the CPU against PyTorch on the same machine, side by side.

    NAIAD_BACKEND=cpu python bench/cpu/kernels.py [--pairs 21] [--only add,softmax,...]
                                                  [--one-thread]

Method (issue 4): Naiad and the baseline alternate in one process (A B A B ...), at least 21
pairs after a warm-up, outputs preallocated on both sides where the baseline allows; printed:
the median of the per-pair ratios (baseline time / Naiad time: > 1 means Naiad is faster; for
the copy row, Naiad's bandwidth / the copy's) with the spread (min-max of the ratios), and the
median times.

torch's OpenMP threads spin for a while after each of its operations; interleaved with Naiad's
launches they would take the cores Naiad's workers need, which measures the interleaving rather
than either side. The script therefore asks OpenMP to wait passively (`OMP_WAIT_POLICY=PASSIVE`,
set before torch is imported; override it in the environment to see the other way).

`--one-thread` runs both sides on the calling thread alone (`NAIAD_NUM_THREADS=1`,
`torch.set_num_threads(1)`) and times them in that thread's CPU time: on a machine shared with
other jobs, it shows the work each side does, where wall time also shows who else had the cores.

Kernels: vector add f32 (2^24) against `torch.add(x, y, out=o)`, and its bandwidth (12 bytes
per element) against a 2-thread copy's (`o.copy_(x)`, 8 bytes per element) in the same run;
fused softmax f32 (4096 x 1024); layer norm forward f32 (4096 x 1024); the tutorial matmul f32
(1024^3), and on bf16 operands (`--only matmul_bf16`, against torch.matmul on bf16); tutorial 06's
attention forward, fp16, Z1 H8 N1024 D64, non-causal (`--only attention_fp16`, against
`scaled_dot_product_attention`), and naiad.ops' attention forward on bf16 and f32 tensors of that
shape (`--only attention_ops`); column sums of a 4096 x 4096 f32 matrix in 32 x 64 blocks
(`--only column_sum`, against `torch.sum(x, 0)`). The other kernels are the tutorials' own
source (examples/).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("NAIAD_BACKEND", "cpu")

import torch

import naiad

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(stem):
    spec = importlib.util.spec_from_file_location(f"bench_{stem}", EXAMPLES / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The clock of `pairs`: wall time, or the calling thread's CPU time with --one-thread.
CLOCK = {"now": time.perf_counter}


def pairs(naiad_fn, base_fn, count: int, scale: float = 1.0) -> dict:
    """ABAB timing; ratios scale · base/naiad per pair."""
    for _ in range(3):
        naiad_fn()
        base_fn()
    now = CLOCK["now"]
    ratios, a_times, b_times = [], [], []
    for _ in range(count):
        t0 = now()
        naiad_fn()
        t1 = now()
        base_fn()
        t2 = now()
        a_times.append(t1 - t0)
        b_times.append(t2 - t1)
        ratios.append(scale * (t2 - t1) / (t1 - t0))
    return {
        "ratio": statistics.median(ratios),
        "spread": (min(ratios), max(ratios)),
        "naiad_ms": statistics.median(a_times) * 1e3,
        "base_ms": statistics.median(b_times) * 1e3,
    }


def bench_add(count):
    add_kernel = example("01_vector_add").add_kernel
    n = 1 << 24
    x, y, o = torch.rand(n), torch.rand(n), torch.empty(n)
    grid = (naiad.cdiv(n, 4096),)

    def run():
        add_kernel[grid](x, y, o, n, BLOCK_SIZE=4096)

    run()
    assert torch.equal(o, x + y)
    return {
        "vector add f32 2^24 vs torch.add": pairs(run, lambda: torch.add(x, y, out=o), count),
        "vector add f32 2^24, bandwidth vs a copy's": pairs(
            run, lambda: o.copy_(x), count, scale=12 / 8
        ),
    }


def bench_softmax(count):
    module = example("02_fused_softmax")
    x = torch.randn(4096, 1024)
    y = torch.empty_like(x)
    threads = torch.get_num_threads()

    def run():
        module.softmax_kernel[(min(64 * threads, 4096),)](
            y, x, x.stride(0), y.stride(0), 4096, 1024, 1024, 1
        )

    run()
    torch.testing.assert_close(y, torch.softmax(x, 1))
    return {"softmax f32 4096x1024": pairs(run, lambda: torch.softmax(x, 1, out=y), count)}


def bench_layer_norm(count):
    module = example("05_layer_norm")
    m, n = 4096, 1024
    x, w, b = torch.randn(m, n), torch.rand(n), torch.rand(n)
    y, mean, rstd = torch.empty_like(x), torch.empty(m), torch.empty(m)

    def run():
        module._layer_norm_fwd_fused[(m,)](
            x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK_SIZE=1024
        )

    def base():
        torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5)

    run()
    torch.testing.assert_close(
        y, torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5), atol=1e-5, rtol=1e-5
    )
    return {"layer norm fwd f32 4096x1024": pairs(run, base, count)}


def bench_matmul(count):
    module = example("03_matmul")
    kernel = module.matmul_kernel.fn
    size = 1024
    a, b = torch.randn(size, size), torch.randn(size, size)
    c = torch.empty(size, size)
    bm, bn, bk = 64, 64, 32
    grid = (naiad.cdiv(size, bm) * naiad.cdiv(size, bn),)

    def run():
        kernel[grid](
            a,
            b,
            c,
            size,
            size,
            size,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            BLOCK_SIZE_M=bm,
            BLOCK_SIZE_N=bn,
            BLOCK_SIZE_K=bk,
            GROUP_SIZE_M=8,
            ACTIVATION="",
        )

    run()
    ref = a.double() @ b.double()
    assert ((c.double() - ref).norm() / ref.norm()) < 1e-3
    out = torch.empty(size, size)
    return {"matmul f32 1024^3": pairs(run, lambda: torch.matmul(a, b, out=out), count)}


def bench_matmul_bf16(count):
    """The tutorial matmul on bf16 operands (its fp32 accumulator, an fp16 output) against
    torch.matmul on the same bf16 operands."""
    module = example("03_matmul")
    kernel = module.matmul_kernel.fn
    size = 1024
    a, b = (torch.randn(size, size).to(torch.bfloat16) for _ in range(2))
    c = torch.empty(size, size, dtype=torch.float16)
    bm, bn, bk = 64, 64, 32
    grid = (naiad.cdiv(size, bm) * naiad.cdiv(size, bn),)
    strides = (*a.stride(), *b.stride(), *c.stride())

    def run():
        kernel[grid](
            a, b, c, size, size, size, *strides,
            BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, ACTIVATION="",
        )  # fmt: skip

    run()
    ref = a.double() @ b.double()
    assert ((c.double() - ref).norm() / ref.norm()) < 1e-3
    out = torch.empty(size, size, dtype=torch.bfloat16)
    return {"matmul bf16 1024^3": pairs(run, lambda: torch.matmul(a, b, out=out), count)}


def bench_attention_fp16(count):
    """Tutorial 06's attention forward, fp16, Z1 H8 N1024 D64, non-causal, against torch's
    `scaled_dot_product_attention` on the same tensors."""
    module = example("06_fused_attention")
    z, h, n, d = 1, 8, 1024, 64
    q, k, v = (torch.randn(z, h, n, d).to(torch.float16) for _ in range(3))
    scale = d**-0.5
    config = naiad.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_stages=2, num_warps=4)

    def run():
        module.attention(q, k, v, False, scale, config=config)

    out, _ = module.attention(q, k, v, False, scale, config=config)
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double())
    assert ((out.double() - ref).norm() / ref.norm()) < 2e-3
    sdpa = torch.nn.functional.scaled_dot_product_attention
    return {
        "attention fwd fp16 Z1 H8 N1024 D64": pairs(run, lambda: sdpa(q, k, v), count),
    }


def bench_attention_ops(count):
    """naiad.ops.scaled_dot_product_attention forward, Z1 H8 N1024 D64, non-causal, on bf16 and
    on f32 tensors, against torch's `scaled_dot_product_attention` on the same tensors."""
    import naiad.ops as ops

    sdpa = torch.nn.functional.scaled_dot_product_attention
    rows = {}
    for dtype, name, tolerance in ((torch.bfloat16, "bf16", 2e-2), (torch.float32, "f32", 1e-4)):
        q, k, v = (torch.randn(1, 8, 1024, 64).to(dtype) for _ in range(3))
        out = ops.scaled_dot_product_attention(q, k, v)
        ref = sdpa(q.double(), k.double(), v.double())
        assert ((out.double() - ref).norm() / ref.norm()) < tolerance
        rows[f"attention fwd {name} Z1 H8 N1024 D64 (naiad.ops)"] = pairs(
            lambda q=q, k=k, v=v: ops.scaled_dot_product_attention(q, k, v),
            lambda q=q, k=k, v=v: sdpa(q, k, v),
            count,
        )
    return rows


@naiad.jit
def column_sums(x_ptr, out_ptr, M, N, BLOCK_M: naiad.language.constexpr,
                BLOCK_N: naiad.language.constexpr):  # fmt: skip
    """out[n] = sum over m of x[m, n]: a band of BLOCK_N columns a program, BLOCK_M rows a step
    (the shape of a layer norm backward's weight gradient)."""
    tl = naiad.language
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    total = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        total += tl.sum(tl.load(x_ptr + rows[:, None] * N + cols[None, :]), axis=0)
    tl.store(out_ptr + cols, total)


def bench_column_sum(count):
    m = n = 4096
    x, out = torch.randn(m, n), torch.empty(n)

    def run():
        column_sums[(n // 64,)](x, out, m, n, 32, 64)

    run()
    torch.testing.assert_close(out, x.double().sum(0).float(), rtol=1e-4, atol=1e-3)
    return {"column sums f32 4096x4096 vs torch.sum(dim=0)": pairs(
        run, lambda: torch.sum(x, 0, out=out), count)}  # fmt: skip


BENCHES = {
    "add": bench_add,
    "softmax": bench_softmax,
    "layernorm": bench_layer_norm,
    "matmul": bench_matmul,
    "matmul_bf16": bench_matmul_bf16,
    "attention_fp16": bench_attention_fp16,
    "attention_ops": bench_attention_ops,
    "column_sum": bench_column_sum,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=21)
    parser.add_argument("--only", default=",".join(BENCHES))
    parser.add_argument("--one-thread", action="store_true", help="one thread, CPU time")
    args = parser.parse_args()
    if args.one_thread:
        os.environ["NAIAD_NUM_THREADS"] = "1"
        torch.set_num_threads(1)
        CLOCK["now"] = time.thread_time
    cpu = platform.processor() or platform.machine()
    print(
        f"# {time.strftime('%Y-%m-%d')} {cpu}, {os.cpu_count()} CPUs, torch "
        f"{torch.__version__} ({torch.get_num_threads()} threads), Python {sys.version.split()[0]}"
    )
    print("| kernel | baseline / Naiad (median) | spread | Naiad ms | baseline ms |")
    print("|---|---|---|---|---|")
    for name in args.only.split(","):
        for label, r in BENCHES[name](args.pairs).items():
            lo, hi = r["spread"]
            print(
                f"| {label} | {r['ratio']:.2f} | {lo:.2f}-{hi:.2f} | {r['naiad_ms']:.3f} | "
                f"{r['base_ms']:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
