"""Ops that choose or blend values: where, clamp, masked_fill, fill, lerp, addcmul, addcdiv;
scalar functions under `@pointwise`. A condition or mask takes no part in type promotion and
arrives as bool.
"""

from __future__ import annotations

import torch

from .. import language as tl
from ..runtime.jit import jit
from .pointwise import inplace_target, pointwise
from .registry import aten

__all__ = [
    "addcdiv",
    "addcdiv_",
    "addcmul",
    "addcmul_",
    "clamp",
    "clamp_",
    "clamp_max",
    "clamp_max_",
    "clamp_min",
    "clamp_min_",
    "fill",
    "fill_",
    "lerp",
    "lerp_",
    "masked_fill",
    "masked_fill_",
    "where",
]

_NAN = tl.PropagateNan.ALL


@pointwise(promote=(1, 2))
@jit
def _where(condition, x, y):
    return tl.where(condition != 0, x, y)


@pointwise(promote=(0, 2))
@jit
def _masked_fill(x, mask, value):
    return tl.where(mask != 0, value, x)


@pointwise(promote=())
@jit
def _fill(value):
    return value


@pointwise()
@jit
def _clamp(x, low, high):
    return tl.minimum(tl.maximum(x, low, propagate_nan=_NAN), high, propagate_nan=_NAN)


@pointwise()
@jit
def _clamp_min(x, low):
    return tl.maximum(x, low, propagate_nan=_NAN)


@pointwise()
@jit
def _clamp_max(x, high):
    return tl.minimum(x, high, propagate_nan=_NAN)


@pointwise()
@jit
def _lerp(start, end, weight):
    # torch's form: exact at both ends, from whichever end is nearer
    return tl.where(
        tl.abs(weight) < 0.5, start + weight * (end - start), end - (end - start) * (1.0 - weight)
    )


@pointwise()
@jit
def _addcmul(x, t1, t2, value):
    return x + value * t1 * t2


@pointwise()
@jit
def _addcdiv(x, t1, t2, value):
    return x + value * (t1 / t2)


@aten("where.self", "where.self_out")
def where(condition, input, other, *, out=None):
    """input where condition holds, else other."""
    return _where(condition, input, other, out=out)


@aten("masked_fill.Scalar", "masked_fill.Tensor", "masked_fill.Scalar_out",
      "masked_fill.Tensor_out")  # fmt: skip
def masked_fill(input, mask, value, *, out=None):
    """input with `value` where mask holds."""
    if isinstance(value, torch.Tensor) and value.dim() != 0:
        raise RuntimeError("masked_fill only supports a 0-dimensional value tensor")
    return _masked_fill(input, mask, value, out=out, dtype=input.dtype)


@aten("masked_fill_.Scalar", "masked_fill_.Tensor")
def masked_fill_(input, mask, value):
    return masked_fill(input, mask, value, out=inplace_target(input, mask))


@aten("fill_.Scalar", "fill_.Tensor")
def fill_(input, value):
    """Every element of input set to value."""
    if isinstance(value, torch.Tensor):
        value = value.item()
    return _fill(value, out=input, dtype=input.dtype)


@aten("fill.Scalar", "fill.Tensor", "fill.Scalar_out", "fill.Tensor_out")
def fill(input, value, *, out=None):
    """A tensor like input, every element value."""
    if out is None:
        out = torch.empty_like(input)
    return fill_(out, value)


def _clamp_op(min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if max is None:
        return _clamp_min, (min,)
    if min is None:
        return _clamp_max, (max,)
    return _clamp, (min, max)


@aten("clamp.default", "clamp.Tensor", "clamp.out", "clamp.Tensor_out")
def clamp(input, min=None, max=None, *, out=None):
    """input limited to [min, max] (NaN stays NaN)."""
    op, bounds = _clamp_op(min, max)
    return op(input, *bounds, out=out)


@aten("clamp_.default", "clamp_.Tensor")
def clamp_(input, min=None, max=None):
    op, bounds = _clamp_op(min, max)
    return op(input, *bounds, out=inplace_target(input, *bounds))


@aten("clamp_min.default", "clamp_min.Tensor", "clamp_min.out", "clamp_min.Tensor_out")
def clamp_min(input, min, *, out=None):
    return _clamp_min(input, min, out=out)


@aten("clamp_min_.default", "clamp_min_.Tensor")
def clamp_min_(input, min):
    return clamp_min(input, min, out=inplace_target(input, min))


@aten("clamp_max.default", "clamp_max.Tensor", "clamp_max.out", "clamp_max.Tensor_out")
def clamp_max(input, max, *, out=None):
    return _clamp_max(input, max, out=out)


@aten("clamp_max_.default", "clamp_max_.Tensor")
def clamp_max_(input, max):
    return clamp_max(input, max, out=inplace_target(input, max))


@aten("lerp.Scalar", "lerp.Tensor", "lerp.Scalar_out", "lerp.Tensor_out")
def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input)."""
    return _lerp(input, end, weight, out=out)


@aten("lerp_.Scalar", "lerp_.Tensor")
def lerp_(input, end, weight):
    return lerp(input, end, weight, out=inplace_target(input, end, weight))


@aten("addcmul.default", "addcmul.out")
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2."""
    return _addcmul(input, tensor1, tensor2, value, out=out)


@aten("addcmul_.default")
def addcmul_(input, tensor1, tensor2, *, value=1):
    return addcmul(
        input, tensor1, tensor2, value=value, out=inplace_target(input, tensor1, tensor2)
    )


@aten("addcdiv.default", "addcdiv.out")
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2."""
    return _addcdiv(input, tensor1, tensor2, value, out=out)


@aten("addcdiv_.default")
def addcdiv_(input, tensor1, tensor2, *, value=1):
    return addcdiv(
        input, tensor1, tensor2, value=value, out=inplace_target(input, tensor1, tensor2)
    )
