"""A block-scaled matmul kernel (tl.dot_scaled) over every operand format: run by
tests/language/test_dot_scaled.py, compiled for the GPU by
tests/backends/nvidia/test_dot_scaled_ptxas.py."""

import naiad
import naiad.language as tl


@naiad.jit
def scaled_matmul(
    a, a_scale, b, b_scale, acc_in, out,
    M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, A_FORMAT: tl.constexpr,
    B_FORMAT: tl.constexpr, A_K_PACK: tl.constexpr, B_K_PACK: tl.constexpr,
    SCALED: tl.constexpr, WITH_ACC: tl.constexpr,
):  # fmt: skip
    AM: tl.constexpr = M // 2 if (A_FORMAT == "e2m1" and not A_K_PACK) else M
    AK: tl.constexpr = K // 2 if (A_FORMAT == "e2m1" and A_K_PACK) else K
    BK: tl.constexpr = K // 2 if (B_FORMAT == "e2m1" and B_K_PACK) else K
    BN: tl.constexpr = N // 2 if (B_FORMAT == "e2m1" and not B_K_PACK) else N
    x = tl.load(a + tl.arange(0, AM)[:, None] * AK + tl.arange(0, AK)[None, :])
    y = tl.load(b + tl.arange(0, BK)[:, None] * BN + tl.arange(0, BN)[None, :])
    rm, rn, groups = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K // 32)
    if SCALED:
        xs = tl.load(a_scale + rm[:, None] * (K // 32) + groups[None, :])
        ys = tl.load(b_scale + rn[:, None] * (K // 32) + groups[None, :])
    else:
        xs = None
        ys = None
    c = rm[:, None] * N + rn[None, :]
    acc = tl.load(acc_in + c) if WITH_ACC else None
    result = tl.dot_scaled(
        x, xs, A_FORMAT, y, ys, B_FORMAT, acc, lhs_k_pack=A_K_PACK, rhs_k_pack=B_K_PACK
    )
    tl.store(out + c, result)
