"""Compile time of the tensor-core kernels, Naiad against Triton (issues 14 and 15).

    python bench/compile/tensor_core_compile.py [--rounds 3] [--arch sm_90a,sm_80] [--out DIR]

Needs Triton beside Naiad, no GPU: both compile for a named GPU without one. Each row compiles
one kernel at one config from source to cubin, with the caches out of the way (Naiad:
`NAIAD_ALWAYS_COMPILE=1`; Triton: a new empty `TRITON_CACHE_DIR` for each compile), in a process
where both compilers have already compiled another kernel (so neither pays its imports), the two
interleaved, best of `--rounds` wall seconds each. The kernels are the sources bench/gpu/
tensor_cores.py launches (tutorial 03's matmul, tutorial 06's attention forward and the pointer
edition of tensor_core_kernels.py, their `naiad` imports swapped for Triton's copy), at the best
config of each on an H200; `sm_90a` is Triton's `cuda:90` (wgmma for both), `sm_80` mma.sync.
Printed: each side's seconds and Naiad / Triton (< 1: Naiad compiles faster).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _path in (ROOT, ROOT / "bench" / "gpu"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import triton  # noqa: E402
from kernels import EXAMPLES, through  # noqa: E402  (bench/gpu/kernels.py)
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

OWN = ROOT / "bench" / "gpu" / "tensor_core_kernels.py"
MATMUL_INTS = dict(M=4096, N=4096, K=4096, stride_am=4096, stride_ak=1, stride_bk=4096)
MATMUL_INTS.update(stride_bn=1, stride_cm=4096, stride_cn=1)

# label: (source, kernel, pointer types, scalar arguments, constexprs, num_warps, num_stages)
KERNELS = {
    "matmul f16 128x256x64 w8 s3": (
        "tutorial",
        "matmul_kernel",
        ["*fp16"] * 3,
        MATMUL_INTS,
        dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION=""),
        8,
        3,
    ),
    "matmul f16 128x128x32 w4 s4": (
        "tutorial",
        "matmul_kernel",
        ["*fp16"] * 3,
        MATMUL_INTS,
        dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, ACTIVATION=""),
        4,
        4,
    ),
    **{
        f"attention pointers D{d} {bm}x{bn} w{w}": (
            "own",
            "attention_fwd_pointers",
            ["*fp16"] * 4,
            dict(sm_scale=0.125, stride_head=4096 * d, stride_row=d, N_CTX=4096),
            dict(HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=False),
            w,
            3,
        )
        for d, bm, bn, w in ((64, 128, 64, 4), (128, 128, 128, 8))
    },
    **{
        f"attention tutorial 06 D{d} {bm}x{bn} w{w}": (
            "attention",
            "_attn_fwd",
            [],
            dict(sm_scale=0.125, M="*fp32", Z=4, H=32, desc_q="*fp16", desc_k="*fp16"),
            dict(HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, FP8_OUTPUT=False, STAGE=1),
            w,
            3,
        )
        for d, bm, bn, w in ((64, 128, 64, 4), (128, 128, 128, 8))
    },
}
_TUTORIAL_06_REST = dict(desc_v="*fp16", desc_o="*fp16", N_CTX=4096)
_TUTORIAL_06_META = dict(warp_specialize=False, IS_HOPPER=False)


class _NoGpuDriver:
    """Triton's active driver where there is no GPU: compiling for a named target needs none."""

    def get_active_torch_device(self):
        return "cpu"


def _sources() -> dict:
    paths = {
        "tutorial": EXAMPLES / "03_matmul.py",
        "attention": EXAMPLES / "06_fused_attention.py",
        "own": OWN,
    }
    return {
        compiler: {name: through(path, compiler) for name, path in paths.items()}
        for compiler in ("naiad", "triton")
    }


def _arguments(spec) -> tuple[dict, dict]:
    """(arguments by name in order, constexprs) of a KERNELS entry."""
    _, kernel, _, scalars, constexprs, _, _ = spec
    arguments = dict(scalars)
    if kernel == "_attn_fwd":
        arguments.update(_TUTORIAL_06_REST)
        constexprs = {**constexprs, **_TUTORIAL_06_META}
    return arguments, constexprs


def _kernel_function(module, name: str):
    kernel = getattr(module, name)
    return kernel.fn if hasattr(kernel, "configs") else kernel  # an autotuned kernel's own


def naiad_seconds(sources, spec, arch: str) -> float:
    source, name, pointers, _, _, warps, stages = spec
    arguments, constexprs = _arguments(spec)
    fn = _kernel_function(sources["naiad"][source], name)
    start = time.perf_counter()
    fn.warmup(
        *pointers,
        **arguments,
        **constexprs,
        num_warps=warps,
        num_stages=stages,
        grid=(1,),
        target=f"cuda:{arch}",
    )
    return time.perf_counter() - start


def _scalar_type(value) -> str:
    """Triton's signature type of a warmup argument (a type string stays as it is)."""
    if isinstance(value, str):
        return value
    return "fp32" if isinstance(value, float) else "i32"


def triton_seconds(sources, spec, arch: str) -> float:
    source, name, pointers, _, _, warps, stages = spec
    arguments, constexprs = _arguments(spec)
    fn = _kernel_function(sources["triton"][source], name)
    names = fn.arg_names
    signature = dict(zip(names, pointers))
    for key, value in arguments.items():
        signature[key] = _scalar_type(value)
    for key in constexprs:
        signature[key] = "constexpr"
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(names) if signature[n][0] == "*"}
    capability = int(arch[3:5])
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-cache-")
    start = time.perf_counter()
    triton.compile(
        ASTSource(fn, signature, constexprs, attrs),
        target=GPUTarget("cuda", capability, 32),
        options=dict(num_warps=warps, num_stages=stages),
    )
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arch", default="sm_90a,sm_80")
    parser.add_argument("--only", default="", help="rows whose label contains this")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    try:
        import torch

        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if not gpu:
        triton.runtime.driver.set_active(_NoGpuDriver())
    os.environ["NAIAD_ALWAYS_COMPILE"] = "1"
    from naiad.backends.nvidia import link

    if link.linker_version() is None:
        print("warning: Naiad finds no linker here, so its times stop at PTX (Triton's at cubin)")
    sources = _sources()
    warm = KERNELS["matmul f16 128x128x32 w4 s4"]
    naiad_seconds(sources, warm, "sm_80"), triton_seconds(sources, warm, "sm_80")
    rows = []
    print("| kernel | arch | Naiad s | Triton s | Naiad / Triton |\n|---|---|---|---|---|")
    for arch in args.arch.split(","):
        for label, spec in KERNELS.items():
            if args.only not in label:
                continue
            times = {"naiad": [], "triton": []}
            for _ in range(args.rounds):
                times["naiad"].append(naiad_seconds(sources, spec, arch))
                times["triton"].append(triton_seconds(sources, spec, arch))
            n, t = min(times["naiad"]), min(times["triton"])
            rows.append(dict(kernel=label, arch=arch, naiad_s=n, triton_s=t, ratio=n / t))
            print(f"| {label} | {arch} | {n:.2f} | {t:.2f} | {n / t:.2f} |", flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "tensor_core_compile.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
