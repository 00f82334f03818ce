"""Builtins that change shapes: broadcast, reshape, permute, join/split, cat, gather, ..."""

from __future__ import annotations

from .core import _tensor_member, _unwrap_if_constexpr, _unwrap_shape, builtin


@builtin
def broadcast(input, other, _semantic=None):
    """Broadcast two values to their common shape."""
    return _semantic.broadcast(input, other)


@_tensor_member
@builtin
def broadcast_to(input, *shape, _semantic=None):
    """Broadcast `input` to `shape` (a tuple or varargs)."""
    return _semantic.broadcast_to(input, _unwrap_shape(shape))


@_tensor_member
@builtin
def expand_dims(input, axis, _semantic=None):
    """Insert size-1 dimensions at `axis` (an int or a sequence of ints)."""
    axis = _unwrap_if_constexpr(axis)
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    axes = [_unwrap_if_constexpr(a) for a in axes]
    rank = len(_semantic.to_tensor(input).type.get_block_shapes()) + len(axes)
    for a in axes:
        # Each axis names a dimension of the result; checked before it is normalized, or an
        # axis below -rank would wrap onto a valid one.
        if isinstance(a, int) and not -rank <= a < rank:
            raise ValueError(
                f"invalid axis {a}: expand_dims takes axes in [{-rank}, {rank - 1}] "
                f"for a result of rank {rank}"
            )
    axes = sorted(a + rank if a < 0 else a for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims received duplicate axes, normalized axes = {axes}")
    for a in axes:
        input = _semantic.expand_dims(input, a)
    return input


@_tensor_member
@builtin
def reshape(input, *shape, can_reorder=False, _semantic=None):
    """A tensor with the same elements in `shape` (row-major order unless `can_reorder`).

    An empty shape turns a single-element tensor into a scalar, as `item` does.
    """
    shape = _unwrap_shape(shape)
    if len(shape) == 0:
        return _semantic.item(input)
    return _semantic.reshape(input, shape, _unwrap_if_constexpr(can_reorder))


@_tensor_member
@builtin
def view(input, *shape, _semantic=None):
    """Deprecated: `reshape(..., can_reorder=True)` — the element order is unspecified."""
    return _semantic.reshape(input, _unwrap_shape(shape), True)


@_tensor_member
@builtin
def permute(input, *dims, _semantic=None):
    """Reorder the dimensions of `input`."""
    return _semantic.permute(input, list(_unwrap_shape(dims)))


@_tensor_member
@builtin
def trans(input, *dims, _semantic=None):
    """Permute dimensions; with no `dims`, swap the last two."""
    dims = _unwrap_shape(dims) if dims else None
    return _semantic.permute(input, list(dims) if dims else None)


@builtin
def join(a, b, _semantic=None):
    """Stack two tensors along a new minor dimension of size 2."""
    return _semantic.join(a, b)


@_tensor_member
@builtin
def split(a, _semantic=None):
    """The two halves of a tensor whose last dimension has size 2 (the inverse of `join`)."""
    return _semantic.split(a)


@builtin
def interleave(a, b, _semantic=None):
    """Interleave the elements of two tensors along their last dimension."""
    return _semantic.interleave(a, b)


@builtin
def cat(input, other, can_reorder=False, dim=0, _semantic=None):
    """Concatenate two tensors along `dim`."""
    return _semantic.cat(input, other, _unwrap_if_constexpr(can_reorder), dim)


@_tensor_member
@builtin
def gather(src, index, axis, _semantic=None):
    """`out[i][j] = src[index[i][j]][j]` along `axis` (as `torch.gather`)."""
    return _semantic.gather(src, index, axis)


@_tensor_member
@builtin
def histogram(input, num_bins, mask=None, _semantic=None):
    """Counts of the values 0..num_bins-1 in `input` (others ignored), as int32."""
    return _semantic.histogram(input, num_bins, mask)


@_tensor_member
@builtin
def item(input, _semantic=None):
    """The value of a single-element tensor as a scalar."""
    return _semantic.item(input)


@builtin
def squeeze(input, dim, _semantic=None):
    """Remove dimension `dim`, which must have size 1."""
    x = _semantic.to_tensor(input)
    shape = list(x.type.get_block_shapes())
    dim = _semantic._normalize_axis(dim, len(shape), "squeeze")
    if shape[dim] != 1:
        raise ValueError(f"squeeze: dimension {dim} has size {shape[dim]}, not 1")
    del shape[dim]
    return _semantic.reshape(x, shape) if shape else _semantic.item(x)


@builtin
def unsqueeze(input, dim, _semantic=None):
    """Insert a dimension of size 1 at `dim`."""
    return _semantic.expand_dims(input, dim)
