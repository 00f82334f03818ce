"""What source lines cost a CPU compile: the same kernels compiled with line info (the
default), without (NAIAD_DISABLE_LINE_INFO=1), and with the kernel's locals described too
(NAIAD_EXTRACT_DI_LOCAL_VARIABLES=1).

    python bench/compile/line_info.py [--repeat 7] [--target cpu]

Kernels: examples/06_fused_attention.py's forward (`_attn_fwd`, its first config, fp16
1x2x1024x64) and examples/01's vector add. Each compile is a whole one (NAIAD_ALWAYS_COMPILE:
frontend, TTIR passes, the back end's stages), in one process after a first compile paid
the imports; the three settings take turns, `--repeat` times. Printed: the process's CPU time
(steadier than wall time on a shared machine), least and median, its ratio to line info's
least, and the median wall times of the back end's stages (`llir`: code generation and
LLVM's -O2; `obj`: object code).
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import statistics
import sys
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from naiad import knobs  # noqa: E402

SETTINGS = {
    "lines on": {},
    "lines off": {"NAIAD_DISABLE_LINE_INFO": 1},
    "locals": {"NAIAD_EXTRACT_DI_LOCAL_VARIABLES": 1},
}


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _attention(target: str):
    example = _example("06_fused_attention")
    config = example._attn_fwd.prune_configs({"N_CTX": 1024, "HEAD_DIM": 64})[0]
    q = torch.randn(1, 2, 1024, 64, dtype=torch.float16)
    m = torch.empty(1, 2, 1024)
    meta = dict(N_CTX=1024, HEAD_DIM=64, FP8_OUTPUT=False, STAGE=1)
    meta.update(warp_specialize=False, IS_HOPPER=False, **config.all_kwargs())
    kernel = example._attn_fwd.fn
    return lambda: kernel.warmup(0.5, m, 1, 2, q, q, q, q, grid=(1,), target=target, **meta)


def _vector_add(target: str):
    example = _example("01_vector_add")
    x = torch.randn(4096)
    kernel = example.add_kernel
    return lambda: kernel.warmup(x, x, x, 4096, grid=(1,), target=target, BLOCK_SIZE=1024)


def _timed(compile_once, settings: dict) -> tuple[float, dict]:
    stages = {}

    def listen(*, times, **_):  # microseconds per back end stage
        stages.update(times.lowering_stages)

    with knobs.override(NAIAD_ALWAYS_COMPILE=1, **settings):
        knobs.set_override(knobs.compilation_listener.env, listen)
        try:
            started = time.process_time()
            compile_once()
            elapsed = time.process_time() - started
        finally:
            knobs.set_override(knobs.compilation_listener.env, None)
    return elapsed, stages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--target", default="cpu")
    args = parser.parse_args()
    for name, make in (("attention forward", _attention), ("vector add", _vector_add)):
        compile_once = make(args.target)
        _timed(compile_once, {})  # imports, one-time set-up
        runs = {label: [] for label in SETTINGS}
        for _ in range(args.repeat):
            for label, settings in SETTINGS.items():
                runs[label].append(_timed(compile_once, settings))
        base = min(t for t, _ in runs["lines on"])
        print(f"{name} ({args.target}), {args.repeat} runs:")
        for label, results in runs.items():
            total = min(t for t, _ in results)
            middle = statistics.median(t for t, _ in results)
            per_stage = {
                stage: statistics.median(s[stage] for _, s in results) / 1e3
                for stage in results[0][1]
            }
            shown = ", ".join(f"{stage} {ms:.0f}" for stage, ms in per_stage.items())
            print(
                f"  {label:10s} CPU least {total * 1e3:4.0f} ms ({total / base:.3f}x), median "
                f"{middle * 1e3:4.0f}; stages' median wall ms: {shown}"
            )


if __name__ == "__main__":
    main()
