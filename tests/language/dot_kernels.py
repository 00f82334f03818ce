"""The `tl.dot` kernels that the language tier (tests/language/test_dot.py, NumPy arrays on every
back end) and the GPU tier (tests/gpu/test_dot_gpu.py, torch CUDA tensors) both launch: one
definition, so both tiers check the same kernels against their float64 references."""

import naiad
import naiad.language as tl


@naiad.jit
def dot(
    a_ptr,
    b_ptr,
    c_ptr,
    acc_ptr,
    M: tl.constexpr,
    N: tl.constexpr,
    K: tl.constexpr,
    PRECISION: tl.constexpr,
    OUT: tl.constexpr,
    USE_ACC: tl.constexpr,
):
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, K)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])
    c_offs = offs_m[:, None] * N + offs_n[None, :]
    if USE_ACC:
        acc = tl.load(acc_ptr + c_offs)
        c = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=OUT)
    else:
        c = tl.dot(a, b, input_precision=PRECISION, out_dtype=OUT)
    tl.static_assert(c.dtype == OUT or not OUT.is_floating() or c.dtype == tl.float32)
    tl.store(c_ptr + c_offs, c)


@naiad.jit
def dot3d(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    ob = tl.arange(0, B)[:, None, None]
    om = tl.arange(0, M)[None, :, None]
    on = tl.arange(0, N)[None, None, :]
    ok_r = tl.arange(0, K)[None, None, :]
    ok_c = tl.arange(0, K)[None, :, None]
    a = tl.load(a_ptr + ob * M * K + om * K + ok_r)
    b = tl.load(b_ptr + ob * K * N + ok_c * N + on)
    c = tl.dot(a, b, input_precision="ieee")
    tl.static_assert(len(c.shape) == 3)
    tl.store(c_ptr + ob * M * N + om * N + on, c)


@naiad.jit
def dot_batched(
    a_ptr, b_ptr, acc_ptr, c_ptr, BATCH: tl.constexpr, SIZE: tl.constexpr, TRANS_A: tl.constexpr
):
    """A dot over batches of 16x16 blocks of shape `BATCH` (any rank; SIZE elements in all),
    `a` transposed on request, plus an accumulator."""
    shape = list(BATCH) + [16, 16]
    a = tl.load(a_ptr + tl.arange(0, SIZE)).reshape(shape)
    if TRANS_A:
        a = tl.trans(a)
    b = tl.load(b_ptr + tl.arange(0, SIZE)).reshape(shape)
    acc = tl.load(acc_ptr + tl.arange(0, SIZE)).reshape(shape)
    c = tl.dot(a, b, acc, input_precision="ieee")
    tl.static_assert(len(c.shape) == len(BATCH) + 2)
    tl.store(c_ptr + tl.arange(0, SIZE), c.reshape([SIZE]))


@naiad.jit
def matmul_loop(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K, BK: tl.constexpr):
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((M, N), dtype=tl.float32)
    for k0 in range(0, K, BK):
        mask_k = k0 + offs_k < K
        a = tl.load(
            a_ptr + offs_m[:, None] * K + (k0 + offs_k)[None, :], mask=mask_k[None, :], other=0.0
        )
        b = tl.load(
            b_ptr + (k0 + offs_k)[:, None] * N + offs_n[None, :], mask=mask_k[:, None], other=0.0
        )
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.float16))


@naiad.jit
def scaled_matmul_loop(
    a_ptr, s_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K, BK: tl.constexpr
):
    """c = (a * s[None, :]) @ b: the column scales `s` reach the dot through a multiply (a load
    the pipeliner takes with the operands', as attention backward's row statistics)."""
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((M, N), dtype=tl.float32)
    for k0 in range(0, K, BK):
        mask_k = k0 + offs_k < K
        a = tl.load(
            a_ptr + offs_m[:, None] * K + (k0 + offs_k)[None, :], mask=mask_k[None, :], other=0.0
        )
        s = tl.load(s_ptr + k0 + offs_k, mask=mask_k, other=0.0)
        b = tl.load(
            b_ptr + (k0 + offs_k)[:, None] * N + offs_n[None, :], mask=mask_k[:, None], other=0.0
        )
        acc += tl.dot((a * s[None, :]).to(tl.float16), b)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.float16))


@naiad.jit
def matmul_loop_typed(
    a_ptr,
    b_ptr,
    c_ptr,
    M: tl.constexpr,
    N: tl.constexpr,
    K,
    BK: tl.constexpr,
    B_K_MAJOR: tl.constexpr,
    ACC: tl.constexpr,
    IMPRECISE: tl.constexpr = None,
):
    """`matmul_loop` for any operand type: B stored (N, K) when `B_K_MAJOR`, else (K, N); the
    accumulator of type ACC (and `max_num_imprecise_acc=IMPRECISE`), stored as it is."""
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((M, N), dtype=ACC)
    for k0 in range(0, K, BK):
        ks = k0 + offs_k
        mask_k = ks < K
        a = tl.load(a_ptr + offs_m[:, None] * K + ks[None, :], mask=mask_k[None, :], other=0.0)
        if B_K_MAJOR:
            b_offsets = ks[:, None] + offs_n[None, :] * K
        else:
            b_offsets = ks[:, None] * N + offs_n[None, :]
        b = tl.load(b_ptr + b_offsets, mask=mask_k[:, None], other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=ACC, max_num_imprecise_acc=IMPRECISE)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


@naiad.jit
def matmul_loop_storing(
    a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K, BK: tl.constexpr, ZERO_B: tl.constexpr
):
    """`matmul_loop` storing inside the loop: each partial product to C, or (`ZERO_B`) zeros
    over each tile of B once read, writing through an argument the loop loads from."""
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, BK)
    c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
    acc = tl.zeros((M, N), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k0 + offs_k)[None, :])
        b_ptrs = b_ptr + (k0 + offs_k)[:, None] * N + offs_n[None, :]
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        if ZERO_B:
            tl.store(b_ptrs, tl.zeros_like(b))
        else:
            tl.store(c_ptrs, acc.to(tl.float16))
    if ZERO_B:
        tl.store(c_ptrs, acc.to(tl.float16))


@naiad.jit
def chain_fp8(a_ptr, b_ptr, v_ptr, c_ptr, M: tl.constexpr, K: tl.constexpr):
    """`chain` on fp8 as attention's fp8 mode runs it: P = (A B^T) in fp8 times V, where V is
    stored transposed ((K, M), its reduction dimension contiguous)."""
    o = tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :]
    p = tl.dot(tl.load(a_ptr + o), tl.load(b_ptr + o).T)  # [M, M]
    v = tl.load(v_ptr + tl.arange(0, K)[:, None] * M + tl.arange(0, M)[None, :]).T  # [M, K]
    tl.store(c_ptr + o, tl.dot(p.to(tl.float8e4nv), v))


@naiad.jit
def chain(a_ptr, b_ptr, d_ptr, c_ptr, M: tl.constexpr, K: tl.constexpr):
    o = tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :]
    ab = tl.dot(tl.load(a_ptr + o), tl.load(b_ptr + o).T)  # [M, M]
    c = tl.dot(ab.to(tl.float16), tl.load(d_ptr + o))  # [M, K]
    tl.store(c_ptr + o, c)


@naiad.jit
def dot_majors(
    a_ptr,
    b_ptr,
    c_ptr,
    M: tl.constexpr,
    N: tl.constexpr,
    K: tl.constexpr,
    A_K_MAJOR: tl.constexpr,
    B_K_MAJOR: tl.constexpr,
    OUT: tl.constexpr = tl.float32,
):
    """C = A B with A stored M x K (K contiguous) or K x M, B stored K x N or N x K: the
    operand layouts that take `ldmatrix` with and without `.trans` on the GPU."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    if A_K_MAJOR:
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    else:
        a = tl.load(a_ptr + rm[:, None] + rk[None, :] * M)
    if B_K_MAJOR:
        b = tl.load(b_ptr + rk[:, None] + rn[None, :] * K)
    else:
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=OUT))


@naiad.jit
def backward_loop(k_ptr, q_ptr, do_ptr, dk_ptr, dv_ptr, STEPS, N: tl.constexpr, D: tl.constexpr):
    """Attention backward's dK/dV loop in miniature: K and V (here one tile, `k`) loaded
    before the loop, and per iteration a tile Q^T stored transposed (its rows along D) that
    two dots read, as it is and transposed, and a tile dO that two dots read:
    dv += (k q^T)·dO, dk += (k dO^T)·q."""
    rn = tl.arange(0, N)
    rd = tl.arange(0, D)
    k = tl.load(k_ptr + rn[:, None] * D + rd[None, :])
    dk = tl.zeros([N, D], dtype=tl.float32)
    dv = tl.zeros([N, D], dtype=tl.float32)
    for step in range(STEPS):
        rows = step * N + rn
        q_t = tl.load(q_ptr + rows[None, :] * D + rd[:, None])  # [D, N], contiguous along D
        do = tl.load(do_ptr + rows[:, None] * D + rd[None, :])  # [N, D]
        p_t = tl.dot(k, q_t).to(tl.float16)
        dv += tl.dot(p_t, do)
        dp_t = tl.dot(k, tl.trans(do)).to(tl.float16)
        dk += tl.dot(dp_t, tl.trans(q_t))
    tl.store(dk_ptr + rn[:, None] * D + rd[None, :], dk)
    tl.store(dv_ptr + rn[:, None] * D + rd[None, :], dv)
