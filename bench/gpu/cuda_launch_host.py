"""The host's side of a prepared CUDA launch, measured without a GPU: what each of the Llama
step's ~225 launches pays in Python between the bound launch and the driver's C function.

    PYTHONPATH=$PWD python bench/gpu/cuda_launch_host.py [--bindings] [--rounds 7]

The launch is `runtime/cuda_launcher.fast_cuda_launch` for a matrix product's kernel as
naiad.ops launches it (three pointers, sizes and strides, alpha and beta: 17 parameters after
the strides equal to 1 became constants), called as the bound launch calls it. The driver is a
stand-in: by default a Python module whose `cuCtxGetCurrent` and `cuLaunchKernel` return
CUDA_SUCCESS at once (the Python Naiad controls); with `--bindings`, cuda.bindings itself,
over whatever `libcuda.so.1` the loader finds (on a machine without a GPU, a stand-in library
whose entry points return 0, named by LD_LIBRARY_PATH), so that cuda-bindings' own argument
conversion and result enum are counted, and cuLaunchKernel through ctypes on the same library
is timed beside it, and the bound launch through the native launch (cuda_native_launch.py:
the context check and cuLaunchKernel in one call) beside the one through cuda-bindings. torch's
raw stream query is a Python function here (a CPU build of torch has none). Thread CPU time per
call, best of `--rounds` batches of 100,000 calls.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from naiad import knobs
from naiad.backends.nvidia import driver as cuda_driver
from naiad.runtime import cuda_launcher, cuda_native_launch
from naiad.runtime.cuda_parameters import tuple_getter

# matmul_kernel's runtime values for a 4096x1024 @ 1024x1024 bf16 product without a bias
# (a, b, c, bias=None, M, N, K, 12 strides, alpha, beta) and the kernel's parameters once the
# ints equal to 1 and the None are constants.
VALUES = (1 << 33, 1 << 34, 1 << 35, None, 4096, 1024, 1024, 0, 1024, 1, 0, 1024, 1,
          0, 1024, 1, 0, 1024, 1, 1.0, 1.0)  # fmt: skip
KEPT = [i for i, v in enumerate(VALUES) if v is not None and not (type(v) is int and v == 1)]
KINDS = ("*bf16", "*bf16", "*bf16") + ("i32",) * (len(KEPT) - 5) + ("fp32", "fp32")


class PythonDriver:
    """cuda.bindings.driver as the launch path calls it, answering at once."""

    class CUresult:
        CUDA_SUCCESS = 0

    def cuCtxGetCurrent(self):
        return 0, 4096

    def cuDevicePrimaryCtxRetain(self, device):
        return 0, 4096

    def cuDeviceGetCount(self):
        return 0, 1

    def cuDeviceGet(self, index):
        return 0, index

    def cuLaunchKernel(self, *args):
        return (0,)


def prepared_launch(cuda):
    """The prepared launch of the product's kernel with `cuda` as the driver module."""
    cuda_driver._cuda = lambda: cuda
    cuda_driver._contexts.clear()
    kernel = cuda_driver.CubinKernel(b"", "matmul_kernel", KINDS, num_warps=8)
    handle = cuda.CUfunction(5) if hasattr(cuda, "CUfunction") else 5
    function = cuda_driver.Function(handle, 0, 0, 0, 0, 0)
    kernel.function = lambda device: function
    select = tuple_getter(KEPT)
    compiled = cuda_launcher._Compiled(kernel, select, (0, 1, 2), {}, taken=tuple(KEPT))

    launcher = SimpleNamespace(jit_function=None, kernels={}, _current_stream=lambda device: 0)
    return cuda_launcher.fast_cuda_launch(launcher, compiled, 0)


def best_ns(call, rounds: int, number: int = 100_000) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.thread_time()
        for _ in range(number):
            call()
        best = min(best, (time.thread_time() - start) / number)
    return best * 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bindings", action="store_true", help="cuda.bindings over libcuda")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if args.bindings:
        from cuda.bindings import driver as cuda

        cuda.cuInit(0)
    else:
        cuda = PythonDriver()
    launch = prepared_launch(cuda)
    dims, values = (256, 1, 1), VALUES
    rows = {"prepared launch (dims, 21 values)": lambda: launch(dims, values)}
    if hasattr(launch, "bind"):  # the bound launch's: fixed parameters packed once
        fixed = {i: v for i, v in enumerate(VALUES) if i > 2}
        tensors = VALUES[:3]
        with knobs.override(NAIAD_CUDA_NATIVE_LAUNCH="0"):
            through_bindings = launch.bind(fixed, (0, 1, 2), dims)
        rows["the same, fixed ones packed (3 values)"] = lambda: through_bindings(tensors)
        if cuda_native_launch.native_launch() is not None:  # a driver library by name
            native = launch.bind(fixed, (0, 1, 2), dims)
            rows["the same, one native launch call"] = lambda: native(tensors)
    if args.bindings:
        library = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
        handle, stream, params = ctypes.c_void_p(5), ctypes.c_void_p(0), ctypes.c_void_p(4096)
        rows["cuLaunchKernel, cuda-bindings"] = lambda: cuda.cuLaunchKernel(
            cuda.CUfunction(5), 256, 1, 1, 256, 1, 1, 0, 0, 4096, 0
        )
        rows["cuLaunchKernel, ctypes, c_void_p handles"] = lambda: library(
            handle, 256, 1, 1, 256, 1, 1, 0, stream, params, None
        )
        rows["cuCtxGetCurrent, cuda-bindings"] = cuda.cuCtxGetCurrent
    for name, call in rows.items():
        print(f"{name:<44} {best_ns(call, args.rounds):7.0f} ns")


if __name__ == "__main__":
    main()
