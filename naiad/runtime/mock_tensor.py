"""`MockTensor`: an argument that stands for a tensor by its element type alone, for compiling a
kernel (`warmup`, `triton.compile`, frontend tests) where no data exists.

    kernel.warmup(MockTensor(tl.float32), MockTensor(torch.float16), 1024, grid=(1,))

It specializes as a pointer to its element type, aligned to 16 bytes, as Triton's does. There
is nothing behind it: it has no `data_ptr` (so nothing takes it for memory, and `warmup` picks
the active driver's target, as for a dtype), and a launch refuses it (launch_checks.py).
"""

from __future__ import annotations

from ..language import dtypes as t
from .host_arrays import dtype_of_host_name


class MockTensor:
    """A tensor of `dtype` (a `tl.dtype` or a torch dtype) and `shape` (default `[1]`), with no
    storage."""

    def __init__(self, dtype, shape=None):
        self.dtype = dtype
        self.shape = list(shape) if shape is not None else [1]

    @property
    def element_type(self) -> t.dtype:
        """The language's type of an element."""
        if isinstance(self.dtype, t.dtype):
            return self.dtype
        return dtype_of_host_name(str(self.dtype))

    def stride(self) -> tuple[int, ...]:
        """Row-major strides of `shape`, in elements."""
        strides, step = [], 1
        for size in reversed(self.shape):
            strides.append(step)
            step *= size
        return tuple(reversed(strides))

    @staticmethod
    def wrap_dtype(arg):
        """`arg` as a MockTensor where it is a torch dtype (how `warmup` reads one), else itself."""
        if type(arg).__module__ == "torch" and type(arg).__name__ == "dtype":
            return MockTensor(arg)
        return arg

    def __repr__(self) -> str:
        return f"MockTensor({self.dtype}, shape={self.shape})"
