"""batch_norm (ATen's native_batch_norm and its backward), composed of Naiad's row statistics
and elementwise steps: each channel normalized over the batch and positions with the batch's
statistics in training (which also move the running ones by `momentum`, the variance unbiased),
with the running statistics in inference."""

from __future__ import annotations

import torch

from ..differentiable import apply
from ..reduce.launch import accumulator
from ..reduce.statistics import moments
from ..registry import aten
from ..second_derivatives import differentiable_once
from ..select import lerp
from .affine import normalize_affine, reciprocal_root, saved_statistics_dtype
from .backward import normalized_backward

__all__ = ["batch_norm"]


def _dims(input):
    """The dims each channel's statistics cover: all but the channel dim (1)."""
    return [0, *range(2, input.dim())]


def _channel_view(input):
    return [1, input.shape[1]] + [1] * (input.dim() - 2)


def _batch_statistics(input, running_mean, running_var, momentum, eps):
    wide = accumulator(input.dtype)
    var, mean = moments(input, _dims(input), 0, False, False, dtype=wide)
    count = input.numel() // max(input.shape[1], 1)
    if running_mean is not None:
        lerp(running_mean, mean, momentum, out=running_mean)
    if running_var is not None:
        unbiased = var * (count / max(count - 1, 1)) if count > 1 else var
        lerp(running_var, unbiased, momentum, out=running_var)
    return mean, reciprocal_root(var, eps)


def _running_invstd(running_var, eps):
    """1/sqrt(var + eps) of the running variance in fp32 where it is fp16 or bf16, as torch
    computes it (rounded to bf16 first, it was 0.3 % off)."""
    return reciprocal_root(running_var, eps, dtype=accumulator(running_var.dtype))


@aten("native_batch_norm.default")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, saved mean, saved 1/std); the saved ones are empty in inference."""
    channels = input.shape[1] if input.dim() > 1 else None
    params = {"running_mean": running_mean, "running_var": running_var, "weight": weight,
              "bias": bias}  # fmt: skip
    for name, param in params.items():
        if param is not None and param.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {param.numel()}")
    view = _channel_view(input)
    if training:
        mean, invstd = _batch_statistics(input, running_mean, running_var, momentum, eps)
    else:
        mean, invstd = running_mean, _running_invstd(running_var, eps)
    w = None if weight is None else weight.view(view)
    b = None if bias is None else bias.view(view)
    out = normalize_affine(input, mean.view(view), invstd.view(view), w, b)
    stats = saved_statistics_dtype(input)
    if not training:
        if input.device.type != "cpu":  # torch's GPU kernel hands back the running ones
            return out, mean.to(stats, copy=True), invstd.to(stats)
        empty = torch.empty(0, dtype=input.dtype, device=input.device)
        return out, empty, empty.clone()
    return out, mean.to(stats), invstd.to(stats)


@aten("native_batch_norm_backward.default")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps, output_mask):  # fmt: skip
    view = _channel_view(input)
    if train:
        mean, invstd = save_mean, save_invstd
    else:
        mean, invstd = running_mean, _running_invstd(running_var, eps)
    dims = _dims(input)
    dx, dw, db = normalized_backward(
        grad_out, input, mean.view(view), invstd.view(view), weight, dims if train else [],
        dims, True, output_mask, weight_view=view,
    )  # fmt: skip
    if db is not None:
        db = db.view(input.shape[1])
    return dx, dw, db


class _BatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, running_mean, running_var, weight, bias, training, momentum, eps):
        out, mean, invstd = native_batch_norm(
            input, weight, bias, running_mean, running_var, training, momentum, eps
        )
        ctx.save_for_backward(input, weight, running_mean, running_var, mean, invstd)
        ctx.training, ctx.eps = training, eps
        return out

    @staticmethod
    @differentiable_once("batch_norm")
    def backward(ctx, grad):
        input, weight, running_mean, running_var, mean, invstd = ctx.saved_tensors
        mask = [ctx.needs_input_grad[0], ctx.needs_input_grad[3], ctx.needs_input_grad[4]]
        dx, dw, db = native_batch_norm_backward(
            grad, input, weight, running_mean, running_var, mean, invstd, ctx.training, ctx.eps,
            mask,
        )  # fmt: skip
        return dx, None, None, dw, db, None, None, None


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):  # fmt: skip
    """Normalize each channel over the batch (torch.nn.functional.batch_norm's signature);
    differentiable."""
    statistics = (running_mean, running_var)
    return apply(_BatchNorm, input, *statistics, weight, bias, training, momentum, eps)
