"""Tutorial 06, block-pointer edition — the fused-attention forward pass as Triton 3.0–3.2 wrote it.

Before tensor descriptors, Triton's `06-fused-attention.py` walked K and V with block pointers:
`tl.make_block_ptr` (K read transposed through its `order`), `tl.advance`, and loads and stores
through block pointers, with the same causal STAGE split and exp2 online softmax as today's
edition. The kernels are Triton's (triton-lang/triton, python/tutorials/06-fused-attention.py at
dc6ee3e), unchanged but for the imports; the host code is Naiad's own, its tensors made on DEVICE
(the active driver's device).
Run alone: `python examples/06b_fused_attention_block_ptr.py`.
"""

import math

import numpy as np
import torch

import naiad as triton
import naiad.language as tl

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q,  #
                    K_block_ptr, V_block_ptr,  #
                    start_m, qk_scale,  #
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,  #
                    STAGE: tl.constexpr, offs_m: tl.constexpr, offs_n: tl.constexpr,  #
                    N_CTX: tl.constexpr, fp8_v: tl.constexpr):
    # range of values handled by this stage
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    # causal = False
    else:
        lo, hi = 0, N_CTX
    K_block_ptr = tl.advance(K_block_ptr, (0, lo))
    V_block_ptr = tl.advance(V_block_ptr, (lo, 0))
    # loop over k, v and update accumulator
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        # -- compute qk ----
        k = tl.load(K_block_ptr)
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
        l_ij = tl.sum(p, 1)
        # -- update m_i and l_i
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        # -- update output accumulator --
        acc = acc * alpha[:, None]
        # update acc
        v = tl.load(V_block_ptr)
        if fp8_v:
            p = p.to(tl.float8e5)
        else:
            p = p.to(tl.float16)
        acc = tl.dot(p, v, acc)
        # update m_i and l_i
        m_i = m_ij
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out,  #
              stride_qz, stride_qh, stride_qm, stride_qk,  #
              stride_kz, stride_kh, stride_kn, stride_kk,  #
              stride_vz, stride_vh, stride_vk, stride_vn,  #
              stride_oz, stride_oh, stride_om, stride_on,  #
              Z, H, N_CTX,  #
              HEAD_DIM: tl.constexpr,  #
              BLOCK_M: tl.constexpr,  #
              BLOCK_N: tl.constexpr,  #
              STAGE: tl.constexpr  #
              ):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    qvk_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh

    # block pointers
    Q_block_ptr = tl.make_block_ptr(
        base=Q + qvk_offset,
        shape=(N_CTX, HEAD_DIM),
        strides=(stride_qm, stride_qk),
        offsets=(start_m * BLOCK_M, 0),
        block_shape=(BLOCK_M, HEAD_DIM),
        order=(1, 0),
    )
    v_order: tl.constexpr = (0, 1) if V.dtype.element_ty == tl.float8e5 else (1, 0)
    V_block_ptr = tl.make_block_ptr(
        base=V + qvk_offset,
        shape=(N_CTX, HEAD_DIM),
        strides=(stride_vk, stride_vn),
        offsets=(0, 0),
        block_shape=(BLOCK_N, HEAD_DIM),
        order=v_order,
    )
    K_block_ptr = tl.make_block_ptr(
        base=K + qvk_offset,
        shape=(HEAD_DIM, N_CTX),
        strides=(stride_kk, stride_kn),
        offsets=(0, 0),
        block_shape=(HEAD_DIM, BLOCK_N),
        order=(0, 1),
    )
    O_block_ptr = tl.make_block_ptr(
        base=Out + qvk_offset,
        shape=(N_CTX, HEAD_DIM),
        strides=(stride_om, stride_on),
        offsets=(start_m * BLOCK_M, 0),
        block_shape=(BLOCK_M, HEAD_DIM),
        order=(1, 0),
    )
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
    q = tl.load(Q_block_ptr)
    # stage 1: off-band
    # For causal = True, STAGE = 3 and _attn_fwd_inner gets 1 as its STAGE
    # For causal = False, STAGE = 1, and _attn_fwd_inner gets 3 as its STAGE
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_block_ptr, V_block_ptr,  #
                                        start_m, qk_scale,  #
                                        BLOCK_M, HEAD_DIM, BLOCK_N,  #
                                        4 - STAGE, offs_m, offs_n, N_CTX, V.dtype.element_ty == tl.float8e5  #
                                        )
    # stage 2: on-band
    if STAGE & 2:
        # barrier makes it easier for compielr to schedule the
        # two loops independently
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_block_ptr, V_block_ptr,  #
                                        start_m, qk_scale,  #
                                        BLOCK_M, HEAD_DIM, BLOCK_N,  #
                                        2, offs_m, offs_n, N_CTX, V.dtype.element_ty == tl.float8e5  #
                                        )
    # epilogue
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz * N_CTX + offs_m
    tl.store(m_ptrs, m_i)
    tl.store(O_block_ptr, acc.to(Out.type.element_ty))


# ---------------------------------------------------------------------------------------------
# Host side (Naiad's own)
# ---------------------------------------------------------------------------------------------

def attention(q, k, v, causal, sm_scale, BLOCK_M=64, BLOCK_N=32):
    """softmax(q k^T * sm_scale [causal mask]) v for fp16 (Z, H, N_CTX, HEAD_DIM) tensors, any
    strides; returns the output and the base-2 log-sum-exp of each query row."""
    HEAD_DIM = q.shape[-1]
    assert q.shape == k.shape == v.shape and HEAD_DIM in {16, 32, 64, 128, 256}
    o = torch.empty_like(q)
    M = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(q.shape[2], BLOCK_M), q.shape[0] * q.shape[1], 1)
    _attn_fwd[grid](q, k, v, sm_scale, M, o,
                    *q.stride(), *k.stride(), *v.stride(), *o.stride(),
                    q.shape[0], q.shape[1], N_CTX=q.shape[2], HEAD_DIM=HEAD_DIM,
                    BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, STAGE=3 if causal else 1,
                    num_warps=4, num_stages=3)
    return o, M


def reference(q, k, v, causal, sm_scale):
    q, k, v = (t.cpu().double().numpy() for t in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) * sm_scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    s_max = s.max(axis=-1, keepdims=True)
    p = np.exp(s - s_max)
    denom = p.sum(axis=-1, keepdims=True)
    return (p / denom) @ v, (s_max + np.log(denom))[..., 0] / math.log(2)


def check(Z=1, H=2, N_CTX=128, HEAD_DIM=64, sm_scale=0.5, seed=0):
    """Causal and non-causal, two tilings; K is given a non-contiguous (transposed) layout, which
    block pointers handle through their strides."""
    generator = torch.Generator(device=DEVICE).manual_seed(seed)
    shape = (Z, H, N_CTX, HEAD_DIM)
    q, k, v = (torch.empty(shape, device=DEVICE).normal_(0.0, 0.5, generator=generator)
               .to(torch.float16) for _ in range(3))
    k = k.transpose(2, 3).contiguous().transpose(2, 3)  # same values, strides (.., 1, N_CTX)
    max_err = rel_err = 0.0
    for causal in (False, True):
        ref_o, ref_m = reference(q, k, v, causal, sm_scale)
        for BLOCK_M, BLOCK_N in ((64, 32), (32, 32)):
            o, M = attention(q, k, v, causal, sm_scale, BLOCK_M, BLOCK_N)
            diff = o.cpu().double().numpy() - ref_o
            rel = float(np.linalg.norm(diff) / np.linalg.norm(ref_o))
            assert rel <= 4e-3, f"attention (block ptr) causal={causal}: output rel {rel:.2e}"
            rel_m = float(np.linalg.norm(M.cpu().double().numpy() - ref_m) / np.linalg.norm(ref_m))
            assert rel_m <= 1e-5, f"attention (block ptr) causal={causal}: lse rel {rel_m:.2e}"
            max_err, rel_err = max(max_err, float(np.abs(diff).max())), max(rel_err, rel)
    return {"max_err": max_err, "rel_err": rel_err}


def main():
    result = check()
    print(f"fused_attention_block_ptr: ok (max err {result['max_err']:.2e}, "
          f"rel {result['rel_err']:.1e}; causal and non-causal, 2 tilings)")
    return result


if __name__ == "__main__":
    main()
