"""`triton._C.libtriton`: of Triton's binding modules, only `ir` (a view of Naiad's TTIR)."""

from . import ir  # noqa: F401
