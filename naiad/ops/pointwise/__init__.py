"""The generated pointwise facility: `@pointwise` over a scalar function (facility.py)."""

from .facility import PointwiseOp, UserPointwiseOp, inplace_target, pointwise, user_pointwise

__all__ = ["PointwiseOp", "UserPointwiseOp", "inplace_target", "pointwise", "user_pointwise"]
