"""Warm compile time: Python AST -> optimized TTIR (the frontend and Triton's TTIR pipeline).

"Warm": another specialization of the same kernel was compiled in the same process before, so
imports and one-time set-up are paid; each measured compile is a new specialization (another
constexpr value), median of 10. Run: `python bench/compile/frontend_pipeline.py`.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import platform
import statistics
import time

import naiad.passes  # noqa: F401  (registers the passes)
from naiad.frontend import generate
from naiad.ir import PassManager
from naiad.runtime.compiler import TTIR_PIPELINE

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _example(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fixture(name):
    data = json.loads((ROOT / "tests" / "ir" / "fixtures" / f"{name}.json").read_text())
    return data["signature"], data["constexprs"], data["attrs"]


def _compile_ms(kernel, signature, constexprs, attrs) -> float:
    start = time.perf_counter()
    result = generate(kernel, signature, constexprs, attrs)
    PassManager(list(TTIR_PIPELINE)).run(result.module)
    return (time.perf_counter() - start) * 1e3


def _jit_function(kernel):
    """The jit function under any autotune/heuristics wrappers."""
    while not hasattr(kernel, "params"):
        kernel = kernel.fn
    return kernel


def _measure(kernel, fixture, varied, values):
    """Median ms of compiling new specializations (`varied` set to each of `values`)."""
    signature, constexprs, attrs = _fixture(fixture)
    _compile_ms(kernel, signature, constexprs, attrs)  # warm: the same kernel once before
    times = []
    for value in values:
        specialized = dict(constexprs, **{varied: value})
        times.append(_compile_ms(kernel, signature, specialized, attrs))
    result = generate(kernel, signature, constexprs, attrs)
    PassManager(list(TTIR_PIPELINE)).run(result.module)
    return statistics.median(times), sum(1 for _ in result.module.walk())


def main():
    matmul = _jit_function(_example("03_matmul").matmul_kernel)
    attention = _jit_function(_example("06b_fused_attention_block_ptr")._attn_fwd)
    print(f"# {platform.machine()}, Python {platform.python_version()}")
    print(f"{'kernel':<34} {'warm AST->TTIR (ms)':>20} {'ops':>6}")
    rows = [
        ("matmul (tutorial 03, 128x128x64)", matmul, "03_matmul", "GROUP_SIZE_M", range(1, 11)),
        (
            "attention fwd (06b, block ptrs)",
            attention,
            "06b_fused_attention_block_ptr",
            "STAGE",
            [1, 3] * 5,
        ),
    ]
    for label, kernel, fixture, varied, values in rows:
        ms, ops = _measure(kernel, fixture, varied, list(values))
        print(f"{label:<34} {ms:>20.1f} {ops:>6}")


if __name__ == "__main__":
    main()
