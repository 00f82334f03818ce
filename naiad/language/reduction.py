"""The two region builtins: `reduce` and `associative_scan` with a user `@jit` combine function."""

from __future__ import annotations

from .core import _tensor_member, builtin


@_tensor_member
@builtin
def reduce(input, axis, combine_fn, keep_dims=False, _semantic=None):
    """Reduce `input` (a tensor or a tuple of tensors) along `axis` with `combine_fn`.

    `combine_fn(a0, ..., b0, ...)` combines two partial results; it must be associative, as the
    order of combination is not specified. `axis=None` reduces over every element.
    """
    return _semantic.reduction(input, axis, combine_fn, keep_dims)


@_tensor_member
@builtin
def associative_scan(input, axis, combine_fn, reverse=False, _semantic=None):
    """Inclusive scan of `input` (a tensor or tuple) along `axis` with `combine_fn`."""
    return _semantic.associative_scan(input, axis, combine_fn, reverse)
