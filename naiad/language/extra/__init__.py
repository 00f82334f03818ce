"""Extra function libraries for kernels: `libdevice` (the math functions CUDA's libdevice names),
`cuda` (the GPU's timer and ids, the launch's warps) and `cpu`; `cuda.libdevice` and
`cpu.libdevice` are `libdevice` itself, as Triton's per-target paths reach it."""

from . import cpu, cuda, libdevice  # noqa: F401
