"""`triton._C.libtriton.nvidia`: of the NVIDIA bindings, only `cublas` (the reference GEMM
Triton's tests and tutorials compare against); Naiad's NVIDIA back end is Python
(`naiad.backends.nvidia`)."""

from . import cublas  # noqa: F401
