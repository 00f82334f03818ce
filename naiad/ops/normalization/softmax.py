"""softmax and log_softmax along one dim, forward and backward (ATen's _softmax,
_log_softmax and their _backward_data ops), from row kernels over the (M, N) view with the dim
last (reduce/rows.py).

The forward holds whole rows in one tile where they fit (one read, one exp per element); longer
rows take two passes: the max and the sum of exp(x - max) together (the sum rescaled as the max
grows), then exp(x - max) / sum or x - max - log(sum); rows too few for the device are split
in parts over more programs (reduce/split_exp_sums.py). A row of -inf gives NaN, as in torch.
The backward's first pass is the row's dot product of grad and output.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import empty
from ..differentiable import apply
from ..dtypes import tl_dtype
from ..kept import KeptTable
from ..reduce.kernels import _max, _rows, row_max_sum_exp, softmax_written
from ..reduce.launch import accumulator, blocks, launch_rows
from ..reduce.rows import as_rows, in_dim_order, normalized_dims
from ..reduce.split_exp_sums import SOFTMAX_LEAST_PART_BYTES, split_softmax
from ..reduce.split_rows import split_parts
from ..registry import aten
from ..second_derivatives import differentiable_once
from .softmax_columns import column_sizes, columns_launch

__all__ = ["log_softmax", "softmax"]


@jit
def _softmax_of(v, LOG: tl.constexpr):
    """softmax (or log_softmax) along dim 1 of a tile of whole rows."""
    peak = tl.reduce(v, 1, _max)
    shifted = v - tl.where(peak == float("-inf"), 0.0, peak)[:, None]
    e = tl.exp(shifted)
    total = tl.sum(e, 1)[:, None]
    if LOG:
        return shifted - tl.log(total)
    return e / total


@jit
def softmax_kernel(x, out, M, N, s_m, s_n, s_out, LOG: tl.constexpr, COMPUTE: tl.constexpr,
                   ONE_TILE: tl.constexpr, INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr):  # fmt: skip
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    if ONE_TILE and BLOCK_M == 1:  # one whole row a program, as a 1-D block
        row = _rows(1, INDEX64)
        cols = tl.arange(0, BLOCK_N)
        v = tl.load(x + row * s_m + cols * s_n, mask=cols < N, other=float("-inf")).to(COMPUTE)
        peak = tl.reduce(v, 0, _max)
        shifted = v - tl.where(peak == float("-inf"), 0.0, peak)
        e = tl.exp(shifted)
        total = tl.sum(e, 0)
        result = shifted - tl.log(total) if LOG else e / total
        tl.store(out + row * N + cols, result.to(out.dtype.element_ty), mask=cols < N)
    elif ONE_TILE:  # whole rows in one tile: one read, one exp per element
        cols = tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        v = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask, other=float("-inf"))
        result = _softmax_of(v.to(COMPUTE), LOG).to(out.dtype.element_ty)
        tl.store(out + rows[:, None] * N + cols[None, :], result, mask=mask)
    else:
        _softmax_long_rows(x, out, rows, row_mask, N, s_m, s_n, LOG, COMPUTE, BLOCK_M, BLOCK_N)


@jit
def _softmax_long_rows(x, out, rows, row_mask, N, s_m, s_n, LOG: tl.constexpr,
                       COMPUTE: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr):  # fmt: skip
    """Rows longer than a tile: the max and the sum of exponentials in one pass, then the
    output."""
    _, shift, total = row_max_sum_exp(x, rows, row_mask, N, s_m, s_n, COMPUTE, BLOCK_M, BLOCK_N)
    softmax_written(x, out, rows, row_mask, N, s_m, s_n, shift, total, LOG, COMPUTE, BLOCK_M,
                    BLOCK_N)  # fmt: skip


@jit
def softmax_backward_kernel(grad, out, M, N, s_m, s_n, s_out, y, y_m, y_n, LOG: tl.constexpr,
                            COMPUTE: tl.constexpr, INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr):  # fmt: skip
    """out = y * (grad - sum(grad * y)) for softmax; grad - exp(y) * sum(grad) for
    log_softmax (y is the forward's output)."""
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    acc = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        g = tl.load(grad + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask, other=0)
        if LOG:
            acc += g.to(COMPUTE)
        else:
            o = tl.load(y + rows[:, None] * y_m + cols[None, :] * y_n, mask=mask, other=0)
            acc += g.to(COMPUTE) * o.to(COMPUTE)
    dot = tl.sum(acc, 1)[:, None]
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        # new names: a loop's variables keep one type, and g, o were the loads' above
        gw = tl.load(grad + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask).to(COMPUTE)
        ow = tl.load(y + rows[:, None] * y_m + cols[None, :] * y_n, mask=mask).to(COMPUTE)
        if LOG:
            result = gw - tl.exp(ow) * dot
        else:
            result = ow * (gw - dot)
        tl.store(
            out + rows[:, None] * N + cols[None, :], result.to(out.dtype.element_ty), mask=mask
        )


def _rows_of(x, dim):
    x = x.reshape(1) if x.dim() == 0 else x
    (d,) = normalized_dims(dim, x.dim())
    return x, d, as_rows(x, [d])


def _buffer(x, d, rows, dtype):
    """The kernel's contiguous (M, N) output; where the scanned dim is x's last, allocated in
    x's shape (the same memory, without a view made per call)."""
    if d == x.dim() - 1:
        return empty(x.shape, dtype, x.device)
    return torch.empty(rows.M, rows.N, dtype=dtype, device=x.device)


def _back(buffer, x, d, shape):
    """The (M, N) buffer in x's dim order (the scanned dim back in its place)."""
    if d == x.dim() - 1:
        return buffer if x.shape == shape else buffer.view(shape)
    last = buffer.view([*x.shape[:d], *x.shape[d + 1 :], x.shape[d]])
    return in_dim_order(last, d).view(shape)


# What one kind of call decides (the operands' dtype, device, shape and strides, the dim, the
# result's dtype, log or not): the result's allocation and the row kernel's bound launch
# (launch_rows); a call of a known kind allocates and launches, without the rows' geometry and
# launch_rows' own key (about 2 us of host time a call on the development CPU). Kept where the
# operands are read as they lie: the dim the last one of an operand of at least one dim, or the
# column form's (softmax_columns.py).
_FORWARDS = KeptTable(1024)
_BACKWARDS = KeptTable(1024)


def _forward(input, dim, dtype, log: bool):
    key = (input.dtype, input.device, input.shape, input.stride(), dim, dtype, log)
    plan = _FORWARDS.get(key)
    if plan is None:
        return _first_forward(input, dim, dtype, log, key)
    like, launch = plan
    buffer = torch.empty_like(input) if like else empty(input.shape, dtype, input.device)
    launch(input, buffer)
    return buffer


def _first_forward(input, dim, dtype, log: bool, key):
    """`_forward` the whole way, for the first call of its kind; its plan kept where it can be."""
    tl_dtype(input.dtype)
    if not input.dtype.is_floating_point:  # (a cast by `dtype=` comes before: softmax())
        name = "log_softmax" if log else "softmax"
        raise NotImplementedError(f"{name} is not implemented for {input.dtype}")
    x, d, rows = _rows_of(input, dim)
    if x is input and column_sizes(input, d):  # where it lies (softmax_columns.py)
        out = empty(input.shape, dtype, input.device)
        launch = columns_launch(input, d, (input, out), accumulator(dtype), log, False)
        _FORWARDS.put(key, (dtype == input.dtype, launch))
        return out
    buffer = _buffer(x, d, rows, dtype)
    one_tile = blocks(rows.M, rows.N, input.device)[1] >= rows.N
    compute = accumulator(dtype)
    parts = 1 if one_tile else split_parts(rows, input.device, SOFTMAX_LEAST_PART_BYTES)
    if parts > 1:  # few long rows, each in parts over more programs (split_exp_sums.py)
        launch = split_softmax(rows, parts, buffer, log, compute)
    else:
        launch = launch_rows(softmax_kernel, rows, [buffer], [], compute, LOG=log,
                             ONE_TILE=one_tile)  # fmt: skip
    if launch is not None and x is input and rows.data is input and d == x.dim() - 1:
        like = dtype == input.dtype and input.is_contiguous()
        _FORWARDS.put(key, (like, launch))
    return _back(buffer, x, d, input.shape)


def _backward(grad, output, dim, dtype, log: bool):
    key = (grad.dtype, grad.device, grad.shape, grad.stride(), output.dtype, output.device,
           output.shape, output.stride(), dim, dtype, log)  # fmt: skip
    plan = _BACKWARDS.get(key)
    if plan is None:
        return _first_backward(grad, output, dim, dtype, log, key)
    like, launch, strides = plan
    buffer = torch.empty_like(grad) if like else empty(grad.shape, dtype, grad.device)
    launch(grad, buffer, output, *strides)
    return buffer


def _first_backward(grad, output, dim, dtype, log: bool, key):
    """`_backward` the whole way, for the first call of its kind; its plan kept where it can
    be."""
    g, d, rows = _rows_of(grad, dim)
    if g is grad and output.is_contiguous() and column_sizes(grad, d):  # (softmax_columns.py)
        out = empty(grad.shape, dtype, grad.device)
        launch = columns_launch(grad, d, (grad, out, output), accumulator(dtype), log, True)
        _BACKWARDS.put(key, (dtype == grad.dtype, launch, ()))
        return out
    _, _, y = _rows_of(output, dim)
    buffer = _buffer(g, d, rows, dtype)
    compute = accumulator(dtype)
    params = [y.data, y.s_m, y.s_n]
    launch = launch_rows(softmax_backward_kernel, rows, [buffer], params, compute, LOG=log)
    as_they_lie = g is grad and rows.data is grad and y.data is output
    if launch is not None and as_they_lie and d == g.dim() - 1:
        like = dtype == grad.dtype and grad.is_contiguous()
        _BACKWARDS.put(key, (like, launch, (y.s_m, y.s_n)))
    return _back(buffer, g, d, grad.shape)


def _half_to_float(input, half_to_float):
    return torch.float32 if half_to_float else input.dtype


@aten("_softmax.default")
def _softmax(input, dim, half_to_float):
    return _forward(input, dim, _half_to_float(input, half_to_float), False)


@aten("_log_softmax.default")
def _log_softmax(input, dim, half_to_float):
    return _forward(input, dim, _half_to_float(input, half_to_float), True)


@aten("_softmax_backward_data.default")
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    return _backward(grad_output, output, dim, input_dtype, False)


@aten("_log_softmax_backward_data.default")
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    return _backward(grad_output, output, dim, input_dtype, True)


class _Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, dim, dtype, log):
        output = _forward(input, dim, dtype, log)
        ctx.save_for_backward(output)
        ctx.dim, ctx.log, ctx.input_dtype = dim, log, input.dtype
        return output

    @staticmethod
    @differentiable_once("softmax")
    def backward(ctx, grad):
        (output,) = ctx.saved_tensors
        return _backward(grad, output, ctx.dim, ctx.input_dtype, ctx.log), None, None, None


def softmax(input, dim, dtype=None):
    """exp(input) / sum(exp(input)) along `dim`; differentiable (the backward is Naiad's)."""
    source = input if dtype is None else input.to(dtype)
    return apply(_Softmax, source, dim, source.dtype, False)


def log_softmax(input, dim, dtype=None):
    """input - log(sum(exp(input))) along `dim`; differentiable."""
    source = input if dtype is None else input.to(dtype)
    return apply(_Softmax, source, dim, source.dtype, True)
