"""Tutorial 06 — fused attention, forward (Triton's `python/tutorials/06-fused-attention.py`).

Flash-Attention v2's forward pass as Triton 3.x's tutorial writes it, unchanged but for the
imports: `_attn_fwd` builds tensor descriptors in the kernel (`tl.make_tensor_descriptor`, through
`_maybe_make_tensor_desc`) and runs `_attn_fwd_inner` once for a non-causal pass (STAGE=1 gives the
inner loop STAGE 3: every key block) or twice for a causal one (STAGE=3: the off-band blocks,
then the diagonal block with its mask), with an exp2-based online softmax. fp16 in and out, as in
the tutorial. The autotuning configs are small ones of our own; the host code is Naiad's own, its
tensors made on DEVICE (the active driver's device).
Run alone: `python examples/06_fused_attention.py`.
"""

import math
import time

import numpy as np
import torch

import naiad as triton
import naiad.language as tl

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q,  #
                    desc_k, desc_v,  #
                    offset_y, dtype: tl.constexpr, start_m, qk_scale,  #
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,  #
                    STAGE: tl.constexpr, offs_m: tl.constexpr, offs_n: tl.constexpr,  #
                    N_CTX: tl.constexpr, warp_specialize: tl.constexpr, IS_HOPPER: tl.constexpr):
    # range of values handled by this stage
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    # causal = False
    else:
        lo, hi = 0, N_CTX
    offsetk_y = offset_y + lo
    if dtype == tl.float8e5:
        offsetv_y = offset_y * HEAD_DIM + lo
    else:
        offsetv_y = offset_y + lo
    # loop over k, v and update accumulator
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=warp_specialize):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        # -- compute qk ----
        k = desc_k.load([offsetk_y, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        # -- compute correction factor
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        # -- update output accumulator --
        if not IS_HOPPER and warp_specialize and BLOCK_M == 128 and HEAD_DIM == 128:
            BM: tl.constexpr = acc.shape[0]
            BN: tl.constexpr = acc.shape[1]
            acc0, acc1 = acc.reshape([BM, 2, BN // 2]).permute(0, 2, 1).split()
            acc0 = acc0 * alpha[:, None]
            acc1 = acc1 * alpha[:, None]
            acc = tl.join(acc0, acc1).permute(0, 2, 1).reshape([BM, BN])
        else:
            acc = acc * alpha[:, None]
        # prepare p and v for the dot
        if dtype == tl.float8e5:
            v = desc_v.load([0, offsetv_y]).T
        else:
            v = desc_v.load([offsetv_y, 0])
        p = p.to(dtype)
        # note that this non transposed v for FP8 is only supported on Blackwell
        acc = tl.dot(p, v, acc)
        # update m_i and l_i
        # place this at the end of the loop to reduce register pressure
        l_i = l_i * alpha + l_ij
        m_i = m_ij
        offsetk_y += BLOCK_N
        offsetv_y += BLOCK_N
    return acc, l_i, m_i


# ---------------------------------------------------------------------------------------------
# Autotuning space (ours: the tutorial's is GPU-sized)
# ---------------------------------------------------------------------------------------------

def _time_once(fn, quantiles=None):
    """A one-shot benchmarker for the autotuner: the interpreter runs each config once. A GPU
    runs launches asynchronously, so the time is taken after the device is done."""
    start = time.perf_counter()
    fn()
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)
    ms = (time.perf_counter() - start) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


configs = [
    triton.Config({'BLOCK_M': BM, 'BLOCK_N': BN}, num_stages=s, num_warps=w)
    for BM in [32, 64]
    for BN in [32, 64]
    for s in [2]
    for w in [4]
]


def keep(conf):
    # The causal split needs whole key blocks inside each query block.
    return conf.kwargs["BLOCK_M"] >= conf.kwargs["BLOCK_N"]


def prune_invalid_configs(configs, named_args, **kwargs):
    # Query blocks no longer than the sequence; key blocks no wider than the head (the kernel
    # asserts BLOCK_N <= HEAD_DIM).
    N_CTX, HEAD_DIM = kwargs["N_CTX"], kwargs["HEAD_DIM"]
    return [conf for conf in configs
            if conf.kwargs.get("BLOCK_M", 0) <= N_CTX and conf.kwargs.get("BLOCK_N", 0) <= HEAD_DIM]


@triton.jit
def _maybe_make_tensor_desc(desc_or_ptr, shape, strides, block_shape):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)


@triton.autotune(configs=list(filter(keep, configs)), key=["N_CTX", "HEAD_DIM", "FP8_OUTPUT", "warp_specialize"],
                 prune_configs_by={'early_config_prune': prune_invalid_configs}, do_bench=_time_once)
@triton.jit
def _attn_fwd(sm_scale, M,  #
              Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX,  #
              HEAD_DIM: tl.constexpr,  #
              BLOCK_M: tl.constexpr,  #
              BLOCK_N: tl.constexpr,  #
              FP8_OUTPUT: tl.constexpr,  #
              STAGE: tl.constexpr,  #
              warp_specialize: tl.constexpr,  #
              IS_HOPPER: tl.constexpr,  #
              ):
    dtype = tl.float8e5 if FP8_OUTPUT else tl.float16
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H

    y_dim = Z * H * N_CTX
    desc_q = _maybe_make_tensor_desc(desc_q, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_M, HEAD_DIM])
    if FP8_OUTPUT:
        desc_v = _maybe_make_tensor_desc(desc_v, shape=[HEAD_DIM, y_dim], strides=[N_CTX, 1],
                                         block_shape=[HEAD_DIM, BLOCK_N])
    else:
        desc_v = _maybe_make_tensor_desc(desc_v, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                         block_shape=[BLOCK_N, HEAD_DIM])
    desc_k = _maybe_make_tensor_desc(desc_k, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_N, HEAD_DIM])
    desc_o = _maybe_make_tensor_desc(desc_o, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_M, HEAD_DIM])

    offset_y = off_z * (N_CTX * H) + off_h * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    # initialize offsets
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    # initialize pointer to m and l
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # load scales
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/log(2)
    # load q: it will stay in SRAM throughout
    q = desc_q.load([qo_offset_y, 0])
    # stage 1: off-band
    # For causal = True, STAGE = 3 and _attn_fwd_inner gets 1 as its STAGE
    # For causal = False, STAGE = 1, and _attn_fwd_inner gets 3 as its STAGE
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q,  #
                                        desc_k, desc_v,  #
                                        offset_y, dtype, start_m, qk_scale,  #
                                        BLOCK_M, HEAD_DIM, BLOCK_N,  #
                                        4 - STAGE, offs_m, offs_n, N_CTX,  #
                                        warp_specialize, IS_HOPPER)
    # stage 2: on-band
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q,  #
                                        desc_k, desc_v,  #
                                        offset_y, dtype, start_m, qk_scale,  #
                                        BLOCK_M, HEAD_DIM, BLOCK_N,  #
                                        2, offs_m, offs_n, N_CTX,  #
                                        warp_specialize, IS_HOPPER)
    # epilogue
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz * N_CTX + offs_m
    tl.store(m_ptrs, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(dtype))


# ---------------------------------------------------------------------------------------------
# Host side (Naiad's own)
# ---------------------------------------------------------------------------------------------

def attention(q, k, v, causal, sm_scale, config=None):
    """softmax(q k^T * sm_scale [causal mask]) v for fp16 (Z, H, N_CTX, HEAD_DIM) tensors.
    Returns the output and M, the base-2 log-sum-exp of each query row. With `config`, that
    config is launched directly instead of the autotuner's choice."""
    HEAD_DIM = q.shape[-1]
    assert q.shape == k.shape == v.shape and q.dtype == k.dtype == v.dtype == torch.float16
    assert HEAD_DIM in {16, 32, 64, 128, 256}
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    M = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
    if hasattr(triton, "set_allocator"):  # global scratch for in-kernel descriptors on a GPU
        triton.set_allocator(
            lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=q.device))
    grid = lambda META: (triton.cdiv(q.shape[2], META["BLOCK_M"]), q.shape[0] * q.shape[1], 1)
    kernel, meta = (_attn_fwd, {}) if config is None else (_attn_fwd.fn, config.all_kwargs())
    # The pointers themselves are passed; the kernel makes the tensor descriptors.
    kernel[grid](sm_scale, M, q.shape[0], q.shape[1], q, k, v, o,
                 N_CTX=q.shape[2], HEAD_DIM=HEAD_DIM, FP8_OUTPUT=False,
                 STAGE=3 if causal else 1, warp_specialize=False, IS_HOPPER=False, **meta)
    return o, M


def reference(q, k, v, causal, sm_scale):
    """Float64 attention and its base-2 log-sum-exp per query row."""
    q, k, v = (t.cpu().double().numpy() for t in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) * sm_scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    s_max = s.max(axis=-1, keepdims=True)
    p = np.exp(s - s_max)
    denom = p.sum(axis=-1, keepdims=True)
    lse2 = (s_max + np.log(denom))[..., 0] / math.log(2)
    return (p / denom) @ v, lse2


def check(Z=1, H=2, N_CTX=128, HEAD_DIM=64, sm_scale=0.5, seed=0, every_config=True):
    generator = torch.Generator(device=DEVICE).manual_seed(seed)
    shape = (Z, H, N_CTX, HEAD_DIM)
    q, k, v = (torch.empty(shape, device=DEVICE).normal_(0.0, 0.5, generator=generator)
               .to(torch.float16) for _ in range(3))
    max_err = rel_err = 0.0
    for causal in (False, True):
        o, M = attention(q, k, v, causal, sm_scale)
        ref_o, ref_m = reference(q, k, v, causal, sm_scale)
        diff = o.cpu().double().numpy() - ref_o
        rel = float(np.linalg.norm(diff) / np.linalg.norm(ref_o))
        # P is rounded to fp16 before the P @ V dot, and O to fp16 at the end (2^-11 each).
        assert rel <= 4e-3, f"attention causal={causal}: output rel {rel:.2e}"
        rel_m = float(np.linalg.norm(M.cpu().double().numpy() - ref_m) / np.linalg.norm(ref_m))
        assert rel_m <= 1e-5, f"attention causal={causal}: log-sum-exp rel {rel_m:.2e}"
        max_err, rel_err = max(max_err, float(np.abs(diff).max())), max(rel_err, rel)
    best = _attn_fwd.best_config.kwargs
    if every_config:  # the autotuner ran every config, but only the best one's output is checked
        for config in _attn_fwd.prune_configs({"N_CTX": N_CTX, "HEAD_DIM": HEAD_DIM}):
            for causal in (False, True):
                o, _ = attention(q, k, v, causal, sm_scale, config=config)
                ref_o, _ = reference(q, k, v, causal, sm_scale)
                rel = float(np.linalg.norm(o.cpu().double().numpy() - ref_o) / np.linalg.norm(ref_o))
                assert rel <= 4e-3, f"attention {config} causal={causal}: output rel {rel:.2e}"
    return {"max_err": max_err, "rel_err": rel_err,
            "best_config": f"BLOCK_M={best['BLOCK_M']} BLOCK_N={best['BLOCK_N']}"}


def main():
    result = check()
    print(f"fused_attention: ok (max err {result['max_err']:.2e}, rel {result['rel_err']:.1e}; "
          f"causal and non-causal, {result['best_config']})")
    return result


if __name__ == "__main__":
    main()
