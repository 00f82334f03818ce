"""rms_norm: x / sqrt(mean(x^2) + eps) * weight over the last dims. The forward is one row
kernel (two passes over each row: the sum of squares, then the scaled output; one launch where
the composed form took four). The backward is one row kernel too, with a sum of its per-program
rows of the weight's gradient where it ran more than one program: the shared normalization
backward (backward.py) took seven launches, each costing more host time than a few rows' work
(issue 18: small ops forward + backward). On a GPU torch's rms_norm calls ATen's
`_fused_rms_norm` and, for its gradient, `_fused_rms_norm_backward`, which the switch takes; on
the CPU torch composes it of ops the switch takes one by one."""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import empty
from ..differentiable import apply
from ..dtypes import tl_dtype
from ..kept import KeptTable, tensor_kind
from ..reduce import sum as _sum
from ..reduce.kernels import _rows
from ..reduce.launch import accumulator, blocks, launch_rows
from ..reduce.rows import as_rows
from ..registry import aten
from ..second_derivatives import differentiable_once
from .layer_norm import check_normalized_shape, flat_parameter

__all__ = ["rms_norm"]


@jit
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


@jit
def rms_norm_backward_kernel(x, dx, dw_rows, M, N, s_m, s_n, s_out, grad, g_m, g_n, weight, rstd,
                             HAS_WEIGHT: tl.constexpr, WEIGHT_GRAD: tl.constexpr,
                             COMPUTE: tl.constexpr, INDEX64: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """With xhat = x * rstd and gw = grad (* weight), per row m:
    dx[m, :] = rstd[m] * (gw - xhat * mean(gw * xhat)); and, with WEIGHT_GRAD, the sum over
    this program's rows of grad * xhat, stored as row `program_id` of dw_rows. `dx` is (M, N)
    contiguous, `dw_rows` (programs, N) contiguous; rows past M load zeros and add nothing."""
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    r = tl.load(rstd + rows, mask=row_mask, other=0).to(COMPUTE)
    dots = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        xv = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask, other=0)
        gw = tl.load(grad + rows[:, None] * g_m + cols[None, :] * g_n, mask=mask, other=0)
        gw = gw.to(COMPUTE)
        if HAS_WEIGHT:
            gw = gw * tl.load(weight + cols, mask=cols < N, other=0).to(COMPUTE)[None, :]
        dots += gw * xv.to(COMPUTE)
    a = tl.sum(dots, 1) * r * r / N  # mean(gw * xhat) * rstd: xhat's second factor folded in
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        xs = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask, other=0)
        xc = xs.to(COMPUTE)
        gs = tl.load(grad + rows[:, None] * g_m + cols[None, :] * g_n, mask=mask, other=0)
        gc = gs.to(COMPUTE)
        gwc = gc
        if HAS_WEIGHT:
            gwc = gc * tl.load(weight + cols, mask=cols < N, other=0).to(COMPUTE)[None, :]
        d = r[:, None] * (gwc - xc * a[:, None])
        tl.store(dx + rows[:, None] * N + cols[None, :], d.to(dx.dtype.element_ty), mask=mask)
        if WEIGHT_GRAD:
            part = tl.sum(gc * xc * r[:, None], 0)
            tl.store(dw_rows + tl.program_id(0) * N + cols, part.to(dw_rows.dtype.element_ty),
                     mask=cols < N)  # fmt: skip


# What one kind of call decides, for the forward (the input's dtype, device, shape and strides,
# the normalized dims, eps, the weight's kind) and for the backward (the gradient's kind and
# which gradients are asked for too): the results' allocation and the row kernel's bound launch
# (launch_rows). A call of a known kind allocates and launches: the rows' geometry, the flags
# and launch_rows' own key cost a call about 2 us of host time on the development CPU, and a
# Llama step makes 18 of these calls. Kept only where the operands are read as they lie (no copy
# in as_rows) and the weight passes as it is.
_FORWARDS = KeptTable(1024)
_BACKWARDS = KeptTable(1024)


def _forward(input, dims, weight, eps):
    """(output, rstd with the normalized dims kept as 1); eps None is the dtype's epsilon."""
    key = (input.dtype, input.device, input.shape, input.stride(), tuple(dims), eps,
           tensor_kind(weight))  # fmt: skip
    plan = _FORWARDS.get(key)
    if plan is None:
        return _first_forward(input, dims, weight, eps, key)
    contiguous, stats_shape, wide, launch = plan
    out = torch.empty_like(input) if contiguous else empty(input.shape, input.dtype, input.device)
    rstd = empty(stats_shape, wide, input.device)
    launch(input, out, input if weight is None else weight, rstd)
    return out, rstd


def _first_forward(input, dims, weight, eps, key):
    """`_forward` the whole way, for the first call of its kind; its plan kept where it can be."""
    tl_dtype(input.dtype)
    eps = torch.finfo(input.dtype).eps if eps is None else eps
    rows = as_rows(input, dims)
    wide = accumulator(input.dtype)
    out = empty(input.shape, input.dtype, input.device)
    rstd = empty(rows.keepdim_shape, wide, input.device)
    w = flat_parameter(weight, input)
    # eps a fixed constexpr of the launch (keyed once per kind of call), not a varying one
    flags = {"EPS": float(eps), "HAS_WEIGHT": weight is not None}
    launch = launch_rows(rms_norm_kernel, rows, [out], [w, rstd], wide, **flags)
    if launch is not None and rows.data is input and (weight is None or w is weight):
        _FORWARDS.put(key, (input.is_contiguous(), rows.keepdim_shape, wide, launch))
    return out, rstd


class _RmsNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, dims, weight, eps):
        out, rstd = _forward(input, dims, weight, eps)
        ctx.save_for_backward(input, rstd, weight)
        ctx.dims = dims
        return out

    @staticmethod
    @differentiable_once("rms_norm")
    def backward(ctx, grad):
        input, rstd, weight = ctx.saved_tensors
        weight_grad = weight is not None and ctx.needs_input_grad[2]
        dx, dw = _backward(grad, input, ctx.dims, weight, rstd, weight_grad)
        return (dx if ctx.needs_input_grad[0] else None), None, dw, None


def _backward(grad, input, dims, weight, rstd, weight_grad: bool):
    """(dx, dweight or None): one launch, and a sum of the per-program rows of dweight where
    more than one program ran."""
    key = (grad.dtype, grad.device, grad.shape, grad.stride(), input.dtype, input.device,
           input.shape, input.stride(), tuple(dims), tensor_kind(weight), weight_grad)  # fmt: skip
    plan = _BACKWARDS.get(key)
    if plan is None:
        return _first_backward(grad, input, dims, weight, rstd, weight_grad, key)
    contiguous, programs, n, g_m, g_n, launch = plan
    dx = torch.empty_like(input) if contiguous else empty(input.shape, input.dtype, input.device)
    dw_rows = _weight_rows(dx, weight, weight_grad, programs, n)
    launch(input, dx, dw_rows, grad, g_m, g_n, input if weight is None else weight, rstd)
    return _backward_results(dx, dw_rows, weight, weight_grad, programs)


def _first_backward(grad, input, dims, weight, rstd, weight_grad: bool, key):
    """`_backward` the whole way, for the first call of its kind; its plan kept where it can
    be."""
    rows = as_rows(input, dims)
    g = as_rows(grad, dims)
    wide = accumulator(input.dtype)
    dx = empty(input.shape, input.dtype, input.device)
    programs = -(-rows.M // blocks(rows.M, rows.N, input.device)[0])
    dw_rows = _weight_rows(dx, weight, weight_grad, programs, rows.N)
    w = flat_parameter(weight, input)
    params = [g.data, g.s_m, g.s_n, w, rstd]
    flags = {"HAS_WEIGHT": weight is not None, "WEIGHT_GRAD": weight_grad}
    launch = launch_rows(rms_norm_backward_kernel, rows, [dx, dw_rows], params, wide, **flags)
    read_as_they_lie = rows.data is input and g.data is grad and (weight is None or w is weight)
    if launch is not None and read_as_they_lie:
        _BACKWARDS.put(key, (input.is_contiguous(), programs, rows.N, g.s_m, g.s_n, launch))
    return _backward_results(dx, dw_rows, weight, weight_grad, programs)


def _weight_rows(dx, weight, weight_grad: bool, programs: int, n: int):
    """Where the kernel writes the weight's gradient: in the weight's shape where one program
    runs, else a row of `n` per program in the accumulator's dtype; `dx` (not written) where
    no gradient is asked for."""
    if not weight_grad:
        return dx
    if programs == 1:  # its one row is the gradient, in the weight's shape
        return empty(weight.shape, weight.dtype, dx.device)
    return torch.empty(programs, n, dtype=accumulator(dx.dtype), device=dx.device)


def _backward_results(dx, dw_rows, weight, weight_grad: bool, programs: int):
    if not weight_grad:
        return dx, None
    if programs == 1:
        return dx, dw_rows
    summed = _sum(dw_rows, [0], dtype=weight.dtype)
    return dx, summed if summed.shape == weight.shape else summed.view(weight.shape)


@aten("_fused_rms_norm.default")
def fused_rms_norm(input, normalized_shape, weight=None, eps=None):
    """(output, rstd) as ATen's `_fused_rms_norm`: rstd in the accumulator's dtype, the
    normalized dims kept as 1."""
    return _forward(input, _last_dims(input, normalized_shape, weight), weight, eps)


@aten("_fused_rms_norm_backward.default")
def fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight, output_mask):
    """(grad of input, grad of weight) as ATen's `_fused_rms_norm_backward`, each only where
    `output_mask` asks for it."""
    weight_grad = weight is not None and output_mask[1]
    dims = _last_dims(input, normalized_shape, weight)
    dx, dw = _backward(grad_out, input, dims, weight, rstd, weight_grad)
    return (dx if output_mask[0] else None), dw


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm's signature; eps defaults to the dtype's epsilon."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return apply(_RmsNorm, input, _last_dims(input, shape, weight), weight, eps)


def _last_dims(input, normalized_shape, weight) -> list[int]:
    """The dims a normalized shape of that many sizes covers: the last ones, which must be
    that shape, as `weight` must (check_normalized_shape)."""
    check_normalized_shape(input, normalized_shape, weight)
    return list(range(input.dim() - len(normalized_shape), input.dim()))
