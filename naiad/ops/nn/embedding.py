"""embedding and its backward (ATen's embedding and embedding_dense_backward): rows of the
weight gathered by index; the gradient rows added back into a zero weight in fp32, skipping
padding_idx: with atomic adds on a GPU (indices repeat), by one program in order on the CPU."""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..dtypes import Unsupported, tl_dtype
from ..registry import aten

__all__ = ["embedding"]

_ROWS = 16


@jit(do_not_specialize=["R", "D"])
def _gather_rows(weight, indices, out, R, D, s_w, ROWS: tl.constexpr, BLOCK_D: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    index = tl.load(indices + r, mask=r < R, other=0).to(tl.int64)
    for begin in range(0, D, BLOCK_D):
        d = begin + tl.arange(0, BLOCK_D)
        mask = (r[:, None] < R) & (d[None, :] < D)
        v = tl.load(weight + index[:, None] * s_w + d[None, :], mask=mask)
        tl.store(out + r[:, None].to(tl.int64) * D + d[None, :], v, mask=mask)


@jit(do_not_specialize=["R", "D", "padding"])
def _add_rows(grad, indices, out, R, D, padding, ROWS: tl.constexpr, BLOCK_D: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    index = tl.load(indices + r, mask=r < R, other=0).to(tl.int64)
    keep = (r < R) & (index != padding)
    for begin in range(0, D, BLOCK_D):
        d = begin + tl.arange(0, BLOCK_D)
        mask = keep[:, None] & (d[None, :] < D)
        g = tl.load(grad + r[:, None].to(tl.int64) * D + d[None, :], mask=mask, other=0)
        tl.atomic_add(out + index[:, None] * D + d[None, :], g.to(tl.float32), mask=mask)


@jit(do_not_specialize=["R", "D", "padding"])
def _add_rows_in_order(grad, indices, out, R, D, padding, BLOCK_D: tl.constexpr):
    """_add_rows as one program adding the rows in order (for the CPU, where an atomic float
    add is a compare-and-swap loop): plain loads and stores, which no other program races."""
    for r in range(0, R):
        index = tl.load(indices + r).to(tl.int64)
        if index != padding:
            for begin in range(0, D, BLOCK_D):
                d = begin + tl.arange(0, BLOCK_D)
                mask = d < D
                g = tl.load(grad + r * D + d, mask=mask, other=0).to(tl.float32)
                row = out + index * D + d
                tl.store(row, tl.load(row, mask=mask) + g, mask=mask)


def _block_d(d: int) -> int:
    return min(1 << max(d - 1, 0).bit_length(), 256)


@aten("embedding.default")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """weight[indices]: one row of weight per index."""
    tl_dtype(weight.dtype)
    if weight.dim() != 2 or weight.stride(1) != 1:
        raise Unsupported("embedding of a weight with strided rows")
    flat = indices.reshape(-1).contiguous()
    r, d = flat.numel(), weight.shape[1]
    out = torch.empty(r, d, dtype=weight.dtype, device=weight.device)
    if r and d:
        grid = ((r + _ROWS - 1) // _ROWS,)
        _gather_rows[grid](weight, flat, out, r, d, weight.stride(0), _ROWS, _block_d(d))
    return out.view(*indices.shape, d)


@aten("embedding_dense_backward.default")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The weight's gradient: each index's gradient row added to its row."""
    if scale_grad_by_freq:
        raise Unsupported("embedding backward scaled by frequency")
    d = grad_output.shape[-1]
    grad = grad_output.reshape(-1, d).contiguous()
    flat = indices.reshape(-1).contiguous()
    total = torch.zeros(num_weights, d, dtype=torch.float32, device=grad.device)
    r = flat.numel()
    if r and d and grad.device.type == "cpu":
        _add_rows_in_order[(1,)](grad, flat, total, r, d, padding_idx, _block_d(d))
    elif r and d:
        grid = ((r + _ROWS - 1) // _ROWS,)
        _add_rows[grid](grad, flat, total, r, d, padding_idx, _ROWS, _block_d(d))
    return total.to(grad_output.dtype)
