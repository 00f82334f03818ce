"""Host launch overhead on the GPU: Naiad's hot path against Triton's, in one process.

    python bench/gpu/launch_overhead.py [--rounds 3] [--launches 5000]

Method (issue 5): the tutorial's vector add (examples/01_vector_add.py; Triton's copy has its
two `naiad` imports swapped for `triton`'s) is launched as `add_kernel[(1,)](x, y, out, 1024,
BLOCK_SIZE=1024)` on torch CUDA tensors: 200 warm-up launches, then `--launches` launches and
one synchronize, timed with `time.perf_counter`; Naiad and Triton alternate (ABAB), best of
`--rounds` each. A 1-program grid keeps the GPU far ahead of the host, so the time per launch is
the host's. Outputs are checked against torch first. The last line is the summary:
microseconds per launch of each and the ratio Naiad / Triton (goal <= 0.35).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import naiad  # noqa: E402, F401  (after the path is set: the working tree, not an installed copy)

WARMUP = 200
SIZE = 1024


def vector_add(through: str):
    """examples/01_vector_add.py as a module whose kernel compiles with `through` ("naiad" or
    "triton"); Triton reads a kernel's source from its file, so its copy gets a file."""
    path = ROOT / "examples" / "01_vector_add.py"
    if through == "triton":
        text = path.read_text()
        text = text.replace("import naiad.language as tl", "import triton.language as tl")
        text = text.replace("import naiad as triton", "import triton")
        path = Path(tempfile.mkdtemp(prefix="naiad-bench-")) / "triton_01_vector_add.py"
        path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"launch_{through}_01_vector_add", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.add_kernel


def per_launch_us(kernel, x, y, out, launches: int) -> float:
    """Microseconds per launch of `launches` launches after the warm-up, one synchronize."""
    for _ in range(WARMUP):
        kernel[(1,)](x, y, out, SIZE, BLOCK_SIZE=SIZE)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(launches):
        kernel[(1,)](x, y, out, SIZE, BLOCK_SIZE=SIZE)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / launches * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--launches", type=int, default=5000)
    options = parser.parse_args()
    torch.manual_seed(0)
    x = torch.rand(SIZE, device="cuda")
    y = torch.rand(SIZE, device="cuda")
    kernels = {"naiad": vector_add("naiad")}
    try:
        kernels["triton"] = vector_add("triton")
    except ImportError as exc:
        print(f"triton: not measured ({exc})")
    for name, kernel in kernels.items():
        out = torch.full_like(x, float("nan"))
        kernel[(1,)](x, y, out, SIZE, BLOCK_SIZE=SIZE)
        torch.cuda.synchronize()
        if not torch.equal(out, x + y):
            raise SystemExit(f"{name}: wrong vector add")
    print(f"{torch.cuda.get_device_name()}; {options.launches} launches after {WARMUP}")
    best = {name: float("inf") for name in kernels}
    out = torch.empty_like(x)
    for round_ in range(options.rounds):
        for name, kernel in kernels.items():  # interleaved: A B A B ...
            us = per_launch_us(kernel, x, y, out, options.launches)
            best[name] = min(best[name], us)
            print(f"round {round_ + 1}: {name:6} {us:6.2f} us/launch")
    summary = f"launch overhead: naiad {best['naiad']:.2f} us"
    if "triton" in best:
        ratio = best["naiad"] / best["triton"]
        summary += f", triton {best['triton']:.2f} us, naiad/triton {ratio:.2f} (goal <= 0.35)"
    print(summary)


if __name__ == "__main__":
    main()
