"""Host time per launch of a kernel launched as Inductor launches its kernels, against the same
kernel's `kernel[grid](...)` launch, in microseconds.

    python -m naiad.run bench/gpu/inductor_launch.py [--device cuda] [--launches 5000]
    python bench/gpu/inductor_launch.py --device cuda     # through Triton itself, where installed

Inductor compiles each kernel with `triton.compile(ASTSource(...), options={"debug": True,
"sanitize_overflow": False, ...})` and launches it from a generated launcher that calls
`CompiledKernel.run(grid_0, grid_1, grid_2, stream, function, packed_metadata, None, None,
None, *args)` with every argument, constexprs included, on every call of the compiled
function. Here an Inductor-style pointwise kernel over 1024 elements (one program) is launched
so: 200 warm-up launches, then `--launches` launches and one synchronize, best of `--rounds`
(interleaved with the `kernel[(1,)]` launches). A one-program grid keeps the device ahead of
the host, so the time is the host's. Results are checked against torch first. On CUDA the
cubin is also launched by torch's C++ launcher ("static launcher"), as Inductor launches the
kernels whose cubin it finds.
"""

from __future__ import annotations

import argparse
import time

import torch
import triton
import triton.language as tl
from triton.compiler.compiler import ASTSource

SIZE = 1024
WARMUP = 200


@triton.jit
def triton_poi_fused_add_mul_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + xindex, xmask)
    tmp1 = tl.load(in_ptr1 + xindex, xmask)
    tl.store(out_ptr0 + xindex, tmp0 * tmp1 + tmp0, xmask)


def compile_as_inductor(device: str):
    """The kernel compiled with the options Inductor gives every kernel."""
    signature = {"in_ptr0": "*fp32", "in_ptr1": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32"}
    signature["XBLOCK"] = "constexpr"
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(4)}
    source = ASTSource(triton_poi_fused_add_mul_0, signature, {(4,): SIZE}, attrs=attrs)
    options = {"num_warps": 4, "num_stages": 1, "debug": True, "sanitize_overflow": False}
    target = triton.runtime.driver.active.get_current_target() if device == "cuda" else None
    if device == "cpu":
        from triton.backends.compiler import GPUTarget

        target = GPUTarget("cpu", "", 1)
    return triton.compile(source, target=target, options=options)


def launchers(device: str, x, y, out):
    """Each way of launching, as a function of no arguments."""
    compiled = compile_as_inductor(device)
    compiled._init_handles()
    run, function, metadata = compiled.run, compiled.function, compiled.packed_metadata
    stream = torch.cuda.current_stream().cuda_stream if device == "cuda" else 0
    kernel = triton_poi_fused_add_mul_0

    def inductor():
        run(1, 1, 1, stream, function, metadata, None, None, None, x, y, out, SIZE, SIZE)

    def jit():
        kernel[(1,)](x, y, out, SIZE, XBLOCK=SIZE)

    ways = {"kernel[grid]": jit, "CompiledKernel.run": inductor}
    if device == "cuda":
        ways["static launcher"] = static_launcher(compiled, stream, x, y, out)
    return ways


def static_launcher(compiled, stream, x, y, out):
    """The compiled cubin launched by torch's C++ launcher, as Inductor launches a kernel whose
    cubin it finds where Triton's compile leaves it (Naiad's: triton/compiler/binary_files.py)."""
    import tempfile

    from torch._inductor.runtime.static_triton_launcher import StaticallyLaunchedCudaKernel

    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as cubin:
        cubin.write(compiled.asm["cubin"])
    compiled._cubin_path = cubin.name
    static = StaticallyLaunchedCudaKernel(compiled)
    static.load_kernel(torch.cuda.current_device())
    run = static.run

    def launch():
        run(1, 1, 1, stream, x, y, out, SIZE)

    return launch


def per_launch_us(launch, launches: int, sync) -> float:
    for _ in range(WARMUP):
        launch()
    sync()
    start = time.perf_counter()
    for _ in range(launches):
        launch()
    sync()
    return (time.perf_counter() - start) / launches * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--launches", type=int, default=5000)
    options = parser.parse_args()
    device = options.device
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    torch.manual_seed(0)
    x, y = torch.rand(SIZE, device=device), torch.rand(SIZE, device=device)
    out = torch.full_like(x, float("nan"))
    ways = launchers(device, x, y, out)
    for name, launch in ways.items():
        out.fill_(float("nan"))
        launch()
        sync()
        if not torch.allclose(out, x * y + x, rtol=1e-6, atol=1e-6):
            raise SystemExit(f"{name}: wrong result")
    compiler = "naiad" if "naiad" in triton.__file__ else f"triton {triton.__version__}"
    print(f"through {compiler} on {device}; {options.launches} launches after {WARMUP}")
    best = dict.fromkeys(ways, float("inf"))
    for round_ in range(options.rounds):
        for name, launch in ways.items():
            us = per_launch_us(launch, options.launches, sync)
            best[name] = min(best[name], us)
            print(f"round {round_ + 1}: {name:20} {us:7.2f} us/launch")
    print("per launch: " + ", ".join(f"{name} {us:.2f} us" for name, us in best.items()))


if __name__ == "__main__":
    main()
