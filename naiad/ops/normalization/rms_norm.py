"""rms_norm: x / sqrt(mean(x^2) + eps) * weight over the last dims. The forward is one row
kernel (two passes over each row: the sum of squares, then the scaled output; one launch where
the composed form took four); the backward is the shared normalization backward without
centering. torch composes its own rms_norm of the ops Naiad registers, so the switch needs no
entry."""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..differentiable import apply
from ..dtypes import tl_dtype
from ..reduce.kernels import _rows
from ..reduce.launch import accumulator, launch_rows
from ..reduce.rows import as_rows
from .backward import normalized_backward

__all__ = ["rms_norm"]


@jit(do_not_specialize=["M", "N"])
def rms_norm_kernel(x, out, M, N, s_m, s_n, s_out, weight, rstd, EPS: tl.constexpr,
                    HAS_WEIGHT: tl.constexpr, COMPUTE: tl.constexpr, INDEX64: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """out[m, :] = x[m, :] * rstd[m] (* weight), rstd[m] = 1 / sqrt(mean(x[m, :]^2) + EPS);
    `out` is (M, N) contiguous."""
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    squares = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        v = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask, other=0)
        squares += v.to(COMPUTE) * v.to(COMPUTE)
    inverse = 1.0 / tl.sqrt(tl.sum(squares, 1) / N + EPS)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        xw = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask).to(COMPUTE)
        y = xw * inverse[:, None]
        if HAS_WEIGHT:
            y = y * tl.load(weight + cols, mask=cols < N).to(COMPUTE)[None, :]
        tl.store(out + rows[:, None] * N + cols[None, :], y.to(out.dtype.element_ty), mask=mask)
    tl.store(rstd + rows, inverse.to(rstd.dtype.element_ty), mask=row_mask)


def _forward(input, dims, weight, eps):
    """(output, rstd with the normalized dims kept as 1)."""
    tl_dtype(input.dtype)
    rows = as_rows(input, dims)
    wide = accumulator(input.dtype)
    out = torch.empty(input.shape, dtype=input.dtype, device=input.device)
    rstd = torch.empty(rows.keepdim_shape, dtype=wide, device=input.device)
    w = input if weight is None else weight.reshape(-1)
    params = [w, rstd, float(eps)]
    flags = {"HAS_WEIGHT": weight is not None}
    launch_rows(rms_norm_kernel, rows, [out], params, wide, **flags)
    return out, rstd


class _RmsNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, dims, weight, eps):
        out, rstd = _forward(input, dims, weight, eps)
        ctx.save_for_backward(input, rstd, weight)
        ctx.dims = dims
        return out

    @staticmethod
    def backward(ctx, grad):
        input, rstd, weight = ctx.saved_tensors
        shared = list(range(input.dim() - len(ctx.dims)))
        mask = [ctx.needs_input_grad[0], ctx.needs_input_grad[2], False]
        dx, dw, _ = normalized_backward(
            grad, input, None, rstd, weight, ctx.dims, shared, False, mask
        )
        return dx, None, dw, None


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm's signature; eps defaults to the dtype's epsilon."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    dims = list(range(input.dim() - len(shape), input.dim()))
    eps = torch.finfo(input.dtype).eps if eps is None else eps
    return apply(_RmsNorm, input, dims, weight, eps)
