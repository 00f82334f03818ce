"""Host launch overhead on the GPU: Naiad's hot path against Triton's, in one process.

    python bench/gpu/launch_overhead.py [--rounds 3] [--launches 5000]

Method (issue 5): the tutorial's vector add (examples/01_vector_add.py; Triton's copy has its
two `naiad` imports swapped for `triton`'s) is launched as `add_kernel[(1,)](x, y, out, 1024,
BLOCK_SIZE=1024)` on torch CUDA tensors: 200 warm-up launches, then `--launches` launches and
one synchronize, timed with `time.perf_counter`; Naiad and Triton alternate (ABAB), best of
`--rounds` each. A 1-program grid keeps the GPU far ahead of the host, so the time per launch is
the host's. Outputs are checked against torch first. The last line is the summary:
microseconds per launch of each and the ratio Naiad / Triton (goal <= 0.35).

`--breakdown` also prints what each step of Naiad's hot path costs on this host (ns per call,
timeit, best of 40 batches of 500 calls, each below the launch queue's depth): the keying alone,
the prepared launch, torch's stream and device reads, the driver's context query, and
cuLaunchKernel through cuda-bindings and through ctypes on libcuda (the same launch), so that
the driver's share can be told from Python's and the GPU's.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import sys
import tempfile
import time
import timeit
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


def _ns(statement, namespace, number=500) -> float:
    """Nanoseconds per call of `statement`, best of 40 batches of `number` calls; the GPU queue
    is drained between batches, outside the timing, and a batch stays below the driver's queue
    depth, so a launch's time is the host's alone."""
    times = []
    for _ in range(40):
        times.append(timeit.timeit(statement, globals=namespace, number=number) / number)
        torch.cuda.synchronize()
    return min(times) * 1e9


def breakdown(kernel, x, y, out) -> None:
    """The hot path's steps, one by one (see the module doc)."""
    from cuda.bindings import driver as cuda

    from naiad.knobs import launch_settings
    from naiad.runtime.binder import make_binder
    from naiad.runtime.cuda_launcher import PackedParams

    binder = make_binder(kernel.params)
    key, dims, values = binder(launch_settings(), (1,), x, y, out, SIZE, BLOCK_SIZE=SIZE)
    prepared = kernel._launches[key]
    (compiled,) = kernel._launchers["cuda"].kernels.values()
    handle = compiled.kernel.function(0).handle
    params = PackedParams(PackedParams.layout(compiled.kernel.signature))
    params.pack(params.buffer, 0, *values)
    address = params.address
    stream = torch._C._cuda_getCurrentRawStream(0)
    libcuda = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    c_handle, c_stream, c_params = (ctypes.c_void_p(int(v)) for v in (handle, stream, address))
    threads = compiled.kernel.threads
    namespace = dict(locals(), cuda=cuda, torch=torch, launch_settings=launch_settings, SIZE=SIZE)
    steps = {
        "kernel[(1,)](...)": "kernel[(1,)](x, y, out, SIZE, BLOCK_SIZE=SIZE)",
        "keying alone (the binder)": (
            "binder(launch_settings(), (1,), x, y, out, SIZE, BLOCK_SIZE=SIZE)"
        ),
        "prepared launch": "prepared(dims, values)",
        "torch raw stream": "torch._C._cuda_getCurrentRawStream(0)",
        "x.data_ptr()": "x.data_ptr()",
        "x.device": "x.device",
        "cuCtxGetCurrent (cuda-bindings)": "cuda.cuCtxGetCurrent()",
        "cuLaunchKernel (cuda-bindings)": (
            "cuda.cuLaunchKernel(handle, 1, 1, 1, threads, 1, 1, 0, stream, address, 0)"
        ),
        "cuLaunchKernel (ctypes)": (
            "libcuda(c_handle, 1, 1, 1, threads, 1, 1, 0, c_stream, c_params, None)"
        ),
    }
    for name, statement in steps.items():
        print(f"  {name:34} {_ns(statement, namespace):8.0f} ns")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--launches", type=int, default=5000)
    parser.add_argument("--breakdown", action="store_true", help="time each hot-path step")
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
    if options.breakdown:
        print("naiad hot path, per step:")
        breakdown(kernels["naiad"], x, y, out)


if __name__ == "__main__":
    main()
