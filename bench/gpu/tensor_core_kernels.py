"""Tensor-core kernels of our own for bench/gpu/tensor_cores.py, beside the tutorials' (examples/03
and 06): a plain pointer-based attention forward and an integer matmul. Written with `naiad`
imports, as the examples are; the bench compiles this file through Triton too, its two imports
swapped."""

import naiad as triton
import naiad.language as tl


@triton.jit
def attention_fwd_pointers(
    Q,
    K,
    V,
    Out,
    sm_scale,
    stride_head,
    stride_row,
    N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
):
    """softmax(Q K^T * sm_scale) V for one block of BLOCK_M query rows of one (batch, head).

    Q, K, V and Out are contiguous (Z, H, N_CTX, HEAD_DIM) with the same strides; programs run
    over (N_CTX / BLOCK_M, Z * H). N_CTX is a multiple of BLOCK_M and of BLOCK_N (BLOCK_N
    divides BLOCK_M), so only the causal mask needs `where`. The softmax is the online one in
    base 2: a running row maximum `m_i` and row sum `l_i`, the accumulator rescaled by
    2^(m_old - m_new) whenever the maximum grows."""
    start_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64) * stride_head
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + head + rows[:, None] * stride_row + dims[None, :])
    k_ptrs = K + head + cols[:, None] * stride_row + dims[None, :]
    v_ptrs = V + head + cols[:, None] * stride_row + dims[None, :]
    scale = sm_scale * 1.4426950408889634  # log2(e): exp(x) = exp2(x * log2(e))
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # Causal: key blocks up to the one holding this block's last row (the first key block is
    # never fully masked, so every row's maximum is finite from the first step on).
    end = (start_m + 1) * BLOCK_M if CAUSAL else N_CTX
    for start_n in range(0, end, BLOCK_N):
        k = tl.load(k_ptrs + start_n * stride_row)
        s = tl.dot(q, tl.trans(k)) * scale
        if CAUSAL:
            s = tl.where(rows[:, None] >= start_n + cols[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_row)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(Out + head + rows[:, None] * stride_row + dims[None, :], out.to(Out.dtype.element_ty))


@triton.jit
def int_matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
):
    """C (int32) = A @ B for int8 A (M, K) and B (K, N): tutorial 03's tiling and grouped
    program order, with the int32 accumulator an 8-bit integer dot requires (the tutorial
    kernel's is fp32, which integer operands do not take)."""
    pid = tl.program_id(axis=0)
    blocks_m = tl.cdiv(M, BLOCK_SIZE_M)
    blocks_n = tl.cdiv(N, BLOCK_SIZE_N)
    in_group = GROUP_SIZE_M * blocks_n
    first_m = (pid // in_group) * GROUP_SIZE_M
    group_m = min(blocks_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + (pid % in_group) % group_m
    pid_n = (pid % in_group) // group_m
    rows = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    cols = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    ks = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        left = K - k * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=ks[None, :] < left, other=0)
        b = tl.load(b_ptrs, mask=ks[:, None] < left, other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    out_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    out_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + out_m[:, None] * stride_cm + out_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(out_m[:, None] < M) & (out_n[None, :] < N))
