"""The host time of naiad.ops attention's CUDA launch path, measured without a GPU: one warm
forward (+ backward) call of `ops.scaled_dot_product_attention` on bf16 4x16x1024 D64 (the
whole-block kernels, read by tensor copies: 4 launches and 15 host descriptors a forward and
backward), every launch through the NVIDIA launcher's hot path and the driver's calls into a
stand-in `libcuda.so.1` whose entry points return at once (it counts cuLaunchKernel's calls
for step_host_time.py --ops).

    python bench/ops/attention_host.py --make-stub DIR         # builds DIR/libcuda.so.1 (cc)
    LD_LIBRARY_PATH=DIR PYTHONPATH=$PWD python bench/ops/attention_host.py \
        [--fwd | --recorded | --direct] [--profile]

The tensors are CPU tensors; the launches are routed to the NVIDIA launcher as if they were on
an sm_90a GPU (its kernels compiled for sm_90a, loaded as stand-in functions; the first launch
of each, the slow path, runs nothing), the tiles and options are the GPU's, and cuda-bindings
calls the stand-in library (so its argument conversions count, as does the native launch,
cuda_native_launch.py). What differs from a GPU: torch's CPU allocator and autograd engine
(the backward runs on the calling thread) and no stream query. Thread CPU time per call, best
of `--rounds` batches of `--calls`; `--profile`: cProfile of `--calls` calls instead. Modes: a
warm forward + backward through autograd (the default), the forward without grad (`--fwd`), the
forward recorded by autograd (`--recorded`: the GPU profile's "naiad fwd" row), forward and
backward without autograd (`--direct`: `flash.forward`, `flash.backward` on one Problem). The CPU
allocator's cost is not the caching allocator's: glibc maps and unmaps each 8 MB result (which
gives the tensor maps' cache the same addresses back, as torch's caching allocator does on a
GPU); with MALLOC_MMAP_THRESHOLD_ raised the forward costs ~10 us more here.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

STUB = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
typedef int CUresult;
static void *ctx = (void *)0x1000;
CUresult cuInit(unsigned flags) { return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuCtxGetCurrent(void **c) { *c = ctx; return 0; }
CUresult cuCtxSetCurrent(void *c) { ctx = c; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)0x1000; return 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { *s = "stand-in"; return 0; }
static unsigned long launches; /* read by naiad_stub_launches: launches counted */
unsigned long naiad_stub_launches(void) { return launches; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                        void **extra) { launches++; return 0; }
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *address,
                                const uint64_t *dims, const uint64_t *strides,
                                const uint32_t *box, const uint32_t *element_strides,
                                int interleave, int swizzle, int l2, int fill) {
  memset(map, 0, 128);
  return 0;
}
/* how cuda-bindings finds every other entry point: this library's own symbols */
CUresult cuGetProcAddress_v2(const char *symbol, void **found, int version, uint64_t flags,
                             int *status) {
  void *self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  *found = self ? dlsym(self, symbol) : 0;
  if (status) *status = *found ? 0 : 1;
  return *found ? 0 : 500;
}
CUresult cuGetProcAddress(const char *symbol, void **found, int version, uint64_t flags) {
  return cuGetProcAddress_v2(symbol, found, version, flags, 0);
}
"""


def make_stub(directory: str) -> None:
    """Build the stand-in driver library as DIR/libcuda.so.1 with the host's C compiler."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    (path / "stub.c").write_text(STUB)
    library = path / "libcuda.so.1"
    command = ["cc", "-shared", "-fPIC", "-O2", "-o", library, path / "stub.c", "-ldl"]
    subprocess.run(command, check=True)
    print(f"built {library}; run with LD_LIBRARY_PATH={path}")


def route_to_cuda() -> None:
    """Launches of CPU tensors take the NVIDIA launcher's path, as on an sm_90a GPU (the module
    doc): what is patched is what a GPU would answer."""
    from naiad.backends import registry
    from naiad.backends.nvidia import driver as cuda_driver
    from naiad.backends.nvidia.cubin_kernel import CubinKernel
    from naiad.ops.attention import flash
    from naiad.ops.indexing import joined
    from naiad.ops.reduce import grouped
    from naiad.runtime import cuda_launcher
    from naiad.runtime import jit as jit_module

    cuda = cuda_driver._cuda()
    nvidia = registry.for_device("cuda")
    jit_module.backend_for_launch = lambda bound: (nvidia, 0)
    cuda_launcher.device_of = lambda bound: 0
    cuda_launcher._arch = lambda device: "cuda:sm_90a"
    cuda_launcher.stream_reader = lambda: lambda device: 0
    functions = {}

    def function(kernel, device):
        if kernel not in functions:
            handle = cuda.CUfunction(0x5000 + len(functions))
            functions[kernel] = cuda_driver.Function(handle, 0, 0, 0, 0, 0)
        return functions[kernel]

    CubinKernel.function = function
    CubinKernel.launch = lambda kernel, grid, args, stream: None  # the slow path: nothing run
    flash._by_tensor_copies = flash.rows_copyable
    grouped.IN_PLACE["cpu"] = joined.ONE_LAUNCH["cpu"] = True
    flash._WHOLE["cpu"] = flash._WHOLE["cuda"]
    flash._WHOLE_BACKWARD["cpu"] = flash._WHOLE_BACKWARD["cuda"]
    for kernel, kind in list(flash.BLOCKS):
        if kind == "cpu":
            flash.BLOCKS[(kernel, kind)] = flash.BLOCKS[(kernel, "cuda")]


def calls() -> dict:
    """The timed calls by mode (`main`'s flags), on bf16 4x16x1024 D64 CPU tensors."""
    import torch

    import naiad.ops as ops
    from naiad.ops.attention import flash
    from naiad.ops.attention.sdpa import _Problem

    torch.manual_seed(0)
    q, k, v = (torch.randn(4, 16, 1024, 64, dtype=torch.bfloat16, requires_grad=True)
               for _ in "qkv")  # fmt: skip
    grad = torch.randn_like(q)
    inputs = (q.detach(), k.detach(), v.detach())

    def forward_backward():
        out = ops.scaled_dot_product_attention(q, k, v)
        torch.autograd.grad(out, (q, k, v), grad)

    def forward():
        with torch.no_grad():
            ops.scaled_dot_product_attention(q, k, v)

    def recorded():
        ops.scaled_dot_product_attention(q, k, v)

    def direct():
        problem = _Problem(*inputs, None, 0.0, False, None)
        out, lse = flash.forward(problem)
        flash.backward(problem, grad, out, lse)

    return {"forward + backward": forward_backward, "fwd": forward, "recorded": recorded,
            "direct": direct}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--make-stub", metavar="DIR", help="build the stand-in library and stop")
    parser.add_argument("--fwd", action="store_true", help="the forward alone, no autograd")
    parser.add_argument("--recorded", action="store_true", help="the forward, recorded")
    parser.add_argument("--direct", action="store_true", help="fwd + bwd without autograd")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    if args.make_stub:
        return make_stub(args.make_stub)
    os.environ.setdefault("NAIAD_BACKEND", "auto")
    route_to_cuda()
    chosen = [mode for mode in ("fwd", "recorded", "direct") if getattr(args, mode)]
    name = chosen[0] if chosen else "forward + backward"
    call = calls()[name]
    for _ in range(3):  # compiles (or loads) the kernels and prepares their launches
        call()
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(lambda: [call() for _ in range(args.calls)])
        pstats.Stats(profile).sort_stats("tottime").print_stats(40)
        return
    times = []
    for _ in range(args.rounds):
        start = time.thread_time()
        for _ in range(args.calls):
            call()
        times.append((time.thread_time() - start) / args.calls * 1e6)
    print(f"{name}: best {min(times):.1f} us a call ({' '.join(f'{t:.1f}' for t in times)})")


if __name__ == "__main__":
    sys.exit(main())
