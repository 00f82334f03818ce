"""unique along a dim and unique_consecutive: the distinct slices (or runs of equal slices).

Slices along `dim` are compared as torch compares them, lexicographically over their elements
(the other dims in row-major order). Instead of sorting whole slices, each slice is given a dense
rank that orders as the slices do, exactly, through batched sorts of small integer keys: every
column (one element position of all the slices) is sorted (sort.py, one row per program) and
each element replaced by its dense rank within its column (a rank below n, the number of
slices); then pairs of neighbouring columns are joined into one key, rank_a * n + rank_b (below
n^2 <= 2^24: an int32), which orders as the pair (a, b) does, and ranked again. After
ceil(log2(columns)) rounds one column is left: each slice's rank among the distinct slices,
which is the inverse; the last round's sort also gives where each group starts (the counts) and
its first slice (the values, read with index_select). The number of distinct slices is read on
the host, as torch does. Up to sort.py's MAX_ROW slices (more go to torch).

unique_consecutive flags the elements (slices) unlike their predecessor, counts them with cumsum
and writes where each run starts, as compaction.py does for unique.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..arith import sub
from ..compare import ne
from ..reduce.reductions import any as any_of
from ..reduce.rows import normalized_dims
from ..reduce.scans import cumsum
from ..registry import aten
from .select import index_select
from .sort import sort

__all__ = ["unique_consecutive", "unique_dim", "unique_dim_consecutive"]

_BLOCK = 1024


@jit(do_not_specialize=["n"])
def _dense_ranks_kernel(values, order, ranks, starts, firsts, n, BLOCK: tl.constexpr,
                        LAST: tl.constexpr):  # fmt: skip
    """For each row of sorted `values` (sorted from the positions `order`): each element's
    dense rank (how many distinct values lie below it) stored at its position before the sort;
    LAST (one row): also where each group starts in the sorted row and its first position, and
    the number of groups after the starts (at `starts + n`)."""
    row = tl.program_id(0).to(tl.int64)
    i = tl.arange(0, BLOCK)
    inside = i < n
    v = tl.load(values + row * n + i, mask=inside)
    before = tl.load(values + row * n + i - 1, mask=inside & (i > 0))
    first = inside & ((i == 0) | (v != before))
    group = tl.cumsum(first.to(tl.int32), 0) - 1
    position = tl.load(order + row * n + i, mask=inside, other=0)
    tl.store(ranks + row * n + position, group, mask=inside)
    if LAST:
        tl.store(starts + group, i.to(tl.int64), mask=first)
        tl.store(firsts + group, position, mask=first)
        tl.store(starts + n, tl.max(group, 0) + 1)


@jit(do_not_specialize=["n", "columns"])
def _pairs_kernel(ranks, keys, n, columns, BLOCK: tl.constexpr):
    """keys[p, j] = ranks[2p, j] * n + ranks[2p + 1, j] (the second rank 0 past the last
    column): ordered as the pair of ranks is, lexicographically."""
    pair = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = j < n
    high = tl.load(ranks + 2 * pair * n + j, mask=inside, other=0)
    low = tl.load(ranks + (2 * pair + 1) * n + j, mask=inside & (2 * pair + 1 < columns), other=0)
    tl.store(keys + pair * n + j, high * n + low, mask=inside)


@jit(do_not_specialize=["n"])
def _runs_kernel(rows, starts, inverse, n, BLOCK: tl.constexpr):
    """For `rows`, the running count of the flags of the elements that begin a run: where each
    run starts (at its row) and each element's run."""
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = i < n
    group = tl.load(rows + i, mask=inside, other=1) - 1
    before = tl.load(rows + i - 1, mask=inside & (i > 0), other=0)
    tl.store(starts + group, i, mask=inside & (group == before))
    tl.store(inverse + i, group, mask=inside)


def _ranked(keys, last):
    """Dense ranks (int32; int64 and the groups' starts and first positions where `last`) of
    each row of `keys` (rows, n), in its own row."""
    values, order = sort(keys, dim=-1)
    rows, n = keys.shape
    device = keys.device
    ranks = torch.empty(rows, n, dtype=torch.int64 if last else torch.int32, device=device)
    starts = torch.empty(n + 1, dtype=torch.int64, device=device)
    firsts = torch.empty(n, dtype=torch.int64, device=device)
    block = 1 << max(n - 1, 0).bit_length()
    _dense_ranks_kernel[(rows,)](values, order, ranks, starts, firsts, n, block, last)
    return ranks, starts, firsts


def _slice_ranks(input, dim):
    """(inverse, starts, firsts) of the slices along `dim` (n of them), sorted as torch sorts
    them: each slice's rank among the distinct slices, where each group starts in sorted order
    (n past the last) and its first slice."""
    n = input.shape[dim]
    columns = input.numel() // n
    last = columns == 1
    ranks, starts, firsts = _ranked(input.movedim(dim, -1).reshape(columns, n), last)
    while not last:
        pairs = (columns + 1) // 2
        keys = torch.empty(pairs, n, dtype=torch.int32, device=input.device)
        grid = (pairs, (n + _BLOCK - 1) // _BLOCK)
        _pairs_kernel[grid](ranks, keys, n, columns, _BLOCK)
        columns, last = pairs, pairs == 1
        ranks, starts, firsts = _ranked(keys, last)
    return ranks.reshape(n), starts, firsts


def _empty_or_invalid(input, dim):
    """torch's answer where the slices or their elements are none: the input itself with empty
    inverse and counts (no slices), an error (slices of no elements)."""
    if input.shape[dim] == 0:
        nothing = torch.empty(0, dtype=torch.int64, device=input.device)
        return input.clone(), nothing, nothing.clone()
    raise RuntimeError(
        "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
    )


@aten("unique_dim.default")
def unique_dim(input, dim, sorted=True, return_inverse=False, return_counts=False):
    """(values, inverse, counts) as ATen's unique_dim: the distinct slices along `dim` in
    lexicographic order, each slice's index among them, and how many slices each stands for
    (inverse and counts always, as ATen's CPU kernel gives them; sorted whatever `sorted` says,
    as there). A NaN is unlike every value, its own as well (as torch's equality holds it)."""
    (dim,) = normalized_dims(dim, input.dim())
    if input.numel() == 0:
        return _empty_or_invalid(input, dim)
    inverse, starts, firsts = _slice_ranks(input, dim)
    n = input.shape[dim]
    count = int(starts[n])  # the size of the result, read on the host as torch does
    starts[count:] = n
    values = index_select(input, dim, firsts[:count])
    return values, inverse, sub(starts[1 : count + 1], starts[:count])


def _runs(differs):
    """(starts, inverse, count) of the runs that `differs` (int64, 1 where an element is unlike
    the one before it, the first included) marks."""
    n = differs.numel()
    rows = cumsum(differs, 0)
    count = int(rows[-1])
    starts = torch.empty(count + 1, dtype=torch.int64, device=differs.device)
    inverse = torch.empty(n, dtype=torch.int64, device=differs.device)
    _runs_kernel[((n + _BLOCK - 1) // _BLOCK,)](rows, starts, inverse, n, _BLOCK)
    starts[count:] = n
    return starts, inverse, count


def _runs_of(values, dim):
    """(starts, inverse, count) of the runs of equal elements of `values` along dim 0 (slices
    where `dim` is given, else single elements)."""
    differs = torch.empty(values.shape[0], dtype=torch.int64, device=values.device)
    differs[:1] = 1
    unlike = ne(values[1:], values[:-1])
    differs[1:] = (
        unlike if dim is None else any_of(unlike.reshape(len(unlike), values[0].numel()), 1)
    )
    return _runs(differs)


@aten("unique_dim_consecutive.default")
def unique_dim_consecutive(input, dim, return_inverse=False, return_counts=False):
    """(values, inverse, counts) as ATen's unique_dim_consecutive: the first slice along `dim` of
    each run of equal slices, each slice's run and the runs' lengths (all three always)."""
    (dim,) = normalized_dims(dim, input.dim())
    if input.numel() == 0:
        return _empty_or_invalid(input, dim)
    starts, inverse, count = _runs_of(input.movedim(dim, 0), dim)
    return index_select(input, dim, starts[:count]), inverse, sub(starts[1:], starts[:-1])


@aten("unique_consecutive.default")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """(values, inverse, counts) as ATen's unique_consecutive: the first element (slice along
    `dim`) of each run of equal ones, each one's run (input's shape), and the runs' lengths.
    Without a dim, inverse and counts are empty where not asked for, as ATen's."""
    if dim is not None:
        return unique_dim_consecutive(input, dim, return_inverse, return_counts)
    flat = input.reshape(-1)
    nothing = torch.empty(0, dtype=torch.int64, device=input.device)
    if flat.numel() == 0:
        return flat.clone(), nothing.view(input.shape) if return_inverse else nothing, nothing
    starts, inverse, count = _runs_of(flat, None)
    return (
        index_select(flat, 0, starts[:count]),
        inverse.view(input.shape) if return_inverse else nothing,
        sub(starts[1:], starts[:-1]) if return_counts else nothing.clone(),
    )
