"""The global scratch of a CUDA launch: memory a kernel's programs write for themselves, today the
tensor maps of descriptors made in the kernel (backends/nvidia/lowering/tensor_map_create.py).

A compiled kernel that needs it says how many bytes per program (`global_scratch_size` in its
metadata) and takes the address as its last parameter. Each launch asks for programs x bytes,
aligned to 128, from the allocator `naiad.set_allocator` set, called as Triton calls it:
`allocator(size, alignment, stream)`, returning a tensor (or an address). Without one, a launch
takes the bytes from torch's caching allocator on the launch's device: a CUDA launch's tensors
are torch's, and that allocator orders the memory's reuse on the stream, so the allocation may
be dropped as soon as the kernel is queued. An allocator set to Triton's `NullAllocator` raises
Triton's error instead.
"""

from __future__ import annotations

import sys

from .allocator import get_allocator

ALIGNMENT = 128


def allocate(bytes_per_program: int, grid: tuple[int, int, int], device: int, stream: int):
    """The scratch of a launch over `grid` on `device`'s `stream`: the allocator's result,
    which the caller keeps until the kernel is queued."""
    size = bytes_per_program * grid[0] * grid[1] * grid[2]
    allocator = get_allocator()
    if allocator is None:
        return _torch_bytes(size, device)
    return allocator(size, ALIGNMENT, stream)


def address(allocation) -> int:
    """The device address of an allocation (a tensor, or an address already)."""
    return allocation.data_ptr() if hasattr(allocation, "data_ptr") else int(allocation)


def _torch_bytes(size: int, device: int):
    torch = sys.modules.get("torch")
    if torch is None:
        raise RuntimeError(
            "this kernel makes tensor descriptors, whose tensor maps need global scratch memory; "
            "set an allocator with naiad.set_allocator(lambda size, alignment, stream: ...)"
        )
    return torch.empty(size, dtype=torch.int8, device=torch.device("cuda", device))
