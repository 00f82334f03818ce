"""Register-blocked f32 micro-kernels on hot data: how near this CPU's FMA peak each shape and
operand layout runs, and what the CPU back end's own form of the dot reaches.

The tutorial matmul runs at 1.6-1.8x torch at one thread on Zen 5 (about 200 GFLOP/s, near that
core's peak) but at 0.65-0.78 on an Emerald Rapids Xeon, and this machine family exposes no
hardware counters. This script separates the micro-kernel from the memory around it: each
variant multiplies an MR x K block of A by a K x (16 NV) block of B into MR x 16 NV accumulators,
again and again over the same few kilobytes, so every load hits L1 or L2. The variants differ in:

- the register block, MR rows x NV vectors of 16 floats (8 x 2 is the back end's);
- A's layout: `rows` (row r at r * lda floats, the tile as `tl.load` leaves it) or `packed`
  (k-major, MR floats a step: one pointer, constant offsets);
- how often the accumulators are loaded from and stored to memory: after every `kc` steps of k
  (32 is the back end's, its BLOCK_K), or once (kc = K).

A loop of independent FMAs on registers gives the core's peak in the same process, so each row
reads as a fraction of it. LLVM compiles the IR here for the host with the back end's features.
Each variant is timed in pairs with the peak loop, and the median pair's ratio printed.
Run: `python bench/cpu/micro_kernel_probe.py [--k 256] [--pairs 9]`.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import time

import numpy as np

from naiad.backends.cpu import llvm_tools
from naiad.backends.cpu.target import host_target

_FLOAT16 = "<16 x float>"


def _splat(value: str, name: str) -> list[str]:
    return [
        f"  {name}.i = insertelement {_FLOAT16} poison, float {value}, i64 0",
        f"  {name} = shufflevector {_FLOAT16} {name}.i, {_FLOAT16} poison,"
        " <16 x i32> zeroinitializer",
    ]


def kernel_ir(rows: int, vectors: int, layout: str, kc: int) -> str:
    """`void probe(float* a, float* b, float* c, i64 k, i64 lda, i64 reps)`: `reps` times,
    C[rows x 16 vectors] += A[rows x k] B[k x 16 vectors], the accumulators loaded and stored
    every `kc` steps of k (kc 0: once a pass)."""
    ldb = 16 * vectors
    body = [
        "define void @probe(ptr noalias %a, ptr noalias %b, ptr noalias %c,"
        " i64 %k, i64 %lda, i64 %reps) {",
        "entry:",
        "  br label %rep",
        "rep:",
        "  %r = phi i64 [0, %entry], [%r.next, %rep.end]",
        "  br label %block",
        "block:",
        "  %k0 = phi i64 [0, %rep], [%k0.next, %block.end]",
    ]
    acc = [[f"%acc{i}_{j}" for j in range(vectors)] for i in range(rows)]
    for i in range(rows):
        for j in range(vectors):
            body.append(f"  %cp{i}_{j} = getelementptr float, ptr %c, i64 {i * ldb + 16 * j}")
            body.append(f"  %c{i}_{j} = load {_FLOAT16}, ptr %cp{i}_{j}, align 4")
    body += ["  br label %step", "step:", "  %kk = phi i64 [0, %block], [%kk.next, %step]"]
    for i in range(rows):
        for j in range(vectors):
            body.append(
                f"  {acc[i][j]} = phi {_FLOAT16} [%c{i}_{j}, %block], [{acc[i][j]}.n, %step]"
            )
    body.append("  %kg = add i64 %k0, %kk")
    for j in range(vectors):
        body += [
            f"  %bo{j} = mul i64 %kg, {ldb}",
            f"  %bi{j} = add i64 %bo{j}, {16 * j}",
            f"  %bp{j} = getelementptr float, ptr %b, i64 %bi{j}",
            f"  %b{j} = load {_FLOAT16}, ptr %bp{j}, align 4",
        ]
    for i in range(rows):
        if layout == "packed":
            body += [f"  %ao{i} = mul i64 %kg, {rows}", f"  %ai{i} = add i64 %ao{i}, {i}"]
        else:
            body += [f"  %ao{i} = mul i64 %lda, {i}", f"  %ai{i} = add i64 %ao{i}, %kg"]
        body += [
            f"  %ap{i} = getelementptr float, ptr %a, i64 %ai{i}",
            f"  %as{i} = load float, ptr %ap{i}, align 4",
            *_splat(f"%as{i}", f"%av{i}"),
        ]
        for j in range(vectors):
            body.append(
                f"  {acc[i][j]}.n = call {_FLOAT16} @llvm.fma.v16f32({_FLOAT16} %av{i}, "
                f"{_FLOAT16} %b{j}, {_FLOAT16} {acc[i][j]})"
            )
    trip = "%k" if kc == 0 else str(kc)
    body += [
        "  %kk.next = add i64 %kk, 1",
        f"  %kk.done = icmp eq i64 %kk.next, {trip}",
        "  br i1 %kk.done, label %block.end, label %step",
        "block.end:",
    ]
    for i in range(rows):
        for j in range(vectors):
            body.append(f"  store {_FLOAT16} {acc[i][j]}.n, ptr %cp{i}_{j}, align 4")
    body += [
        f"  %k0.next = add i64 %k0, {trip}",
        "  %k0.done = icmp uge i64 %k0.next, %k",
        "  br i1 %k0.done, label %rep.end, label %block",
        "rep.end:",
        "  %r.next = add i64 %r, 1",
        "  %r.done = icmp eq i64 %r.next, %reps",
        "  br i1 %r.done, label %exit, label %rep",
        "exit:",
        "  ret void",
        "}",
        f"declare {_FLOAT16} @llvm.fma.v16f32({_FLOAT16}, {_FLOAT16}, {_FLOAT16})",
    ]
    return "\n".join(body)


def peak_ir(chains: int = 24) -> str:
    """`void peak(float* c, i64 reps)`: `chains` independent FMA chains on registers."""
    body = ["define void @probe(ptr %c, i64 %reps) {", "entry:"]
    body += [f"  %x0_{i} = load {_FLOAT16}, ptr %c, align 4" for i in range(chains)]
    body += _splat("0.5", "%half")
    body += ["  br label %loop", "loop:", "  %r = phi i64 [0, %entry], [%r.next, %loop]"]
    body += [f"  %x{i} = phi {_FLOAT16} [%x0_{i}, %entry], [%y{i}, %loop]" for i in range(chains)]
    for i in range(chains):
        body.append(
            f"  %y{i} = call {_FLOAT16} @llvm.fma.v16f32("
            f"{_FLOAT16} %x{i}, {_FLOAT16} %half, {_FLOAT16} %x0_{i})"
        )
    body += [
        "  %r.next = add i64 %r, 1",
        "  %r.done = icmp eq i64 %r.next, %reps",
        "  br i1 %r.done, label %exit, label %loop",
        "exit:",
    ]
    total = "%y0"
    for i in range(1, chains):
        body.append(f"  %s{i} = fadd {_FLOAT16} {total}, %y{i}")
        total = f"%s{i}"
    body += [
        f"  store {_FLOAT16} {total}, ptr %c, align 4",
        "  ret void",
        "}",
        f"declare {_FLOAT16} @llvm.fma.v16f32({_FLOAT16}, {_FLOAT16}, {_FLOAT16})",
    ]
    return "\n".join(body)


class Compiled:
    """One IR module compiled for the host as the back end compiles kernels (llvm_tools.py: its
    target machine, pipeline and JIT), held alive with its function."""

    _count = 0

    def __init__(self, ir: str, signature) -> None:
        machine = host_target().machine
        module = llvm_tools.parse_module(ir, "probe")
        llvm_tools.optimize(module, machine)
        self.asm = llvm_tools.emit_assembly(module, machine)
        Compiled._count += 1
        self.jit = llvm_tools.create_jit(machine)
        self.library = llvm_tools.link_object(
            self.jit,
            f"probe{Compiled._count}",
            llvm_tools.emit_object(module, machine),
            {},
            ["probe"],
        )
        self.function = signature(self.library["probe"])


def seconds(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


class Peak:
    """The FMA loop of `peak_ir`, timed beside each variant: a pair's ratio stands where the
    core's clock moves between pairs (the Xeon's halved for seconds at a time)."""

    def __init__(self, flops: float) -> None:
        signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
        self.kernel = Compiled(peak_ir(), signature)
        self.seed = np.full(16, 0.5, np.float32)
        self.reps = int(flops / (24 * 32))
        self.flops = 24 * 32 * self.reps

    def rate(self) -> float:
        return self.flops / seconds(lambda: self.kernel.function(self.seed.ctypes.data, self.reps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=256, help="depth of one pass (default 256)")
    parser.add_argument("--pairs", type=int, default=9, help="peak, variant pairs (default 9)")
    parser.add_argument("--flops", type=float, default=5e8, help="work a timing (default 5e8)")
    parser.add_argument("--asm", help="print the assembly of this variant (e.g. 8x2-rows-32)")
    args = parser.parse_args()
    print(f"host: {host_target().cpu}, {args.k} k a pass, median of {args.pairs} pairs")
    peak = Peak(args.flops)
    for rows, vectors in VARIANTS:
        for layout in ("rows", "packed"):
            for kc in (32, 0):
                name = f"{rows}x{vectors}-{layout}-{kc or 'K'}"
                run = variant((rows, vectors, layout, kc), args, name == args.asm)
                ratios, rates = [], []
                for _ in range(args.pairs):
                    peak_rate, rate = peak.rate(), run()
                    ratios.append(rate / peak_rate)
                    rates.append(rate)
                spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
                median = statistics.median(ratios)
                print(
                    f"{name:20s} {median:5.2f} of peak ({spread}), {max(rates) / 1e9:6.1f} GFLOP/s"
                )


# MR x NV register blocks: the back end's 8 x 2, others with more multiply-adds per load, and
# one vector a row (each broadcast then folds into its multiply-add).
VARIANTS = ((8, 2), (12, 2), (14, 2), (6, 4), (4, 4), (8, 3), (16, 1), (24, 1), (28, 1))
# A's row stride in floats where it is read in place ("rows"): a page, as a 1024-wide matrix.
LDA = 1024


def variant(spec, args, show_asm: bool):
    """A function timing one micro-kernel variant (rows, vectors, layout, kc) on random
    operands, returning FLOP/s."""
    rows, vectors, layout, kc = spec
    signature = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3, *[ctypes.c_int64] * 3)
    kernel = Compiled(kernel_ir(rows, vectors, layout, kc), signature)
    if show_asm:
        print(kernel.asm)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(rows * (LDA if layout == "rows" else args.k)).astype(np.float32)
    b = rng.standard_normal(args.k * 16 * vectors).astype(np.float32)
    c = np.zeros(rows * 16 * vectors, np.float32)
    flops = 2 * rows * 16 * vectors * args.k
    reps = max(1, int(args.flops / flops))
    pointers = (a.ctypes.data, b.ctypes.data, c.ctypes.data)

    def run() -> float:
        return flops * reps / seconds(lambda: kernel.function(*pointers, args.k, LDA, reps))

    run._operands = (a, b, c)  # kept alive with the function
    return run


if __name__ == "__main__":
    main()
