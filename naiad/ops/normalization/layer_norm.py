"""layer_norm: one fused row kernel for the forward (ATen's native_layer_norm: the output, and
the mean and 1/std of each row for the backward); the backward is composed (backward.py).

Each program normalizes BLOCK_M rows of the (M, N) view in three passes over the row: the mean,
the variance around it (two passes keep fp32 accurate), then (x - mean) * rstd * weight + bias;
a row that fits one block is read once and the three passes run on the block in registers.
eps is a compile-time constant: a float argument would reach the kernel as fp32, and models use
one or two values of it.
"""

from __future__ import annotations

import math

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import empty
from ..differentiable import apply
from ..dtypes import tl_dtype
from ..kept import KeptTable, tensor_kind
from ..reduce.kernels import _row_moments, _rows
from ..reduce.launch import accumulator, blocks, launch_rows
from ..reduce.rows import as_rows
from ..registry import aten
from ..second_derivatives import differentiable_once
from .affine import saved_statistics_dtype
from .backward import normalized_backward

__all__ = ["layer_norm"]


@jit
def layer_norm_kernel(x, out, M, N, s_m, s_n, s_out, weight, bias, mean, rstd, EPS: tl.constexpr,
                      HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr, ONE_BLOCK: tl.constexpr,
                      COMPUTE: tl.constexpr, INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr):  # fmt: skip
    if BLOCK_M == 1 and ONE_BLOCK:  # the whole row in registers: read once
        _layer_norm_block(x, out, N, s_m, s_n, weight, bias, mean, rstd, EPS, HAS_WEIGHT,
                          HAS_BIAS, COMPUTE, INDEX64, BLOCK_N)  # fmt: skip
    elif BLOCK_M == 1:  # one row a program, as 1-D blocks (faster on the CPU)
        _layer_norm_row(x, out, N, s_m, s_n, weight, bias, mean, rstd, EPS, HAS_WEIGHT,
                        HAS_BIAS, COMPUTE, INDEX64, BLOCK_N)  # fmt: skip
    else:
        _layer_norm_tile(x, out, M, N, s_m, s_n, s_out, weight, bias, mean, rstd, EPS,
                         HAS_WEIGHT, HAS_BIAS, COMPUTE, INDEX64, BLOCK_M, BLOCK_N)  # fmt: skip


@jit
def _layer_norm_block(x, out, N, s_m, s_n, weight, bias, mean, rstd, EPS: tl.constexpr,
                      HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr, COMPUTE: tl.constexpr,
                      INDEX64: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """_layer_norm_row's three passes over a row that fits one block (N <= BLOCK_N), from the
    one load: the same mean, deviations and scaling, so the same values, for a third of the
    row's reads (each load of a block is a copy on the CPU)."""
    row = _rows(1, INDEX64)
    cols = tl.arange(0, BLOCK_N)
    inside = cols < N
    v = tl.load(x + row * s_m + cols * s_n, mask=inside, other=0).to(COMPUTE)
    average = tl.sum(v, 0) / N
    d = tl.where(inside, v - average, 0.0)
    inverse = 1.0 / tl.sqrt(tl.sum(d * d, 0) / N + EPS)
    y = d * inverse
    if HAS_WEIGHT:
        y = y * tl.load(weight + cols, mask=inside).to(COMPUTE)
    if HAS_BIAS:
        y = y + tl.load(bias + cols, mask=inside).to(COMPUTE)
    tl.store(out + row * N + cols, y.to(out.dtype.element_ty), mask=inside)
    one = tl.arange(0, 1)
    tl.store(mean + row + one, (tl.zeros([1], COMPUTE) + average).to(mean.dtype.element_ty))
    tl.store(rstd + row + one, (tl.zeros([1], COMPUTE) + inverse).to(rstd.dtype.element_ty))


@jit
def _layer_norm_row(x, out, N, s_m, s_n, weight, bias, mean, rstd, EPS: tl.constexpr,
                    HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr, COMPUTE: tl.constexpr,
                    INDEX64: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    row = _rows(1, INDEX64)
    total = tl.zeros([BLOCK_N], COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        total += tl.load(x + row * s_m + cols * s_n, mask=cols < N, other=0).to(COMPUTE)
    average = tl.sum(total, 0) / N
    squares = tl.zeros([BLOCK_N], COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        v = tl.load(x + row * s_m + cols * s_n, mask=cols < N, other=0)
        d = tl.where(cols < N, v.to(COMPUTE) - average, 0.0)
        squares += d * d
    inverse = 1.0 / tl.sqrt(tl.sum(squares, 0) / N + EPS)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        xw = tl.load(x + row * s_m + cols * s_n, mask=cols < N).to(COMPUTE)
        y = (xw - average) * inverse
        if HAS_WEIGHT:
            y = y * tl.load(weight + cols, mask=cols < N).to(COMPUTE)
        if HAS_BIAS:
            y = y + tl.load(bias + cols, mask=cols < N).to(COMPUTE)
        tl.store(out + row * N + cols, y.to(out.dtype.element_ty), mask=cols < N)
    one = tl.arange(0, 1)
    tl.store(mean + row + one, (tl.zeros([1], COMPUTE) + average).to(mean.dtype.element_ty))
    tl.store(rstd + row + one, (tl.zeros([1], COMPUTE) + inverse).to(rstd.dtype.element_ty))


@jit
def _layer_norm_tile(x, out, M, N, s_m, s_n, s_out, weight, bias, mean, rstd, EPS: tl.constexpr,
                      HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr, COMPUTE: tl.constexpr,
                      INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr):  # fmt: skip
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    average, deviations = _row_moments(x, rows, row_mask, N, s_m, s_n, COMPUTE, BLOCK_M, BLOCK_N)
    inverse = 1.0 / tl.sqrt(deviations / N + EPS)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        col_mask = cols < N
        mask = row_mask[:, None] & col_mask[None, :]
        xw = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask).to(COMPUTE)
        y = (xw - average[:, None]) * inverse[:, None]
        if HAS_WEIGHT:
            y = y * tl.load(weight + cols, mask=col_mask).to(COMPUTE)[None, :]
        if HAS_BIAS:
            y = y + tl.load(bias + cols, mask=col_mask).to(COMPUTE)[None, :]
        tl.store(out + rows[:, None] * N + cols[None, :], y.to(out.dtype.element_ty), mask=mask)
    tl.store(mean + rows, average.to(mean.dtype.element_ty), mask=row_mask)
    tl.store(rstd + rows, inverse.to(rstd.dtype.element_ty), mask=row_mask)


def flat_parameter(param, input):
    """weight or bias as the contiguous vector the row kernels read (or the input itself as a
    placeholder pointer). A contiguous vector passes as it is: a reshape makes a view per
    call, which costs a small op's launch microseconds."""
    if param is None:
        return input
    if param.dim() == 1 and param.is_contiguous():
        return param
    return param.reshape(-1).contiguous()


def check_normalized_shape(input, normalized_shape, *params) -> None:
    """torch's errors where `input` does not end in `normalized_shape` or a weight or bias (not
    None) is not of that shape: the kernels would normalize other rows, or read past the
    parameter (caught on the CPU only where its storage ends)."""
    shape = tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape) :]) != shape or len(shape) > input.dim():
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, "
            f"{', '.join(map(str, shape))}], but got input of size {list(input.shape)}"
        )
    for param in params:
        if param is not None and tuple(param.shape) != shape:
            raise RuntimeError(
                "Expected weight to be of same shape as normalized_shape, but got weight of "
                f"shape {list(param.shape)} and normalized_shape = {list(shape)}"
            )


# What one kind of call decides (the input's dtype, device, shape and strides, the normalized
# shape, eps, the weight's and the bias's kinds): the statistics' shape and the row kernel's
# bound launch (launch_rows). A call of a known kind allocates and launches, without the shape
# checks, the rows' geometry and launch_rows' own key (ops.layer_norm of an 8x64 input: 13.7 ->
# 8.8 us of host time a call on the development CPU). Kept only where the input is read as it
# lies (no copy in as_rows) and the parameters pass as they are.
_FORWARDS = KeptTable(1024)


@aten("native_layer_norm.default")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd), normalizing over the last len(normalized_shape) dims."""
    key = (input.dtype, input.device, input.shape, input.stride(), tuple(normalized_shape), eps,
           tensor_kind(weight), tensor_kind(bias))  # fmt: skip
    plan = _FORWARDS.get(key)
    if plan is None:
        return _first_forward(input, normalized_shape, weight, bias, eps, key)
    contiguous, stats_shape, stats, launch = plan
    device = input.device
    out = torch.empty_like(input) if contiguous else empty(input.shape, input.dtype, device)
    mean = empty(stats_shape, stats, device)
    rstd = empty(stats_shape, stats, device)
    launch(input, out, input if weight is None else weight, input if bias is None else bias,
           mean, rstd)  # fmt: skip
    return out, mean, rstd


def _first_forward(input, normalized_shape, weight, bias, eps, key):
    """`native_layer_norm` the whole way, for the first call of its kind; its plan kept where
    it can be."""
    tl_dtype(input.dtype)
    check_normalized_shape(input, normalized_shape, weight, bias)
    axis = input.dim() - len(normalized_shape)
    rows = as_rows(input, list(range(axis, input.dim())))
    out = empty(input.shape, input.dtype, input.device)
    stats_shape = [*input.shape[:axis], *([1] * len(normalized_shape))]
    stats = saved_statistics_dtype(input)
    mean = empty(stats_shape, stats, input.device)
    rstd = empty(stats_shape, stats, input.device)
    w, b = flat_parameter(weight, input), flat_parameter(bias, input)
    flags = {"EPS": float(eps), "HAS_WEIGHT": weight is not None, "HAS_BIAS": bias is not None,
             "ONE_BLOCK": blocks(rows.M, rows.N, input.device)[1] >= rows.N}  # fmt: skip
    launch = launch_rows(layer_norm_kernel, rows, [out], [w, b, mean, rstd],
                         accumulator(input.dtype), **flags)  # fmt: skip
    as_given = (weight is None or w is weight) and (bias is None or b is bias)
    if launch is not None and rows.data is input and as_given:
        _FORWARDS.put(key, (input.is_contiguous(), stats_shape, stats, launch))
    return out, mean, rstd


@aten("native_layer_norm_backward.default")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):  # fmt: skip
    axis = input.dim() - len(normalized_shape)
    normalized = list(range(axis, input.dim()))
    grads = normalized_backward(
        grad_out, input, mean, rstd, weight, normalized, list(range(axis)), centered=True,
        output_mask=output_mask,
    )  # fmt: skip
    grad_bias = grads[2] if bias is not None else None
    return grads[0], grads[1] if weight is not None else None, grad_bias


class _LayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, normalized_shape, weight, bias, eps):
        out, mean, rstd = native_layer_norm(input, normalized_shape, weight, bias, eps)
        ctx.save_for_backward(input, mean, rstd, weight, bias)
        ctx.normalized_shape = normalized_shape
        return out

    @staticmethod
    @differentiable_once("layer_norm")
    def backward(ctx, grad):
        input, mean, rstd, weight, bias = ctx.saved_tensors
        mask = [ctx.needs_input_grad[0], ctx.needs_input_grad[2], ctx.needs_input_grad[3]]
        dx, dw, db = native_layer_norm_backward(
            grad, input, ctx.normalized_shape, mean, rstd, weight, bias, mask
        )
        return dx, None, dw, db, None


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last dims (mean 0, variance 1), then scale and shift; differentiable."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    if math.prod(shape) == 0:
        return input.clone()
    return apply(_LayerNorm, input, shape, weight, bias, eps)
