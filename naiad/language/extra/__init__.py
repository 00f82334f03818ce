"""Extra function libraries for kernels: `libdevice` (the math functions CUDA's libdevice names)
and `cuda` (the GPU's timer and ids, the launch's warps)."""

from . import cuda, libdevice  # noqa: F401
