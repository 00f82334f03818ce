"""Linear algebra: matrix products from one blocked tl.dot kernel (matmul.py)."""

from .matmul import addmm, baddbmm, bmm, mm

__all__ = ["addmm", "baddbmm", "bmm", "mm"]
