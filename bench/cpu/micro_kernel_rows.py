"""The matmul micro-kernel's rows (MR) side by side: 8 against 12, one thread, one process.

    python bench/cpu/micro_kernel_rows.py [--rounds 21] [--no-bf16]

Issue 18: the CPU back end's micro-kernel (naiad/backends/cpu/codegen/lower_matmul.py) takes
tiles of MR rows x 2 vectors; `tile_rows` chooses MR from the host's CPU model (for f32
multiply-adds 12 on Intel's AVX-512 server cores and Zen 5, 8 elsewhere; 8 for the bf16 and
int8 dot instructions' tiles). This script compiles the tutorial matmul (examples/03_matmul.py),
1024^3, with MR 8 and with MR 12, whatever the model would choose, at 64x64x32 and 128x128x32
tiles, on f32 operands and, unless --no-bf16, on bf16 ones (the tutorial's fp16 output), and
times every build and torch.matmul on the same operands alternately: each round runs every
build once, each followed by torch on its dtype, in an order rotated each round. Printed at
the end: the CPU (its model name and LLVM's, with the rows `tile_rows` gives f32 there), then
per build the tile rows taken (and the edge's), the median of the per-round ratios torch /
Naiad (> 1: Naiad is faster) with their spread, and the median times.

Conditions, as bench/cpu/kernels.py --one-thread: both sides on the calling thread alone
(NAIAD_NUM_THREADS=1, torch.set_num_threads(1)), timed in that thread's CPU time; OpenMP
waits passively. Every build is compiled afresh (NAIAD_ALWAYS_COMPILE, a private cache
folder, every launch compiled before it runs), MR forced by replacing `tile_rows` during its
compile alone (`fit_rows` may still cut MR to divide M). bf16 dots run on AVX512-BF16's
`vdpbf16ps` where the CPU has it, else widened to f32; AMX is turned off (NAIAD_CPU_AMX=0, for
the whole process: f32 dots never use it) so that they run on the micro-kernel. About 10 s on
one core of a Zen 5 at the default 21 rounds (the 8 compiles 2 s of it).
"""

from __future__ import annotations

import argparse
import atexit
import importlib.util
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.update(
    NAIAD_BACKEND="cpu",
    NAIAD_NUM_THREADS="1",
    NAIAD_ALWAYS_COMPILE="1",
    NAIAD_CPU_TIERING="always-compile",
    NAIAD_CPU_AMX="0",
    NAIAD_CACHE_DIR=tempfile.mkdtemp(prefix="naiad-rows-"),
)

import torch

import naiad
from naiad.backends.cpu.codegen import lower_matmul
from naiad.backends.cpu.target import host_target

atexit.register(shutil.rmtree, os.environ["NAIAD_CACHE_DIR"], ignore_errors=True)
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "03_matmul.py"
SIZE = 1024
TILES = ((64, 64, 32), (128, 128, 32))
ROWS = (8, 12)


def matmul_kernel():
    """A fresh copy of the tutorial's kernel: each build compiles its own."""
    spec = importlib.util.spec_from_file_location(f"rows_{time.monotonic_ns()}", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.matmul_kernel.fn


def build(rows: int, tile, a, b, c):
    """The tutorial matmul compiled with tiles of at most `rows` rows: its launch, and the
    rows its tiles took (and the edge's, where they leave one)."""
    kernel = matmul_kernel()
    bm, bn, bk = tile
    grid = (naiad.cdiv(SIZE, bm) * naiad.cdiv(SIZE, bn),)
    strides = (*a.stride(), *b.stride(), *c.stride())

    def run():
        kernel[grid](
            a, b, c, SIZE, SIZE, SIZE, *strides,
            BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, ACTIVATION="",
        )  # fmt: skip

    chosen, tile_rows, fit_rows = [], lower_matmul.tile_rows, lower_matmul.fit_rows

    def fit_and_record(blocking, m):
        fitted = fit_rows(blocking, m)
        edge = m % fitted.rows
        chosen.append(f"{fitted.rows} (edge {edge})" if edge else str(fitted.rows))
        return fitted

    lower_matmul.tile_rows = lambda triple, packed: rows
    lower_matmul.fit_rows = fit_and_record
    try:
        run()  # compiles (NAIAD_CPU_TIERING=always-compile) before it runs
    finally:
        lower_matmul.tile_rows, lower_matmul.fit_rows = tile_rows, fit_rows
    ref = a.double() @ b.double()
    error = float((c.double() - ref).norm() / ref.norm())
    assert error < 1e-3, (rows, tile, error)
    assert chosen, "the dot did not take the micro-kernel"
    return run, sorted(set(chosen))


def operands(dtype, generator):
    a, b = (torch.randn(SIZE, SIZE, generator=generator).to(dtype) for _ in range(2))
    c = torch.empty(SIZE, SIZE, dtype=torch.float32 if dtype == torch.float32 else torch.float16)
    out = torch.empty(SIZE, SIZE, dtype=dtype)
    return a, b, c, lambda: torch.matmul(a, b, out=out)


def builds(dtypes) -> dict:
    """label -> (Naiad's launch, torch's, the rows taken), every build compiled here."""
    generator = torch.Generator().manual_seed(0)
    table = {}
    for name, dtype in dtypes:
        a, b, c, base = operands(dtype, generator)
        for tile in TILES:
            for rows in ROWS:
                start = time.perf_counter()
                run, taken = build(rows, tile, a, b, c)
                label = f"{name} {'x'.join(map(str, tile))} MR {rows}"
                print(f"compiled {label} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
                table[label] = (run, base, taken)
    return table


def measure(table: dict, rounds: int) -> dict:
    """Per build: its times, torch's after it, and their ratios, over `rounds` rounds."""
    now = time.thread_time
    labels = list(table)
    samples = {label: ([], [], []) for label in labels}
    for _, (run, base, _) in table.items():  # warm-up
        run()
        base()
    for r in range(rounds):
        for label in labels[r % len(labels) :] + labels[: r % len(labels)]:
            run, base, _ = table[label]
            t0 = now()
            run()
            t1 = now()
            base()
            t2 = now()
            naiad_s, base_s, ratios = samples[label]
            naiad_s.append(t1 - t0)
            base_s.append(t2 - t1)
            ratios.append((t2 - t1) / (t1 - t0))
    return samples


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--no-bf16", action="store_true", help="f32 operands only")
    args = parser.parse_args()
    torch.set_num_threads(1)
    dtypes = [("f32", torch.float32)]
    if not args.no_bf16:
        dtypes.append(("bf16", torch.bfloat16))
    table = builds(dtypes)
    samples = measure(table, args.rounds)
    host = host_target()
    print(
        f"# {time.strftime('%Y-%m-%d')} {cpu_name()} (LLVM: {host.cpu}; rows it chooses: "
        f"{lower_matmul.tile_rows(host.triple, False)}), {os.cpu_count()} CPUs, one thread, "
        f"CPU time, "
        f"{args.rounds} rounds, torch {torch.__version__}"
    )
    print("| tutorial matmul 1024^3 | tile rows taken | torch / Naiad (median) | spread "
          "| Naiad ms | torch ms |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for label, (naiad_s, base_s, ratios) in samples.items():
        taken = ", ".join(table[label][2])
        print(
            f"| {label} | {taken} | {statistics.median(ratios):.2f} | "
            f"{min(ratios):.2f}-{max(ratios):.2f} | {statistics.median(naiad_s) * 1e3:.2f} | "
            f"{statistics.median(base_s) * 1e3:.2f} |"
        )


if __name__ == "__main__":
    main()
