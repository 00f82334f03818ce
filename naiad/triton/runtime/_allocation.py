"""`triton.runtime._allocation` while Naiad stands in for Triton: what Triton's test fixtures
import to set and reset the scratch allocator (`NullAllocator`), over Naiad's allocator
(runtime/allocator.py), where None means that no allocator is set."""

from __future__ import annotations

from ...runtime.allocator import get_allocator, set_allocator


class NullAllocator:
    """No allocator: a kernel that needs scratch memory fails, saying to set one. Passing it to
    `triton.set_allocator` resets the allocator."""

    def __call__(self, size: int, alignment: int, stream):
        raise RuntimeError(
            "Kernel requires a runtime memory allocation, but no allocator was set. "
            "Use triton.set_allocator to specify an allocator."
        )


__all__ = ["NullAllocator", "get_allocator", "set_allocator"]
