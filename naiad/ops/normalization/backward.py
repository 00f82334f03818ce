"""The backward of every mean/variance normalization, composed of Naiad's ops.

With xhat = (x - mean) * rstd over the normalized dims and gw = grad * weight:
    dx = rstd * (gw - xhat * mean(gw * xhat) - mean(gw))   (rms_norm: no mean(gw) term)
    dweight = sum(grad * xhat), dbias = sum(grad) over the dims the parameters are shared by.
Intermediates are fp32 for fp16/bf16 inputs. The same formula serves layer_norm, group_norm,
batch_norm (training) and rms_norm; only the dims differ.
"""

from __future__ import annotations

import torch

from ...runtime.jit import jit
from ..dtypes import Kind
from ..pointwise import pointwise
from ..reduce import mean as _mean
from ..reduce import sum as _sum
from .affine import normalize

__all__ = ["normalized_backward"]


@pointwise(Kind.DEFAULT)
@jit
def _times(a, b):
    return a * b


@pointwise(Kind.DEFAULT)
@jit
def _input_grad(gw, xhat, a, c, rstd):
    return rstd * (gw - xhat * a - c)


def _wide(dtype):
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def normalized_backward(grad, x, mean, rstd, weight, normalized, shared, centered, output_mask,
                        weight_view=None):  # fmt: skip
    """(dx, dweight, dbias) (None where output_mask says not needed).

    Args:
        mean, rstd: broadcastable to x (size 1 along `normalized`); mean unused if not centered.
        weight: the scale or None; `weight_view`, its shape broadcast against x (default: the
            trailing dims).
        normalized: the dims each statistic covers; shared: the dims dweight/dbias sum over.
    """
    wide = _wide(x.dtype)
    center = mean if centered else 0.0
    xhat = normalize(x, center, rstd, dtype=wide)
    w = None if weight is None else (weight if weight_view is None else weight.view(weight_view))
    gw = _times(grad, w, dtype=wide) if w is not None else grad.to(wide)
    dx = dw = db = None
    if output_mask[0] and not normalized:  # fixed statistics (batch_norm in inference)
        dx = _times(gw, rstd, dtype=x.dtype)
    elif output_mask[0]:
        a = _mean(_times(gw, xhat), normalized, keepdim=True)
        c = _mean(gw, normalized, keepdim=True) if centered else 0.0
        dx = _input_grad(gw, xhat, a, c, rstd, dtype=x.dtype)
    if output_mask[1] and weight is not None:
        dw = _summed(_times(grad, xhat, dtype=wide), shared, weight.dtype).view(weight.shape)
    if output_mask[2]:
        db = _summed(grad, shared, grad.dtype)
        db = db.view(weight.shape) if weight is not None else db
    return dx, dw, db


def _summed(t, shared, dtype):
    """t summed over the `shared` dims; none (a layer_norm over every dim) leaves it as it is,
    where a sum over no dims would sum over all."""
    return _sum(t, shared, dtype=dtype) if shared else t.to(dtype)
