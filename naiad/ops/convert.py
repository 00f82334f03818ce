"""Conversions between dtypes (`tensor.to(dtype)`, ATen's `_to_copy`): a copy whose store casts.

The value is loaded as it is and stored cast to the output's dtype, never through a wider
compute type (that would round twice: fp64 -> fp32 -> fp16). To bool a value converts as
`value != 0`, as torch does, not by truncation.
"""

from __future__ import annotations

import torch

from ..runtime.jit import jit
from .dtypes import Unsupported
from .pointwise import pointwise
from .registry import aten

__all__ = ["to"]


@pointwise(promote=())
@jit
def _copy(x):
    return x


@pointwise(promote=())
@jit
def _to_bool(x):
    return x != 0


def to(input: torch.Tensor, dtype: torch.dtype, *, out=None) -> torch.Tensor:
    """input converted to `dtype` (a new tensor with input's memory order, or `out`)."""
    op = _to_bool if dtype == torch.bool else _copy
    return op(input, out=out, dtype=dtype)


@aten("_to_copy.default")
def _to_copy(input, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):  # fmt: skip
    same_device = device is None or torch.device(device) == input.device
    preserved = memory_format in (None, torch.preserve_format)
    if not same_device or layout not in (None, torch.strided) or not preserved or pin_memory:
        raise Unsupported("_to_copy across devices, layouts or memory formats")
    return to(input, input.dtype if dtype is None else dtype)
