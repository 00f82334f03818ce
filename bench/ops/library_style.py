"""RMS norm and SwiGLU written as Triton kernel libraries write them, for small_ops.py: a
`@naiad.jit` kernel per direction, one program per row, launched by `kernel[(rows,)](...)`
inside a `torch.autograd.Function`, tensors and their row strides passed as arguments, the
block a power of 2 over the row (a constexpr), the weight's gradient summed by torch from
per-row partials. What differs from naiad.ops (whose ops keep a bound launch per kind of call):
every launch goes through the launch entry, which keys all of its arguments (binder.py), and
a grid of a program per row.
"""

from __future__ import annotations

import torch

import naiad
import naiad.language as tl


@naiad.jit
def rms_norm_forward(Y, X, W, RSTD, y_stride, x_stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + row * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, 0) / n_cols + eps)
    tl.store(RSTD + row, rstd)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * y_stride + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


@naiad.jit
def rms_norm_backward(DX, DW_ROWS, DY, X, W, RSTD, dx_stride, dy_stride, x_stride, n_cols,
                      BLOCK: tl.constexpr):  # fmt: skip
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dy = tl.load(DY + row * dy_stride + cols, mask=mask, other=0.0).to(tl.float32)
    x = tl.load(X + row * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.load(RSTD + row)
    normed = x * rstd
    scaled = dy * w
    dx = rstd * (scaled - normed * (tl.sum(normed * scaled, 0) / n_cols))
    tl.store(DX + row * dx_stride + cols, dx.to(DX.dtype.element_ty), mask=mask)
    tl.store(DW_ROWS + row * n_cols + cols, dy * normed, mask=mask)


class RMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rows, cols = x.shape
        block = naiad.next_power_of_2(cols)
        y = torch.empty_like(x)
        rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
        rms_norm_forward[(rows,)](y, x, weight, rstd, y.stride(0), x.stride(0), cols, eps,
                                  BLOCK=block)  # fmt: skip
        ctx.save_for_backward(x, weight, rstd)
        ctx.block = block
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        rows, cols = x.shape
        dx = torch.empty_like(x)
        dw_rows = torch.empty(rows, cols, dtype=torch.float32, device=x.device)
        rms_norm_backward[(rows,)](dx, dw_rows, dy, x, weight, rstd, dx.stride(0), dy.stride(0),
                                   x.stride(0), cols, BLOCK=ctx.block)  # fmt: skip
        return dx, dw_rows.sum(0).to(weight.dtype), None


@naiad.jit
def swiglu_forward(A, B, C, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(A + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + row * stride + cols, mask=mask, other=0.0)
    c = a * tl.sigmoid(a) * b
    tl.store(C + row * stride + cols, c.to(C.dtype.element_ty), mask=mask)


@naiad.jit
def swiglu_backward(DC, A, B, DA, DB, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dc = tl.load(DC + row * stride + cols, mask=mask, other=0.0)
    a = tl.load(A + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + row * stride + cols, mask=mask, other=0.0)
    sig = tl.sigmoid(a)
    silu = a * sig
    tl.store(DB + row * stride + cols, (dc * silu).to(DB.dtype.element_ty), mask=mask)
    da = dc * b * (sig + silu * (1.0 - sig))
    tl.store(DA + row * stride + cols, da.to(DA.dtype.element_ty), mask=mask)


class SwiGLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        a, b = a.contiguous(), b.contiguous()
        rows, cols = a.shape
        c = torch.empty_like(a)
        block = naiad.next_power_of_2(cols)
        swiglu_forward[(rows,)](a, b, c, c.stride(0), cols, BLOCK=block)
        ctx.save_for_backward(a, b)
        ctx.block = block
        return c

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        dc = dc.contiguous()
        rows, cols = a.shape
        da, db = torch.empty_like(a), torch.empty_like(b)
        swiglu_backward[(rows,)](dc, a, b, da, db, dc.stride(0), cols, BLOCK=ctx.block)
        return da, db
