"""`triton._C.libtriton`: of Triton's binding modules, `ir` (a view of Naiad's TTIR) and
`nvidia.cublas` (the reference GEMM of Triton's tests, through torch)."""

from . import ir, nvidia  # noqa: F401
