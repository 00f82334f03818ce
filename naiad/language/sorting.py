"""Sorting networks over a block: sort, topk, bitonic_merge, flip — in the kernel language.

A dimension of size 2**n is viewed as an n-dimensional hypercube of side 2. A compare-and-swap
between the two halves along one cube axis pairs each element with its partner; values are moved
as same-width integers (bit patterns) so that every dtype, NaNs included, travels unchanged.
"""

from __future__ import annotations

from . import dtypes as t
from . import math
from .active_semantic import builtin
from .core import _tensor_member, _unwrap_if_constexpr, constexpr, jit
from .creation import arange
from .iterators import range as loop_range
from .iterators import static_range
from .shape import broadcast_to, expand_dims, gather, reshape
from .standard import _log2, _same_width_int, max, min, xor_sum


@jit
def _partners(bits, shape):
    """Each element's partner in `bits` viewed as `shape = [outer, 2, inner]` (the element
    across the middle axis), and whether the element is the second of its pair. The pair's xor,
    broadcast back, xored with an element gives the other one: one exchange between the halves
    (a shuffle of lanes, or a trip through shared memory across warps) instead of one per half."""
    y = reshape(bits, shape)
    pair = broadcast_to(expand_dims(xor_sum(y, 1), 1), shape)
    is_second = broadcast_to(arange(0, 2)[None, :, None] == 1, shape)
    return reshape(y ^ pair, bits.shape), reshape(is_second, bits.shape)


@jit
def _compare_and_swap(x, flip, i, n_dims):
    """Order each pair along cube axis `i` ascending (descending where `flip` is true).

    Each element decides for itself, as Triton's `_compare_and_swap` (so the GPU) does: it takes
    its partner's value where `(x > partner) != (flip ^ is_right)`. For a pair that is neither
    greater nor less (equal, -0.0 and +0.0, a NaN) both end up with the left value."""
    n_outer = x.numel >> n_dims
    shape = [n_outer * 2**i, 2, 2 ** (n_dims - i - 1)]
    bits = x.to(_same_width_int(x.dtype), bitcast=True)
    partner, is_right = _partners(bits, shape)
    take = (x > partner.to(x.dtype, bitcast=True)) != (is_right ^ flip)
    return math.where(take, partner, bits).to(x.dtype, bitcast=True)


@jit
def _bitonic_merge_stage(x, stage, order, n_dims):
    """Merge bitonic runs of length 2**stage; order 0/1 = ascending/descending, 2 = alternating."""
    n_outer = x.numel >> n_dims
    if _unwrap_if_constexpr(order) == 2:
        shape = [n_outer * 2 ** (n_dims - 1 - stage), 2, 2**stage]
        flip = reshape(broadcast_to(arange(0, 2)[None, :, None], shape), x.shape) == 1
    else:
        flip = _unwrap_if_constexpr(order) == 1
    for i in static_range(stage):
        x = _compare_and_swap(x, flip, i + (n_dims - stage), n_dims)
    return x


@builtin
def _network_as_loops(_semantic=None):
    """Whether the target runs a bitonic network as run-time loops (`_merge_stages_in_loops`):
    the CPU does, where the unrolled network is hundreds of loop nests for LLVM to optimize;
    the GPU keeps it unrolled, its compare-and-swaps exchanging registers."""
    return constexpr(_semantic.target.backend == "cpu")


@jit
def _merge_stages_in_loops(x, first, last, descending, n_dims):
    """`_bitonic_merge_stage` for stages `first`..`last` in turn (order alternating, but
    `descending` for stage `n_dims`), as two run-time loops: each compare-and-swap gathers its
    partner, element `e ^ 2**j` of the last dimension, and decides as `_compare_and_swap` does,
    so the result is the same bit for bit, in code whose size does not grow with the network."""
    shape = [1] * (len(x.shape) - 1) + [2**n_dims]
    position = broadcast_to(reshape(arange(0, 2**n_dims), shape), x.shape)
    # Bit `stage` of `order` flips the order: alternating runs, `descending` at the last stage.
    order = position | ((1 if _unwrap_if_constexpr(descending) else 0) << n_dims)
    axis = len(x.shape) - 1
    for stage in loop_range(first, last + 1):
        flip = ((order >> stage) & 1) == 1
        for step in loop_range(0, stage):
            j = stage - 1 - step
            partner = gather(x, position ^ (1 << j), axis)
            is_right = ((position >> j) & 1) == 1
            x = math.where((x > partner) != (is_right ^ flip), partner, x)
    return x


def _minor_dim(x, dim, what):
    rank = len(x.shape)
    dim = _unwrap_if_constexpr(dim)
    dim = rank - 1 if dim is None else (dim + rank if dim < 0 else dim)
    if dim != rank - 1:
        raise ValueError(f"{what} only supports the last (minor) dimension, got dim={dim}")
    return dim


@_tensor_member
@jit
def sort(x, dim=None, descending=0):
    """`x` sorted along its last dimension (a bitonic sorting network)."""
    dim = _minor_dim(x, dim, "sort")
    n_dims = _log2(x.shape[dim])
    descending = 1 if _unwrap_if_constexpr(descending) else 0
    if _network_as_loops():
        return _merge_stages_in_loops(x, 1, n_dims, descending, n_dims)
    for i in static_range(1, n_dims + 1):
        x = _bitonic_merge_stage(x, i, 2 if i < n_dims else descending, n_dims)
    return x


@jit
def bitonic_merge(x, dim=None, descending=0):
    """Sort a bitonic sequence along the last dimension."""
    dim = _minor_dim(x, dim, "bitonic_merge")
    n_dims = _log2(x.shape[dim])
    descending = 1 if _unwrap_if_constexpr(descending) else 0
    if _network_as_loops():
        return _merge_stages_in_loops(x, n_dims, n_dims, descending, n_dims)
    return _bitonic_merge_stage(x, n_dims, descending, n_dims)


@jit
def topk(x, k, dim=None, descending=True):
    """The `k` largest (or smallest, with descending=False) values along the last dimension, sorted.

    Triton's algorithm: sort runs of `k`, then repeatedly keep the max (min) of each pair of
    runs and merge. That `max` / `min` is `tl.max` / `tl.min`, so for k < n the result has their
    dtype (int8 -> int32, fp16 / bf16 -> fp32), as in Triton."""
    dim = _minor_dim(x, dim, "topk")
    k = _unwrap_if_constexpr(k)
    n = _unwrap_if_constexpr(x.shape[dim])
    log_k, log_n = _log2(k), _log2(n)
    if k > n:
        raise ValueError(f"topk: k={k} exceeds the dimension size {n}")
    descending = 1 if _unwrap_if_constexpr(descending) else 0
    outer = [_unwrap_if_constexpr(s) for s in x.shape[:-1]]
    h = x
    if _network_as_loops():
        h = _merge_stages_in_loops(h, 1, log_k, descending, log_n)
    else:
        for i in static_range(1, log_k + 1):
            h = _bitonic_merge_stage(h, i, 2 if i < log_n else descending, log_n)
    for i in static_range(log_k + 1, log_n + 1):
        size = 2 ** (log_n - (i - log_k - 1))  # the current length of the last dimension
        pairs = reshape(h, outer + [size // (2 * k), 2, k])
        h = max(pairs, len(outer) + 1) if descending else min(pairs, len(outer) + 1)
        h = reshape(h, outer + [size // 2])
        order = 2 if i < log_n else descending
        if _network_as_loops():
            h = _merge_stages_in_loops(h, log_k, log_k, descending, _log2(size // 2))
        else:
            h = _bitonic_merge_stage(h, log_k, order, _log2(size // 2))
    return h


@_tensor_member
@jit
def flip(x, dim=None):
    """`x` reversed along `dim` (the last dimension by default)."""
    rank = len(x.shape)
    d = _unwrap_if_constexpr(dim)
    d = rank - 1 if d is None else (d + rank if d < 0 else d)
    n = _unwrap_if_constexpr(x.shape[d])
    steps = _log2(n)
    outer = 1
    for s in x.shape[:d]:
        outer *= _unwrap_if_constexpr(s)
    bits = x.to(_same_width_int(x.dtype), bitcast=True)
    for j in static_range(steps):
        shape = [outer * 2**j, 2, (bits.numel // outer) >> (j + 1)]
        bits = _partners(bits, shape)[0]
    return bits.to(x.dtype, bitcast=True)


_unused = t  # dtypes are reached through `_same_width_int`
