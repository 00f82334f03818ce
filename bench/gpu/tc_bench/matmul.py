"""Matmul rows of bench/gpu/tensor_cores.py: tutorial 03's `matmul_kernel` launched with one
config at a time (its `.fn`, past the autotuner), for float operands; tensor_core_kernels.py's
`int_matmul_kernel` (the same tiling with the int32 accumulator) for int8, which the tutorial's
fp32 accumulator does not take.

Operands are fresh normal samples (uniform in [-128, 128) for int8) made on the GPU; 8-bit
operands keep B K-major (stored (N, K), passed as its transpose), as tutorial 03 does for fp8:
`wgmma` reads 8-bit B only so. The output (fp16; int32 for int8) is compared with a float64
product of the same operands: relative error 1e-2 for floats (fp16 output rounding, tf32
operands), 0 for int8.
"""

from __future__ import annotations

import torch
import triton

from . import measure
from .measure import VARIANTS, config_rows

FLOAT_TOL = 1e-2
GROUP_SIZE_M = 8


def operands(case):
    """A (M, K) and B (K, N) of `case.dtype` on the GPU."""
    dtype = getattr(torch, case.dtype)
    eight_bit = dtype.itemsize == 1
    if dtype == torch.int8:
        a = torch.randint(-128, 128, (case.M, case.K), dtype=dtype, device=measure.DEVICE)
        b = torch.randint(-128, 128, (case.N, case.K), dtype=dtype, device=measure.DEVICE).T
    else:
        a = torch.randn(case.M, case.K, device=measure.DEVICE).to(dtype)
        shape = (case.N, case.K) if eight_bit else (case.K, case.N)
        b = torch.randn(shape, device=measure.DEVICE).to(dtype)
        b = b.T if eight_bit else b
    return a, b


def relative_error(got, want) -> float:
    return ((got.double() - want).norm() / want.norm()).item()


def launcher(module, a, b, c, config):
    """A function that launches `config` of the module's matmul on (a, b) into c and returns the
    CompiledKernel."""
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, config.block_m) * triton.cdiv(N, config.block_n),)
    integer = a.dtype == torch.int8
    kernel = module.int_matmul_kernel if integer else module.matmul_kernel.fn
    extra = {} if integer else {"ACTIVATION": ""}
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))

    def launch():
        return kernel[grid](
            a,
            b,
            c,
            M,
            N,
            K,
            *strides,
            BLOCK_SIZE_M=config.block_m,
            BLOCK_SIZE_N=config.block_n,
            BLOCK_SIZE_K=config.block_k,
            GROUP_SIZE_M=GROUP_SIZE_M,
            num_warps=config.num_warps,
            num_stages=config.num_stages,
            **extra,
        )

    return launch


def case_rows(case, configs, rounds: int, sources: dict, emit) -> None:
    """One row per config of `case` and the best-of-configs row, each passed to `emit` as it is
    done. `sources` has the modules of each variant: "tutorial" (examples/03) and "own"
    (tensor_core_kernels.py)."""
    integer = case.dtype == "int8"
    mods = sources["own"] if integer else sources["tutorial"]
    a, b = operands(case)
    want = torch.matmul(a.float().double(), b.float().double())  # (fp8 converts via fp32)
    out_dtype = torch.int32 if integer else torch.float16
    outputs = {
        v: torch.empty((case.M, case.N), dtype=out_dtype, device=measure.DEVICE) for v in VARIANTS
    }
    poison = -(2**31) + 7 if integer else float("nan")
    tol = 0.0 if integer else FLOAT_TOL

    def make_launches(config):
        return {v: launcher(mods[v], a, b, outputs[v], config) for v in VARIANTS}

    def verify(got):
        return relative_error(got, want)

    config_rows(case, configs, make_launches, outputs, poison, verify, tol, rounds, emit)
