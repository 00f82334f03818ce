"""Prefix scans along one dim: cumsum and cumprod.

The operand is seen as rows with the scanned dim last (rows.py); each program scans BLOCK_M
rows chunk by chunk, carrying each row's running total into the next chunk. The result is
written in that row order and viewed back in the operand's dim order.

Rows too few for the device (split_rows.split_parts: one row of a top-p sampler's vocabulary,
a 1-D tensor) are scanned in parts over more programs: each part's total first (the
reduction kernel over the parts as rows), then each part scanned from the total of the row's
parts before it, which its program folds from the partials itself.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import empty, written_to
from ..dtypes import tl_dtype
from ..kept import KeptTable
from ..registry import aten
from .kernels import PROD, SUM, _rows, reduce_kernel
from .launch import accumulator, launch_rows
from .rows import as_rows, in_dim_order, normalized_dims
from .split_rows import split_parts

__all__ = ["cumprod", "cumsum"]


@jit
def _multiply(a, b):
    return a * b


@jit
def scan_kernel(x, out, M, N, s_m, s_n, s_out, PRODUCT: tl.constexpr, COMPUTE: tl.constexpr,
                INDEX64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """out[m, n] = x[m, 0] + ... + x[m, n] (or the product); `out` is (M, N) contiguous."""
    rows = _rows(BLOCK_M, INDEX64)
    if PRODUCT:
        carry = tl.full([BLOCK_M], 1, COMPUTE)
    else:
        carry = tl.zeros([BLOCK_M], COMPUTE)
    _scan_rows(x, out, rows, rows < M, N, s_m, s_n, carry, PRODUCT, COMPUTE, BLOCK_M, BLOCK_N)


@jit
def scan_part_kernel(x, out, M, N, s_m, s_n, s_out, totals, PRODUCT: tl.constexpr,
                     PARTS: tl.constexpr, COMPUTE: tl.constexpr, INDEX64: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """scan_kernel over M parts of N elements, PARTS parts a row, each part's running total
    started from the total of its row's parts before it (`totals`, one a part)."""
    parts = _rows(BLOCK_M, INDEX64)
    part_mask = parts < M
    first = parts - parts % PARTS  # the row's first part
    earlier = tl.arange(0, PARTS)[None, :] < (parts % PARTS)[:, None]
    where = first[:, None] + tl.arange(0, PARTS)[None, :]
    before = tl.load(totals + where, mask=part_mask[:, None] & earlier, other=PRODUCT)
    if PRODUCT:
        carry = tl.reduce(before.to(COMPUTE), 1, _multiply)
    else:
        carry = tl.sum(before.to(COMPUTE), 1)
    _scan_rows(x, out, parts, part_mask, N, s_m, s_n, carry, PRODUCT, COMPUTE, BLOCK_M, BLOCK_N)


@jit
def _scan_rows(x, out, rows, row_mask, N, s_m, s_n, carry, PRODUCT: tl.constexpr,
               COMPUTE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """Scan `rows` (read at x + m * s_m + n * s_n) into the contiguous rows of `out`, each
    running total started from its `carry`."""
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        reads = rows[:, None] * s_m + cols[None, :] * s_n
        v = tl.load(x + reads, mask=mask, other=PRODUCT).to(COMPUTE)
        if PRODUCT:
            result = tl.associative_scan(v, 1, _multiply) * carry[:, None]
            carry = carry * tl.reduce(v, 1, _multiply)
        else:
            result = tl.cumsum(v, 1) + carry[:, None]
            carry = carry + tl.sum(v, 1)
        offsets = rows[:, None] * N + cols[None, :]
        tl.store(out + offsets, result.to(out.dtype.element_ty), mask=mask)


# A scan's least part on a GPU (split_rows.split_parts'), as softmax's: a row's one program
# scans far slower than it reduces (one row of 128256 fp32: 65 us against torch's 18 on an
# H200), and with a reduction's 64 KiB that row made 4 parts, one program still.
SCAN_LEAST_PART_BYTES = 8192


def _launch_scan(rows, buffer, compute, product: bool):
    """Scan `rows` into the contiguous (M, N) `buffer`: whole rows, or each in parts; the
    launches made now. Returns `launch(data, buffer)`, which repeats them for a call of the
    kind on its own tensors (a plan's), or None where nothing ran."""
    parts = split_parts(rows, rows.data.device, SCAN_LEAST_PART_BYTES)
    if parts == 1:
        return launch_rows(scan_kernel, rows, [buffer], [], compute, PRODUCT=product)
    pieces = rows.in_parts(parts)
    device = rows.data.device
    totals = empty((pieces.M,), compute, device)
    first = launch_rows(reduce_kernel, pieces, [totals], [], compute, True, INIT=int(product),
                        OP=PROD if product else SUM, WHOLE=False)  # fmt: skip
    second = launch_rows(scan_part_kernel, pieces, [buffer], [totals], compute,
                         PRODUCT=product, PARTS=parts)  # fmt: skip

    def launch(data, result):
        totals = empty((pieces.M,), compute, device)
        first(data, totals)
        second(data, result, totals)

    return launch


# What one kind of call decides (the operand's dtype, device, shape and strides, the dim, the
# result's dtype, sum or product): the bound launch(es); a call of a known kind allocates and
# launches. Kept where the scanned dim is the operand's last and the rows read it as it lies
# (the result then has the operand's shape, no view made). Host time of cumsum over 16 x 64 on
# the development CPU: 12.3 us a call without.
_PLANS = KeptTable(1024)


def _scan(input, dim, dtype, product: bool, out=None):
    if out is not None and dtype is None:  # as torch: the scan runs in out's dtype, its
        dtype = out.dtype  # operand converted first (a float cumsum into int64 sums integers)
    if dtype == torch.bool:
        name = "cumprod" if product else "cumsum"  # as torch: running bools are no bools
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
    key = (input.dtype, input.device, input.shape, input.stride(), dim, dtype, product)
    plan = _PLANS.get(key) if out is None else None
    if plan is not None:
        result_dtype, launch = plan
        result = empty(input.shape, result_dtype, input.device)
        launch(input, result)
        return result
    tl_dtype(input.dtype)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else torch.int64
    x = input.reshape(1) if input.dim() == 0 else input
    (d,) = normalized_dims(dim, x.dim())
    rows = as_rows(x, [d])
    buffer = torch.empty(rows.M, rows.N, dtype=dtype, device=input.device)
    launch = _launch_scan(rows, buffer, _scan_accumulator(dtype), product)
    if launch is not None and x is input and rows.data is input and d == x.dim() - 1:
        _PLANS.put(key, (dtype, launch))
    last = buffer.view([*x.shape[:d], *x.shape[d + 1 :], x.shape[d]])
    result = in_dim_order(last, d, contiguous=out is None).view(input.shape)
    return written_to(result, out)


def _scan_accumulator(dtype: torch.dtype) -> torch.dtype:
    """The dtype a scan runs in: the reductions' accumulator, and int32 for narrower integers,
    in which the language sums them (a running total of int16 re-assigned an int32 sum did not
    compile); the result's wrap-around is the same."""
    if dtype in (torch.int8, torch.uint8, torch.int16):
        return torch.int32
    return accumulator(dtype)


@aten("cumsum.default", "cumsum.out")
def cumsum(input, dim, *, dtype=None, out=None):
    """Running sums along `dim` (integers and bools sum in int64)."""
    return _scan(input, dim, dtype, False, out)


@aten("cumsum_.default")
def cumsum_(input, dim, *, dtype=None):
    return _scan_in_place(input, dim, dtype, False)


@aten("cumprod.default", "cumprod.out")
def cumprod(input, dim, *, dtype=None, out=None):
    """Running products along `dim`."""
    return _scan(input, dim, dtype, True, out)


@aten("cumprod_.default")
def cumprod_(input, dim, *, dtype=None):
    return _scan_in_place(input, dim, dtype, True)


def _scan_in_place(input, dim, dtype, product: bool):
    """The scan written into `input`, in its dtype (integers too, which out of place scan into
    int64), which a given `dtype` must be, as torch requires."""
    if dtype is not None and dtype != input.dtype:
        raise RuntimeError(
            f"Bad in-place call: input tensor dtype {input.dtype} and output tensor dtype "
            f"{dtype} should match"
        )
    return input.copy_(_scan(input, dim, input.dtype, product))
