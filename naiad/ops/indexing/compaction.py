"""nonzero and unique: the elements a flag keeps, written densely in order.

Both flag elements (nonzero: x != 0; unique: a sorted element unlike the one before it), take
the running count of the flags (cumsum: each kept element's row in the result, plus one) and
read the total on the host (the result's size, as torch does), then one kernel writes each kept
element at its row: nonzero its coordinates (the flat index split by the shape's strides),
unique its value (and where each group starts, for the counts; through the sort's positions,
the inverse). unique sorts with sort.py, so it takes what that takes (rows up to 4096).
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import written_to
from ..arith import sub
from ..compare import ne
from ..dtypes import tl_dtype
from ..reduce.scans import cumsum
from ..registry import aten
from .sort import sort
from .unique_dim import unique_dim

__all__ = ["nonzero", "unique"]

_BLOCK = 1024


@jit(do_not_specialize=["n", "rank", "count"])
def _coordinates_kernel(keep, rows, strides, sizes, out, n, rank, count, BLOCK: tl.constexpr):
    """out[d, rows[i] - 1] = (i // strides[d]) % sizes[d] for every kept flat index i: the
    coordinates a dim at a time, (rank, count)."""
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = i < n
    kept = tl.load(keep + i, mask=inside, other=0) != 0
    row = tl.load(rows + i, mask=inside, other=1) - 1
    for d in range(0, rank):
        stride = tl.load(strides + d)
        size = tl.load(sizes + d)
        tl.store(out + d * count + row, (i // stride) % size, mask=inside & kept)


@jit(do_not_specialize=["n"])
def _groups_kernel(values, rows, uniques, starts, inverse, order, n, BLOCK: tl.constexpr):
    """For sorted `values`: the first of each group written at its row (its value and where it
    starts), and each element's group number at its place before the sort (`order`)."""
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = i < n
    v = tl.load(values + i, mask=inside)
    before = tl.load(values + i - 1, mask=inside & (i > 0))
    first = inside & ((i == 0) | (v != before))
    group = tl.load(rows + i, mask=inside, other=1) - 1
    tl.store(uniques + group, v, mask=first)
    tl.store(starts + group, i, mask=first)
    tl.store(inverse + tl.load(order + i, mask=inside, other=0), group, mask=inside)


def _grid(n: int) -> tuple[int]:
    return ((n + _BLOCK - 1) // _BLOCK,)


@aten("nonzero.default", "nonzero.out")
def nonzero(input, *, out=None):
    """The coordinates of the nonzero elements, one row each, in row-major order: (count,
    rank), laid out a dim at a time as torch's kernels lay it out (strides (1, count)), which
    torch's own code reads by: a sparse CSR gradient came out wrong from row-major ones."""
    tl_dtype(input.dtype)
    flat = input.reshape(-1)
    n, rank = flat.numel(), input.dim()
    keep = ne(flat, 0)
    rows = cumsum(keep, 0)
    count = int(rows[-1]) if n else 0
    result = torch.empty(rank, count, dtype=torch.int64, device=input.device).t()
    if count and rank:
        shape = list(input.shape)
        strides = [1] * rank
        for d in range(rank - 2, -1, -1):
            strides[d] = strides[d + 1] * shape[d + 1]
        strides, shape = (torch.tensor(v, device=input.device) for v in (strides, shape))
        _coordinates_kernel[_grid(n)](keep, rows, strides, shape, result, n, rank, count, _BLOCK)
    return written_to(result, out)


@aten("_unique2.default")
def unique2(input, sorted=True, return_inverse=False, return_counts=False):
    """(values, inverse, counts) as ATen's _unique2: the distinct values in increasing order,
    each element's index among them (input's shape), and how often each occurs."""
    values, order = sort(input.reshape(-1), 0)
    n = values.numel()
    device = input.device
    first = ne(values[1:], values[:-1]) if n > 1 else torch.empty(0, dtype=torch.bool)
    flags = torch.empty(n, dtype=torch.int64, device=device)
    if n:
        flags[:1] = 1
        flags[1:] = first
    rows = cumsum(flags, 0)
    count = int(rows[-1]) if n else 0
    uniques = torch.empty(count, dtype=input.dtype, device=device)
    starts = torch.empty(count + 1, dtype=torch.int64, device=device)
    inverse = torch.empty(n, dtype=torch.int64, device=device)
    if n:
        _groups_kernel[_grid(n)](values, rows, uniques, starts, inverse, order, n, _BLOCK)
    starts[count:] = n
    nothing = torch.empty(0, dtype=torch.int64, device=device)
    counts = sub(starts[1:], starts[:-1]) if return_counts else nothing
    return uniques, inverse.view(input.shape) if return_inverse else nothing, counts


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique over all elements: the distinct values, sorted; with the inverse and the
    counts where asked; along a `dim`, the distinct slices (unique_dim.py)."""
    if dim is None:
        values, inverse, counts = unique2(input, sorted, return_inverse, return_counts)
    else:
        values, inverse, counts = unique_dim(input, dim, sorted, return_inverse, return_counts)
    extra = [t for t, wanted in ((inverse, return_inverse), (counts, return_counts)) if wanted]
    return (values, *extra) if extra else values
