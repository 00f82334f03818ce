"""Matrix products: mm, addmm, bmm and baddbmm (torch composes matmul and linear of them), from
one blocked kernel over a batch of (M, K) x (K, N) products.

Each program computes a BLOCK_M x BLOCK_N tile of one product, walking K in BLOCK_K steps with
`tl.dot` (the CPU back end's register-blocked micro-kernel; tensor cores on a GPU), accumulating
in fp32 (fp64 for fp64), then applies alpha and beta * bias and stores in the operands' dtype.
The sizes are specialized as any argument (a multiple of 16 or not): their masks then stay
uniform over 16-byte pieces, so a GPU's loads are 16-byte `cp.async` copies pipelined into the
tensor cores' buffers (not specialized, every element was masked on its own and the K loop
was not pipelined: 0.09 of cuBLAS on an H200).
fp32 operands multiply in full precision ("ieee"), as torch's default. Operands keep their
strides (a transposed weight is read as it lies). Integer products are left to torch.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..dtypes import Unsupported, tl_dtype
from ..registry import aten

__all__ = ["addmm", "baddbmm", "bmm", "mm"]

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


@jit(do_not_specialize=["alpha", "beta"])
def matmul_kernel(a, b, c, bias, M, N, K, s_ab, s_am, s_ak, s_bb, s_bk, s_bn, s_cb, s_cm, s_cn,
                  s_xb, s_xm, s_xn, alpha, beta, HAS_BIAS: tl.constexpr, SCALED: tl.constexpr,
                  ACC: tl.constexpr, PRECISION: tl.constexpr, EVEN_K: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):  # fmt: skip
    """c[p] = alpha * a[p] @ b[p] + beta * bias[p] for the batch entry p = program_id(1).

    Programs walk the tiles in groups of GROUP_M tile rows, column after column, so that the
    programs running at once share their rows of `a` and columns of `b` in the L2 cache. Rows
    and columns past the matrix wrap around (`% M`, `% N`) instead of being masked: their
    values are computed and never stored, and the K loop's loads stay unmasked when BLOCK_K
    divides K (EVEN_K)."""
    p = tl.program_id(1).to(tl.int64)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid = tl.program_id(0)
    group = pid // (GROUP_M * tiles_n)
    first_m = group * GROUP_M
    group_m = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % (GROUP_M * tiles_n)) % group_m
    tile_n = (pid % (GROUP_M * tiles_n)) // group_m
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a + p * s_ab + (rows % M)[:, None] * s_am + ks[None, :] * s_ak
    b_ptrs = b + p * s_bb + ks[:, None] * s_bk + (cols % N)[None, :] * s_bn
    acc = tl.zeros([BLOCK_M, BLOCK_N], ACC)
    for k in range(0, K, BLOCK_K):
        if EVEN_K:
            a_tile = tl.load(a_ptrs)
            b_tile = tl.load(b_ptrs)
        else:
            a_tile = tl.load(a_ptrs, mask=ks[None, :] < K - k, other=0.0)
            b_tile = tl.load(b_ptrs, mask=ks[:, None] < K - k, other=0.0)
        acc = tl.dot(a_tile, b_tile, acc, input_precision=PRECISION, out_dtype=ACC)
        a_ptrs += BLOCK_K * s_ak
        b_ptrs += BLOCK_K * s_bk
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    if SCALED:
        acc = acc * alpha
    if HAS_BIAS:
        x = tl.load(bias + p * s_xb + rows[:, None] * s_xm + cols[None, :] * s_xn, mask=mask)
        acc += x.to(ACC) * beta
    offsets = p * s_cb + rows[:, None] * s_cm + cols[None, :] * s_cn
    tl.store(c + offsets, acc.to(c.dtype.element_ty), mask=mask)


def _blocks(device: torch.device, dtype, m: int, n: int) -> tuple[int, int, int, dict]:
    """(BLOCK_M, BLOCK_N, BLOCK_K, launch options). On a GPU, half-precision products take
    the tensor-core tiles of Triton's matmul tutorial (128x256x64 with 8 warps, or 64x128x32
    with 4 for products too small to fill it), pipelined 3 or 4 deep; fp32 and fp64 multiply
    in full precision, off the tensor cores."""
    if device.type == "cpu":
        return 64, 64, 32, {}
    if dtype in (torch.float16, torch.bfloat16):
        if m >= 128 and n >= 256:
            return 128, 256, 64, {"num_warps": 8, "num_stages": 3}
        return 64, 128, 32, {"num_warps": 4, "num_stages": 4}
    return 128, 128, 32, {"num_warps": 8, "num_stages": 3}


def _product(a, b, bias=None, alpha=1, beta=1, out=None):
    """alpha * a @ b + beta * bias over 3-dim a (P, M, K), b (P, K, N); bias broadcastable."""
    if a.dtype not in _FLOATS or b.dtype != a.dtype:
        raise Unsupported(f"matrix products of {a.dtype} and {b.dtype}")
    batch, m, k = a.shape
    n = b.shape[2]
    c = torch.empty(batch, m, n, dtype=a.dtype, device=a.device) if out is None else out
    if c.numel() == 0:
        return c
    has_bias = bias is not None and beta != 0
    x = bias.expand(batch, m, n) if has_bias else c
    block_m, block_n, block_k, options = _blocks(a.device, a.dtype, m, n)
    grid = (((m + block_m - 1) // block_m) * ((n + block_n - 1) // block_n), batch)
    acc = tl.float64 if a.dtype == torch.float64 else tl.float32
    precision = "ieee" if a.dtype in (torch.float32, torch.float64) else None
    tl_dtype(a.dtype)
    matmul_kernel[grid](
        a, b, c, x, m, n, k, *a.stride(), *b.stride(), *c.stride(), *x.stride(),
        float(alpha), float(beta), has_bias, alpha != 1, acc, precision, k % block_k == 0,
        block_m, block_n, block_k, 8, **options,
    )  # fmt: skip
    return c


def _into(result, out):
    return result if out is None else out.resize_(result.shape).copy_(result)


@aten("mm.default", "mm.out")
def mm(input, mat2, *, out=None):
    """input @ mat2 for matrices."""
    return _into(_product(input[None], mat2[None])[0], out)


@aten("addmm.default", "addmm.out")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * mat1 @ mat2 (input broadcast to the product's shape)."""
    m, n = mat1.shape[0], mat2.shape[1]
    bias = input.expand(m, n)[None]
    return _into(_product(mat1[None], mat2[None], bias, alpha, beta)[0], out)


@aten("bmm.default", "bmm.out")
def bmm(input, mat2, *, out=None):
    """A batch of matrix products."""
    return _into(_product(input, mat2), out)


@aten("baddbmm.default", "baddbmm.out")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * batch1 @ batch2, batch by batch."""
    p, m, n = batch1.shape[0], batch1.shape[1], batch2.shape[2]
    return _into(_product(batch1, batch2, input.expand(p, m, n), alpha, beta), out)
