"""Tensor-core kernels through Naiad and through Triton on one GPU, side by side (issue 14).

    python bench/gpu/tensor_cores.py [--quick] [--only matmul,attention] [--cases TEXT]
                                     [--rounds 3] [--out DIR] [--budget SECONDS] [--list]

Rows: tutorial 03's matmul for f16, bf16 (4096³, 8192³), f16 M=16 N=K=8192, f32 operands (tf32
dots) and fp8 e4m3 (4096³, 8192³), and an int8 matmul of the same tiling (int32 accumulator,
tensor_core_kernels.py), each with every config of tables.MATMUL_CONFIGS (tutorial 03's GPU
tilings) and the best of them; attention forward, tutorial 06's `_attn_fwd` and a plain
pointer-based kernel (tensor_core_kernels.py), fp16, Z4 H32 N4096, D64 and D128, causal and not,
with the configs of tables.ATTENTION_CONFIGS and the best of them. `--quick`: f16 4096³ with
the three large matmul tiles, and both attention kernels at N1024, D64 and D128, non-causal,
two configs each (a few minutes with its compiles).

Method, as bench/gpu/kernels.py's: the same source (its `naiad` imports swapped for Triton's in
Triton's copies) launched with the same config, sizes and preallocated outputs through Naiad,
through Triton forced to `mma.sync` (DISABLE_MMA_V3=1 while it compiles, tc_bench/measure.py)
and through Triton as it is; every output, poisoned first, checked against a float64 reference
before any timing (a row that fails shows FAIL and is not timed); then
`triton.testing.do_bench(..., return_mode="median")` of each, the three interleaved, best of
`--rounds`. Printed per row: TFLOP/s (2·M·N·K / t; attention 4·Z·H·N²·D / t, halved when
causal) of each, the ratios Naiad / Triton mma.sync and Naiad / Triton default (> 1: Naiad
faster), relative errors, registers/spills of each compiled kernel and its matrix instruction
(from its PTX). A row or case that raises is printed and the run goes on. `--list` prints the
plan without a GPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _path in (HERE.parents[1], HERE):  # the working tree's naiad, and bench/gpu's modules
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tc_bench import tables  # noqa: E402  (after the path is set)

SECTIONS = ("matmul", "attention")


def parse(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small subset (a few minutes)")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help="comma-separated: matmul, attention"
    )
    parser.add_argument(
        "--cases",
        default="",
        help="only the cases whose label contains one of these (comma-separated)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="best of this many timings")
    parser.add_argument("--out", type=Path, help="write tensor_cores.json and .md here")
    parser.add_argument(
        "--budget", type=float, help="start no case after this many seconds (the rest: skipped)"
    )
    parser.add_argument("--list", action="store_true", help="print the plan and stop")
    args = parser.parse_args(argv)
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    if not only or only - set(SECTIONS):
        parser.error(f"--only takes {', '.join(SECTIONS)} (comma-separated), not {args.only!r}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    args.sections = only
    return args


def main(argv=None) -> int:
    args = parse(argv)
    planned = tables.plan(args.quick, args.sections, args.cases)
    if args.list:
        for case, configs in planned:
            print(f"{case.label}: {', '.join(config.label for config in configs)}")
        print(f"{len(planned)} cases, {sum(len(c) for _, c in planned)} config rows")
        return 0
    from tc_bench.run import run  # torch, triton, naiad and the GPU from here on

    return run(planned, args.rounds, args.out, args.budget)


if __name__ == "__main__":
    sys.exit(main())
