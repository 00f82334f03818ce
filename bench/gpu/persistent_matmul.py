"""Tutorial 09's matmuls (naive, persistent, TMA, TMA persistent, descriptor persistent) through
Naiad and through Triton on one GPU, side by side (issue 15).

    python bench/gpu/persistent_matmul.py TUTORIAL [--size 8192] [--rounds 2] [--out DIR]

TUTORIAL is Triton's own `python/tutorials/09-persistent-matmul.py`, from a checkout (nothing is
fetched). Its kernels and host functions run unmodified but for its imports: the tutorial
binds cuBLAS through Triton's private extension (`triton._C.libtriton`), which a Naiad process
does not have, so both sides load it with that binding replaced by none (cuBLAS is timed here
through torch instead). Each side runs in its own process, Naiad's after
`naiad.install_as_triton()`, one after the other on the same GPU.

Per variant, fp16, M = N = K = `--size`, B stored transposed as the tutorial's benchmark stores
it: the output against torch's matmul in float32 (relative error; over 1e-2 shows FAIL and is
not timed), then `triton.testing.do_bench` (median) of the host function, best of `--rounds`,
in TFLOP/s; every variant autotunes its configs on its first call, on both sides (`--config`
keeps the same subset of them on both). Printed:
each side's TFLOP/s, torch's (cuBLAS) and Naiad / Triton (> 1: Naiad faster).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from tutorial_sides import cell, load_tutorial, ratio, run_sides, write

TOL = 1e-2
_BINDING = "    from triton._C.libtriton import nvidia\n"


def _tutorial(path: Path, side: str):
    text = path.read_text()
    if _BINDING not in text:
        raise SystemExit(f"{path}: not the expected tutorial (no cuBLAS binding import)")
    start = text.index(_BINDING)
    last = "device_blas = nvidia.cublas.CublasLt(device_workspace)\n"
    end = text.index(last, start) + len(last)
    # Three lines for three: the kernels stay on the lines the file has them.
    none = "    nvidia = None\n    device_workspace = None\n    device_blas = None\n"
    return load_tutorial(path, side, text[:start] + none + text[end:])


def keep_configs(module, wanted: dict) -> None:
    """Keep, in each autotuned kernel of `module`, the configs whose block sizes, stages and
    warps are `wanted` (all of them when none is)."""
    for kernel in vars(module).values():
        configs = getattr(kernel, "configs", None)
        if not isinstance(configs, list) or not wanted:
            continue
        chosen = [config for config in configs if _matches(config, wanted)]
        if chosen:
            kernel.configs = chosen


def _matches(config, wanted: dict) -> bool:
    values = {**config.kwargs, "num_stages": config.num_stages, "num_warps": config.num_warps}
    return all(values.get(key, value) == value for key, value in wanted.items())


def variants(module, a, b):
    """(label, host call) of each variant the tutorial benchmarks on Hopper."""
    return [
        ("naive", lambda: module.matmul(a, b.T)),
        ("persistent", lambda: module.matmul_persistent(a, b.T)),
        ("tma", lambda: module.matmul_tma(a, b, False)),
        ("tma persistent", lambda: module.matmul_tma_persistent(a, b, False)),
        ("descriptor persistent", lambda: module.matmul_descriptor_persistent(a, b, False)),
        ("descriptor persistent ws", lambda: module.matmul_descriptor_persistent(a, b, True)),
    ]


def side_main(tutorial: Path, side: str, size: int, rounds: int, wanted: dict) -> dict:
    module = _tutorial(tutorial, side)
    keep_configs(module, wanted)
    import torch
    import triton

    gen = torch.Generator(device="cuda").manual_seed(9)
    a = torch.randn((size, size), generator=gen, device="cuda", dtype=torch.float16)
    b = torch.randn((size, size), generator=gen, device="cuda", dtype=torch.float16)
    want = a.float() @ b.float().T
    flops = 2.0 * size**3

    def tflops(fn) -> float:
        ms = min(triton.testing.do_bench(fn, return_mode="median") for _ in range(rounds))
        return flops / ms * 1e-9

    results = {}
    if side == "triton":
        results["torch (cuBLAS)"] = {"error": 0.0, "tflops": tflops(lambda: a @ b.T)}
    for name, call in variants(module, a, b):
        try:
            got = call().float()
            error = ((got - want).norm() / want.norm()).item()
            row = {"error": error, "tflops": None}
            if math.isfinite(error) and error < TOL:
                row["tflops"] = tflops(call)
        except Exception as exc:  # a report: say what failed and go on
            row = {"failure": f"{type(exc).__name__}: {exc}"[:400]}
        results[name] = row
        print(side, name, row, file=sys.stderr, flush=True)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tutorial", type=Path, help="Triton's 09-persistent-matmul.py")
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--config",
        default="",
        help="keep only the autotune configs with these values, e.g. "
        "BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,num_stages=3,num_warps=8 (same on both sides)",
    )
    parser.add_argument("--out", type=Path, help="write persistent_matmul.json here")
    parser.add_argument("--side", choices=["naiad", "triton"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    wanted = {k: int(v) for k, v in (item.split("=") for item in args.config.split(",") if item)}
    if args.side:
        print(json.dumps(side_main(args.tutorial, args.side, args.size, args.rounds, wanted)))
        return 0
    arguments = [str(args.tutorial), "--size", str(args.size), "--rounds", str(args.rounds)]
    results = run_sides(__file__, [*arguments, "--config", args.config])
    size = args.size
    print(f"\ntutorial 09 matmul, fp16, {size}x{size}x{size} (TFLOP/s)")
    print("| variant | Naiad | Triton | Naiad / Triton | Naiad relative error |")
    print("|---|---|---|---|---|")
    names = list(results["triton"]) or [name for name, _ in variants(None, None, None)]
    for name in names:
        ours, theirs = results["naiad"].get(name), results["triton"].get(name)
        error = f"{ours['error']:.1e}" if ours and "error" in ours else "-"
        print(f"| {name} | {cell(ours)} | {cell(theirs)} | {ratio(ours, theirs)} | {error} |")
    write(args.out, "persistent_matmul.json", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
