"""`TensorDescriptor`: a host-made description of a strided tensor, read and written by a kernel in
blocks of `block_shape` (as Triton's `triton.tools.tensor_descriptor.TensorDescriptor`).

On Hopper such a descriptor becomes a TMA descriptor; everywhere else it is passed as its base
pointer, shape and strides, and the kernel bounds every access by the shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from .host_arrays import describe


@dataclass
class TensorDescriptor:
    """`base` (an array) seen as `shape` with element `strides`, accessed in `block_shape` tiles."""

    base: object
    shape: list
    strides: list
    block_shape: list
    padding: str = "zero"
    round_f32_to_tf32: bool = False

    def __post_init__(self):
        self.shape, self.strides = [int(s) for s in self.shape], [int(s) for s in self.strides]
        self.block_shape = list(self.block_shape)
        rank = len(self.shape)
        if not 1 <= rank <= 5 or len(self.strides) != rank or len(self.block_shape) != rank:
            raise ValueError(
                f"a tensor descriptor has 1 to 5 dimensions with one stride and one "
                f"block size each; got shape {self.shape}, strides {self.strides}, "
                f"block_shape {self.block_shape}"
            )
        if self.strides[-1] != 1:
            raise ValueError(
                f"the last dimension of a tensor descriptor must be contiguous (stride "
                f"1), got strides {self.strides}"
            )
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"padding must be 'zero' or 'nan', got {self.padding!r}")

    @staticmethod
    def from_tensor(tensor, block_shape, padding="zero"):
        """A descriptor covering all of `tensor` (a torch tensor or a NumPy array)."""
        if hasattr(tensor, "stride") and callable(tensor.stride):
            strides = list(tensor.stride())
        else:
            itemsize = describe(tensor).itemsize
            strides = [s // itemsize for s in tensor.strides]
        return TensorDescriptor(tensor, list(tensor.shape), strides, block_shape, padding)
