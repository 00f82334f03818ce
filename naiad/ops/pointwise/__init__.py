"""The generated pointwise facility: `@pointwise` over a scalar function (facility.py)."""

from .facility import PointwiseOp, inplace_target, pointwise

__all__ = ["PointwiseOp", "inplace_target", "pointwise"]
