"""rms_norm: x / sqrt(mean(x^2) + eps) * weight over the last dims, composed of Naiad's
elementwise ops and mean; differentiable with the shared normalization backward (no centering).
torch composes its own rms_norm of the ops Naiad registers, so the switch needs no entry."""

from __future__ import annotations

import torch

from ..reduce import mean as _mean
from ..reduce.launch import accumulator
from .affine import normalize_affine, reciprocal_root
from .backward import _times, normalized_backward

__all__ = ["rms_norm"]


def _forward(input, dims, weight, eps):
    wide = accumulator(input.dtype)
    rstd = reciprocal_root(_mean(_times(input, input, dtype=wide), dims, keepdim=True), eps)
    return normalize_affine(input, 0.0, rstd, weight, None), rstd


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
    return _RmsNorm.apply(input, dims, weight, eps)
