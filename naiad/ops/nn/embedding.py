"""embedding and its backward (ATen's embedding and embedding_dense_backward): rows of the
weight gathered by index; the gradient rows added back into a zero weight in fp32, skipping
padding_idx: with atomic adds on a GPU (indices repeat), by one program in order on the CPU.
Every kernel asserts its indices' range (index_range.py)."""

from __future__ import annotations

import torch

from ... import language as tl
from ...errors import KernelAssertionError
from ...runtime.jit import jit
from .. import index_range
from ..allocate import empty
from ..convert import to
from ..dtypes import Unsupported, tl_dtype
from ..indexing.row_blocks import tile, tiles_and_grid
from ..kept import KeptTable
from ..registry import aten

__all__ = ["embedding"]

_ROWS = 16


@jit
def _rows_of(indices, r, R, N):
    """The indices of rows `r` (0 past R), each asserted a row of the N."""
    index = tl.load(indices + r, mask=r < R, other=0).to(tl.int64)
    tl.device_assert((index >= 0) & (index < N), "index out of range in self")
    return index


@jit(do_not_specialize=["R", "D"])
def _gather_rows(weight, indices, out, R, D, N, s_w, ROWS: tl.constexpr,
                 BLOCK_D: tl.constexpr):  # fmt: skip
    """ROWS rows of the result a program, block by block of each row (a GPU)."""
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    index = _rows_of(indices, r, R, N)
    for begin in range(0, D, BLOCK_D):
        d = begin + tl.arange(0, BLOCK_D)
        mask = (r[:, None] < R) & (d[None, :] < D)
        v = tl.load(weight + index[:, None] * s_w + d[None, :], mask=mask)
        tl.store(out + r[:, None].to(tl.int64) * D + d[None, :], v, mask=mask)


@jit(do_not_specialize=["R", "D"])
def _gather_row_blocks(weight, indices, out, R, D, N, s_w, BLOCK_R: tl.constexpr,
                       BLOCK_D: tl.constexpr):  # fmt: skip
    """One block of one row a program (the CPU; rows of one element BLOCK_R at a time:
    row_blocks.py). The index is one number, so the weight's row is read where it lies (a
    vector of indices made every load a gather there: 1024 rows of 1024 floats in 0.61 ms,
    torch's 0.10), and no loop leaves a program's work unknown, so a small grid runs on the
    launching thread (cpu_inline_grid.py)."""
    _, r, d, mask = tile(1, R, D, 1, BLOCK_R, BLOCK_D)
    index = _rows_of(indices, r, R, N)
    v = tl.load(weight + index * s_w + d, mask=mask)
    tl.store(out + r * D + d, v, mask=mask)


@jit(do_not_specialize=["R", "D", "padding"])
def _add_rows(grad, indices, out, R, D, N, padding, ROWS: tl.constexpr, BLOCK_D: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    index = _rows_of(indices, r, R, N)
    keep = (r < R) & (index != padding)
    for begin in range(0, D, BLOCK_D):
        d = begin + tl.arange(0, BLOCK_D)
        mask = keep[:, None] & (d[None, :] < D)
        g = tl.load(grad + r[:, None].to(tl.int64) * D + d[None, :], mask=mask, other=0)
        # relaxed: the additions need no order among themselves, and acq_rel fenced each one
        tl.atomic_add(
            out + index[:, None] * D + d[None, :], g.to(tl.float32), mask=mask, sem="relaxed"
        )


@jit(do_not_specialize=["R", "D", "padding"])
def _add_rows_in_order(grad, indices, out, R, D, N, padding, BLOCK_D: tl.constexpr):
    """_add_rows as one program adding the rows in order (for the CPU, where an atomic float
    add is a compare-and-swap loop): plain loads and stores, which no other program races."""
    for r in range(0, R):
        index = tl.load(indices + r).to(tl.int64)
        tl.device_assert((index >= 0) & (index < N), "index out of range in self")
        if index != padding:
            for begin in range(0, D, BLOCK_D):
                d = begin + tl.arange(0, BLOCK_D)
                mask = d < D
                g = tl.load(grad + r * D + d, mask=mask, other=0).to(tl.float32)
                row = out + index * D + d
                tl.store(row, tl.load(row, mask=mask) + g, mask=mask)


def _launched(launch, arguments, indices, rows: int) -> None:
    """`launch` (a bound launch, or None where there is nothing to do) made on `arguments`,
    with torch's IndexError for an index that is no row of the weight: the kernel's assert stops
    it (index_range.py), and where no kernel runs (rows of no elements) the host checks."""
    if launch is None:
        index_range.check_on_host(indices, 0, rows, _no_row)
        return
    try:
        launch(*arguments)
    except KernelAssertionError as failure:
        raise index_range.refusal(failure, indices, 0, rows, _no_row) from None


def _no_row(index) -> Exception:
    return IndexError("index out of range in self")


def _block_d(d: int) -> int:
    return min(1 << max(d - 1, 0).bit_length(), 256)


# The gather's and the backward's launches per kind of call (the shapes, strides and dtypes of
# the weight or the gradient and of the indices, the device, ...), bound to it
# (JITFunction.bind_launch), or None where there is nothing to do; 256 kinds.
_LAUNCHES = KeptTable(256)


def _gather_launch(weight, flat, out):
    r, d = flat.numel(), weight.shape[1]
    if not (r and d):
        return None
    varying = ("weight", "indices", "out")
    if weight.device.type == "cpu":
        _, block_r, block_d, grid = tiles_and_grid(1, r, d, weight.device)
        return _gather_row_blocks.bind_launch(
            varying, grid, weight, flat, out, r, d, weight.shape[0], weight.stride(0), block_r,
            block_d, **index_range.KERNEL_CHECKS,
        )  # fmt: skip
    grid = ((r + _ROWS - 1) // _ROWS,)
    return _gather_rows.bind_launch(
        varying, grid, weight, flat, out, r, d, weight.shape[0],
        weight.stride(0), _ROWS, _block_d(d), **index_range.KERNEL_CHECKS,
    )  # fmt: skip


@aten("embedding.default")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """weight[indices]: one row of weight per index, the result allocated in its shape (the
    kernel writes its rows in order)."""
    key = (_gather_rows, weight.shape, weight.stride(), weight.dtype, weight.device,
           indices.shape, indices.stride(), indices.dtype)  # fmt: skip
    launch = _LAUNCHES.get(key)
    if launch is None:
        if weight.dim() != 2:  # torch's error: a swap of the arguments lands here
            raise RuntimeError("'weight' must be 2-D")
        tl_dtype(weight.dtype)
        if weight.stride(1) != 1:
            raise Unsupported("embedding of a weight with strided rows")
        index_range.check_index_dtype(indices, "embedding's indices")  # (the key holds the dtype)
    flat = indices if indices.is_contiguous() else indices.contiguous()  # read as flat
    out = empty((*indices.shape, weight.shape[1]), weight.dtype, weight.device)
    if launch is None:
        launch = _LAUNCHES.put(key, [_gather_launch(weight, flat, out)])
    _launched(launch[0], (weight, flat, out), flat, weight.shape[0])
    return out


@aten("embedding_dense_backward.default")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The weight's gradient: each index's gradient row added to its row."""
    if scale_grad_by_freq:
        raise Unsupported("embedding backward scaled by frequency")
    d = grad_output.shape[-1]
    grad = grad_output if grad_output.is_contiguous() else grad_output.contiguous()  # flat rows
    flat = indices if indices.is_contiguous() else indices.contiguous()
    total = torch.zeros(num_weights, d, dtype=torch.float32, device=grad.device)
    key = (_add_rows, grad.shape, grad.dtype, grad.device, flat.shape, flat.dtype, num_weights,
           padding_idx)  # fmt: skip
    launch = _LAUNCHES.get(key)
    if launch is None:
        launch = _LAUNCHES.put(key, [_add_launch(grad, flat, total, padding_idx)])
    _launched(launch[0], (grad, flat, total), flat, num_weights)
    return total if grad_output.dtype == torch.float32 else to(total, grad_output.dtype)


def _add_launch(grad, flat, total, padding_idx):
    """The bound launch adding the rows of `grad` into `total` (None: no rows): one program
    in order on the CPU, atomic adds on a GPU."""
    r, d = flat.numel(), total.shape[1]
    if not (r and d):
        return None
    varying = ("grad", "indices", "out")
    if grad.device.type == "cpu":
        return _add_rows_in_order.bind_launch(
            varying, (1,), grad, flat, total, r, d, total.shape[0], padding_idx, _block_d(d),
            **index_range.KERNEL_CHECKS,
        )  # fmt: skip
    grid = ((r + _ROWS - 1) // _ROWS,)
    return _add_rows.bind_launch(
        varying, grid, grad, flat, total, r, d, total.shape[0], padding_idx, _ROWS, _block_d(d),
        **index_range.KERNEL_CHECKS,
    )  # fmt: skip
