"""Extra function libraries for kernels: `libdevice` (the math functions CUDA's libdevice names)."""

from . import libdevice  # noqa: F401
