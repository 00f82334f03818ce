"""Throughput of the MLIR text printer and parser, in ops per second, on a 10,000-op module.

    python bench/compile/ir_text.py [--ops 10000] [--repeat 7]

The module is real TTIR: every function of Triton's dumps in tests/ir/fixtures (`*.ttir`,
source and optimized), cloned under fresh names until it holds at least `--ops` ops, with their
locations. Measured: printing as Triton prints (custom syntax, `loc(#locN)` and the aliases),
without locations, and in generic form; parsing each of those texts back. The median of
`--repeat` runs is reported, after one warm-up run.
"""

from __future__ import annotations

import argparse
import glob
import os
import platform
import statistics
import sys
import time

from naiad import dialects  # noqa: F401  (registers the ops)
from naiad.dialects import syntax  # noqa: F401  (registers their custom syntax)
from naiad.ir import ModuleOp, StringAttr, SymbolRefAttr
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "ir", "fixtures")


def build_module(min_ops: int) -> ModuleOp:
    """A module of at least `min_ops` ops: the fixtures' functions, cloned under new names
    (calls renamed along), round after round."""
    sources = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "*.ttir"))):
        with open(path) as f:
            sources.append(parse_module(f.read(), os.path.basename(path)))
    module = ModuleOp()
    count = 0
    round_ = 0
    while count < min_ops:
        for k, source in enumerate(sources):
            suffix = f"_r{round_}m{k}"
            for func in source.body:
                copy = func.clone()
                copy.attributes["sym_name"] = StringAttr(copy.attributes["sym_name"].value + suffix)
                for op in copy.walk():
                    callee = op.attributes.get("callee")
                    if isinstance(callee, SymbolRefAttr):
                        op.attributes["callee"] = SymbolRefAttr(callee.root + suffix)
                module.body.append(copy)
                count += sum(1 for _ in copy.walk())
                if count >= min_ops:
                    return module
        round_ += 1
    return module


def median_seconds(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    module = build_module(args.ops)
    ops = sum(1 for _ in module.walk())
    print(f"module: {ops} ops; Python {platform.python_version()}, {platform.machine()}, {_cpu()}")
    for label, options in (
        ("custom syntax + locations (as Triton)", {}),
        ("custom syntax, no locations", {"locations": False}),
        ("generic form + locations", {"generic": True}),
    ):
        text = print_module(module, **options)
        printing = median_seconds(lambda o=options: print_module(module, **o), args.repeat)
        parsing = median_seconds(lambda t=text: parse_module(t, "bench.mlir"), args.repeat)
        print(
            f"{label:40s} print {ops / printing:9,.0f} ops/s ({printing * 1e3:6.1f} ms)   "
            f"parse {ops / parsing:9,.0f} ops/s ({parsing * 1e3:6.1f} ms)   "
            f"{len(text) / 1e6:.2f} MB"
        )


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
