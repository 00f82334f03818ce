"""A reduction whose kept dims fold into two or three strides, read as the operand lies.

A sum over a middle dim (the Llama step's gradient of the grouped key/value heads: (b, kv, r,
t, d) summed over r) keeps dims on both sides of the reduced one, whose strides do not fold
into one: as_rows would copy the operand into (kept, reduced) order first, on a GPU a launch of
torch's own at every call. Here a row's kept position m is split into up to three indices, one
per run of kept dims whose strides fold (m = (i0 * M1 + i1) * M2 + i2, at i0 * s0 + i1 * s1 +
i2 * s2), so the kernel reads the operand in place: one launch, the operand read once.

On the CPU the innermost run must lie contiguous, and a program reduces a block of it over all
N (a [BLOCK_N, BLOCK_M] tile of whole vectors, as a column reduction does), the outer runs'
position its second program id: no division per element, and no gathers. A mean over the
middle dim of 4 x 4096 x 4096 fp32 had copied the operand (torch's transposing copy: 0.54 s
against torch's 28 ms mean, and the operand's memory twice).
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..device_kind import device_kind
from ..dtypes import tl_dtype
from ..kept import KeptTable
from .kernels import _combine, _element, _finish, _fold, _rows
from .launch import blocks, column_blocks
from .rows import folded_stride

__all__ = ["GROUPS", "IN_PLACE", "grouped_launch", "in_place_groups", "kept_groups"]

# The most runs of kept dims the kernel splits a row's position into.
GROUPS = 3
# Where the kernels serve, by device kind: on the CPU only where the innermost kept run lies
# contiguous (the column form). The row form's division of each row's position took a sum over
# the middle dim of 8x4x4x512x64 fp32 11.8 ms on the CPU against the copy and row kernel's 7.9.
IN_PLACE = {"cpu": "contiguous inner run", "cuda": True}
_INDEX32_LIMIT = 2**31 - 1


def kept_groups(shape, strides, kept_dims) -> tuple | None:
    """The kept dims (in order, size-1 dims left out) as runs whose strides fold, each
    (size, stride), padded in front with (1, 0) to GROUPS runs; None where they need more."""
    runs = []
    for d in kept_dims:
        size, stride = shape[d], strides[d]
        if size == 1:
            continue
        if runs and runs[-1][1] == size * stride:
            runs[-1] = (runs[-1][0] * size, stride)
        else:
            runs.append((size, stride))
    if len(runs) > GROUPS:
        return None
    return ((1, 0),) * (GROUPS - len(runs)) + tuple(runs)


def in_place_groups(x: torch.Tensor, dims: list[int]) -> tuple | None:
    """(kept_groups, N, the reduced dims' one stride) where `x`'s kept dims take two or three
    runs and its reduced `dims` fold into one stride: the reductions as_rows would copy for.
    None otherwise (as_rows reads it in place, or it must copy; an empty `x`, or one on a
    device where IN_PLACE says no, goes there too)."""
    shape, strides = x.shape, x.stride()
    where = IN_PLACE[device_kind(x.device)]
    if not x.numel() or not where:
        return None
    kept_dims = [d for d in range(len(shape)) if d not in dims]
    groups = kept_groups(shape, strides, kept_dims)
    s_n = folded_stride(shape, strides, dims)
    if groups is None or groups[-2][0] == 1 or s_n is None:
        return None
    if where == "contiguous inner run" and groups[-1][1] != 1:
        return None
    n = 1
    for d in dims:
        n *= shape[d]
    return groups, n, s_n


@jit
def grouped_reduce_kernel(x, out, M, N, M1, M2, s0, s1, s2, s_n, INIT: tl.constexpr,
                          OP: tl.constexpr, COMPUTE: tl.constexpr, INDEX64: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """out[m] = the reduction (OP, as reduce_kernel's) of the N elements of kept position m,
    which lies at i0 * s0 + i1 * s1 + i2 * s2 for m = (i0 * M1 + i1) * M2 + i2, its elements
    s_n apart. The result is contiguous."""
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    outer = rows // M2
    base = (outer // M1) * s0 + (outer % M1) * s1 + (rows % M2) * s2
    acc = tl.full([BLOCK_M, BLOCK_N], INIT, COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        v = tl.load(x + base[:, None] + cols[None, :] * s_n, mask=mask, other=INIT)
        acc = _combine(acc, _element(v, OP, COMPUTE), OP)
    result = _finish(_fold(acc, OP, 1), N, OP)
    tl.store(out + rows, result.to(out.dtype.element_ty), mask=row_mask)


@jit
def grouped_columns_kernel(x, out, N, M1, M2, s0, s1, s_n, INIT: tl.constexpr, OP: tl.constexpr,
                           COMPUTE: tl.constexpr, INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr):  # fmt: skip
    """grouped_reduce_kernel's reduction where the innermost run is contiguous (s2 == 1): the
    program (j, o) reduces kept positions (i0, i1) = divmod(o, M1), i2 in block j, over all N,
    tiles [BLOCK_N, BLOCK_M] of contiguous vectors reduced over axis 0."""
    outer = tl.program_id(1)
    inner = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    if INDEX64:
        outer = outer.to(tl.int64)
        inner = inner.to(tl.int64)
    base = (outer // M1) * s0 + (outer % M1) * s1
    inner_mask = inner < M2
    acc = tl.full([BLOCK_N, BLOCK_M], INIT, COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = (cols[:, None] < N) & inner_mask[None, :]
        v = tl.load(x + base + cols[:, None] * s_n + inner[None, :], mask=mask, other=INIT)
        acc = _combine(acc, _element(v, OP, COMPUTE), OP)
    result = _finish(_fold(acc, OP, 0), N, OP)
    tl.store(out + outer * M2 + inner, result.to(out.dtype.element_ty), mask=inner_mask)


# (groups, N, s_n, the operand's dtype and device, the result's dtype, compute, OP, INIT) ->
# the kernel's launch bound to the grid, sizes and strides; 1024 kinds.
_LAUNCHES = KeptTable(1024)


def grouped_launch(x, groups, n: int, s_n: int, target, compute: torch.dtype, op: int, init):
    """Run the reduction of `x` into `target` (contiguous, one value per kept position) and
    return its bound launch, `launch(x, target)`, for `x`'s kind (None where nothing ran)."""
    (m0, s0), (m1, s1), (m2, s2) = groups
    m = m0 * m1 * m2
    if m == 0:
        return None
    key = (groups, n, s_n, x.dtype, x.device, target.dtype, compute, op, init)
    launch = _LAUNCHES.get(key)
    if launch is None:
        farthest = sum((size - 1) * stride for size, stride in groups) + (n - 1) * s_n
        options = {} if x.device.type == "cpu" else {"num_warps": 4}
        flags = {"INIT": init, "OP": op, "COMPUTE": tl_dtype(compute), **options}
        if x.device.type == "cpu" and s2 == 1:  # the column form
            block_m, block_n = column_blocks(m2, n, x.device)
            grid = ((m2 + block_m - 1) // block_m, m0 * m1)
            index64 = max(farthest, m) + block_m * block_n > _INDEX32_LIMIT
            launch = grouped_columns_kernel.bind_launch(
                ("x", "out"), grid, x, target, n, m1, m2, s0, s1, s_n, typed=("x",),
                INDEX64=index64, BLOCK_M=block_m, BLOCK_N=block_n, **flags,
            )  # fmt: skip
        else:
            block_m, block_n = blocks(m, n, x.device)
            index64 = max(farthest, m) + block_m * block_n > _INDEX32_LIMIT
            launch = grouped_reduce_kernel.bind_launch(
                ("x", "out"), ((m + block_m - 1) // block_m,), x, target, m, n, m1, m2, s0,
                s1, s2, s_n, typed=("x",), INDEX64=index64, BLOCK_M=block_m, BLOCK_N=block_n,
                **flags,
            )  # fmt: skip
        _LAUNCHES.put(key, launch)
    launch(x, target)
    return launch
