"""group_norm (ATen's native_group_norm and its backward), composed of Naiad's row statistics
(reduce/statistics.py) and elementwise steps: each sample's channels split into groups, each
group normalized over its channels and positions, then scaled and shifted per channel."""

from __future__ import annotations

import torch

from ..differentiable import apply
from ..reduce.launch import accumulator
from ..reduce.statistics import moments
from ..registry import aten
from ..second_derivatives import differentiable_once
from .affine import normalize_affine, reciprocal_root
from .backward import normalized_backward

__all__ = ["group_norm"]


def _grouped(x, n, c, hxw, group):
    return x.reshape(n, group, c // group, hxw)


@aten("native_group_norm.default")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd); mean and rstd are (N, group)."""
    if group <= 0 or C % group:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={group}"
        )
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None and param.numel() != C:
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(param.shape)} "
                               f"and input of shape {list(input.shape)}")  # fmt: skip
    x = _grouped(input, N, C, HxW, group)
    wide = accumulator(input.dtype)
    var, mean = moments(x, [2, 3], 0, True, False, dtype=wide)
    rstd = reciprocal_root(var, eps)
    view = (1, group, C // group, 1)
    w = None if weight is None else weight.view(view)
    b = None if bias is None else bias.view(view)
    out = normalize_affine(x, mean, rstd, w, b).view(input.shape)
    return out, mean.view(N, group).to(input.dtype), rstd.view(N, group).to(input.dtype)


@aten("native_group_norm_backward.default")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group,
                               output_mask):  # fmt: skip
    x = _grouped(input, N, C, HxW, group)
    g = _grouped(grad_out, N, C, HxW, group)
    stats = (N, group, 1, 1)
    dx, dw, db = normalized_backward(
        g, x, mean.view(stats), rstd.view(stats), weight, [2, 3], [0, 3], True, output_mask,
        weight_view=(1, group, C // group, 1),
    )  # fmt: skip
    dx = None if dx is None else dx.view(input.shape)
    if db is not None:
        db = db.view(C)
    return dx, dw, db


class _GroupNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, num_groups, weight, bias, eps):
        n, c = input.shape[:2]
        hxw = input.numel() // max(n * c, 1)
        out, mean, rstd = native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps)
        ctx.save_for_backward(input, mean, rstd, weight)
        ctx.sizes = (n, c, hxw, num_groups)
        return out

    @staticmethod
    @differentiable_once("group_norm")
    def backward(ctx, grad):
        input, mean, rstd, weight = ctx.saved_tensors
        mask = [ctx.needs_input_grad[0], ctx.needs_input_grad[2], ctx.needs_input_grad[3]]
        dx, dw, db = native_group_norm_backward(grad, input, mean, rstd, weight, *ctx.sizes, mask)
        return dx, None, dw, db, None


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each group of channels of each sample; differentiable."""
    return apply(_GroupNorm, input, num_groups, weight, bias, eps)
