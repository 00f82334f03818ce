"""`naiad.set_allocator`: where kernels get global scratch memory (device-made tensor descriptors on
the GPU need some). Programs in the interpreter need none, so it is only recorded there."""

from __future__ import annotations

_allocator = None


def set_allocator(allocator):
    """Use `allocator(size, alignment, stream)` for kernel scratch memory; None resets it."""
    global _allocator
    if allocator is not None and not callable(allocator):
        raise TypeError(
            f"the allocator must be callable(size, alignment, stream), got {allocator!r}"
        )
    _allocator = allocator


def get_allocator():
    """The allocator set by `set_allocator`, or None."""
    return _allocator
