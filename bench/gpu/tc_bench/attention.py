"""Attention-forward rows of bench/gpu/tensor_cores.py: tutorial 06's `_attn_fwd` (its `.fn`, one
config at a time, the pointers passed and the descriptors made in the kernel, as the example's
host code launches it) and tensor_core_kernels.py's `attention_fwd_pointers`.

q, k, v are fresh normal samples in fp16, sm_scale = 1/sqrt(D). The check: the whole output is
finite, and four heads (first and last of the first and last batch) match a float64 softmax
attention within a relative error of 1e-2 (P and O are rounded to fp16). In tutorial 06's fp8
mode, of the fp8e5 inputs, within 0.1 (the output is fp8e5 too), the first head only: its V
descriptor spans Z*H*N columns of the Z*H*D*N-element transposed V, so only the first Z*H/D
heads (one at D128) lie inside it and the others read zeros for V, under Triton as under Naiad.
"""

from __future__ import annotations

import math

import torch

from . import measure
from .measure import VARIANTS, config_rows

TOL = 1e-2
FP8_TOL = 0.1  # fp8e5 inputs and output: two mantissa bits, a rounding of up to 1/8


def reference(q, k, v, causal: bool, sm_scale: float, heads) -> torch.Tensor:
    """Float64 attention of the (batch, head) pairs `heads`, stacked."""
    outs = []
    for z, h in heads:
        s = (q[z, h].double() @ k[z, h].double().T) * sm_scale
        if causal:
            n = s.shape[0]
            keep = torch.ones(n, n, dtype=torch.bool, device=s.device).tril()
            s = s.masked_fill(~keep, float("-inf"))
        outs.append(torch.softmax(s, dim=-1) @ v[z, h].double())
    return torch.stack(outs)


def verifier(q, k, v, causal: bool, sm_scale: float, heads=None):
    Z, H = q.shape[:2]
    heads = heads or sorted({(0, 0), (0, H - 1), (Z - 1, 0), (Z - 1, H - 1)})
    want = reference(q, k, v, causal, sm_scale, heads)

    def verify(out) -> float:
        out = out.to(torch.float16)  # fp8 has no isfinite
        if not torch.isfinite(out).all():
            return math.inf
        got = torch.stack([out[z, h] for z, h in heads]).double()
        return ((got - want).norm() / want.norm()).item()

    return verify


def _allocate(size, align, stream):
    return torch.empty(size, dtype=torch.int8, device=measure.DEVICE)


def launcher(kind: str, module, q, k, v, o, case, config, sm_scale: float):
    """A function that launches `config` of the `kind` kernel ("tutorial" or "pointers") of
    `module` and returns the CompiledKernel."""
    Z, H, N, D = q.shape
    sizes = dict(
        BLOCK_M=config.block_m,
        BLOCK_N=config.block_n,
        num_warps=config.num_warps,
        num_stages=config.num_stages,
    )
    if kind == "pointers":
        kernel, grid = module.attention_fwd_pointers, (N // config.block_m, Z * H)

        def launch():
            return kernel[grid](
                q, k, v, o, sm_scale, q.stride(1), q.stride(2), N, HEAD_DIM=D,
                CAUSAL=case.causal, **sizes,
            )  # fmt: skip

        return launch
    set_allocator = getattr(module.triton, "set_allocator", None)
    if set_allocator is not None:  # global scratch for the kernel's tensor descriptors
        set_allocator(_allocate)
    lse = torch.empty((Z, H, N), dtype=torch.float32, device=measure.DEVICE)
    kernel, grid = module._attn_fwd.fn, (N // config.block_m, Z * H, 1)

    def launch():
        return kernel[grid](
            sm_scale, lse, Z, H, q, k, v, o, N_CTX=N, HEAD_DIM=D, FP8_OUTPUT=case.fp8,
            STAGE=3 if case.causal else 1, warp_specialize=False, IS_HOPPER=False, **sizes,
        )  # fmt: skip

    return launch


def case_rows(case, configs, rounds: int, sources: dict, emit) -> None:
    """One row per config of `case` and the best-of-configs row, each passed to `emit` as it is
    done. `sources` has the modules of each variant: "attention" (examples/06) and "own"
    (tensor_core_kernels.py)."""
    mods = sources["own"] if case.kernel == "pointers" else sources["attention"]
    shape = (case.Z, case.H, case.N, case.D)
    q, k, v = (torch.randn(shape, device=measure.DEVICE, dtype=torch.float16) for _ in range(3))
    sm_scale = 1.0 / math.sqrt(case.D)
    passed, heads = (q, k, v), None
    if case.fp8:  # the kernel reads V transposed, (Z, H, D, N) in memory, as the tutorial's host
        q, k, v = (x.to(torch.float8_e5m2) for x in (q, k, v))
        passed, heads = (q, k, v.transpose(2, 3).contiguous()), [(0, 0)]
    inputs = (x.to(torch.float16) for x in (q, k, v))
    verify = verifier(*inputs, case.causal, sm_scale, heads)
    outputs = {variant: torch.empty_like(q) for variant in VARIANTS}

    def make_launches(config):
        return {
            variant: launcher(case.kernel, mods[variant], *passed, outputs[variant], case, config,
                              sm_scale)
            for variant in VARIANTS
        }  # fmt: skip

    tol = FP8_TOL if case.fp8 else TOL
    config_rows(case, configs, make_launches, outputs, float("nan"), verify, tol, rounds, emit)
