"""The extremes with their positions: max/min over a dim with indices, argmax/argmin (the
first position on ties; NaN counts as the extreme, as in torch), and max/min of everything."""

from __future__ import annotations

import torch

from ..allocate import empty, written_to
from ..dtypes import tl_dtype
from ..kept import KeptTable
from ..registry import aten
from . import kernels as K
from .launch import ACCUMULATOR_BLOCK_N, accumulator, launch_rows
from .reductions import _highest, _lowest, _no_empty_reduction, amax, amin
from .rows import as_rows, normalized_dims
from .split_extremes import split_extremes
from .split_rows import split_parts

__all__ = ["argmax", "argmin", "max", "min"]


# What one kind of call decides (the operand's dtype, device, shape and strides, the dim,
# keepdim, largest or smallest): the results' shape, the row kernel's bound launch and its
# init; a call of a known kind allocates and launches. Host time of argmax over 16 x 64 on
# the development CPU: 10.8 us a call without, where amax's plan gives 4.9.
_PLANS = KeptTable(1024)


def _extreme(input, dim, keepdim, largest: bool):
    """(values, indices) over `dim` (None: the flattened input)."""
    key = (input.dtype, input.device, input.shape, input.stride(), dim, keepdim, largest)
    plan = _PLANS.get(key)
    if plan is None:
        return _first_extreme(input, dim, keepdim, largest, key)
    shape, launch, init = plan
    values = empty(shape, input.dtype, input.device)
    indices = empty(shape, torch.int64, input.device)
    launch(input, values, indices, init)
    return values, indices


def _first_extreme(input, dim, keepdim, largest: bool, key):
    """`_extreme` the whole way, its plan kept where the rows read the operand as it lies (the
    flattened view of a contiguous operand is the same memory)."""
    tl_dtype(input.dtype)
    name = "argmax" if largest else "argmin"
    _no_empty_reduction(input, dim, name)
    flat = input.reshape(-1) if dim is None else input
    rows = as_rows(flat, normalized_dims(0 if dim is None else dim, flat.dim()))
    if dim is None:
        shape = [1] * input.dim() if keepdim else []
    else:
        shape = rows.shape(keepdim)
    values = empty(shape, input.dtype, input.device)
    indices = empty(shape, torch.int64, input.device)
    init = _lowest(input.dtype) if largest else _highest(input.dtype)
    compute = torch.int32 if input.dtype == torch.bool else accumulator(input.dtype)
    parts = split_parts(rows, input.device)
    if parts > 1:  # few long rows, each in parts over more programs (split_extremes.py)
        launch = split_extremes(rows, parts, values, indices, init, compute, largest)
    else:
        launch = launch_rows(K.arg_reduce_kernel, rows, [values, indices], [init], compute,
                             lanes=ACCUMULATOR_BLOCK_N, LARGEST=largest)  # fmt: skip
    as_it_lies = rows.data is flat and (flat is input or input.is_contiguous())
    if launch is not None and as_it_lies:
        _PLANS.put(key, (shape, launch, init))
    return values, indices


@aten("max.dim")
def _max_dim(input, dim, keepdim=False):
    return _extreme(input, dim, keepdim, True)


@aten("min.dim")
def _min_dim(input, dim, keepdim=False):
    return _extreme(input, dim, keepdim, False)


@aten("max.default")
def _max_all(input):
    return amax(input)


@aten("min.default")
def _min_all(input):
    return amin(input)


def max(input, dim=None, keepdim=False):
    """The largest element, or (values, indices) along `dim`."""
    if dim is None:
        return amax(input)
    return torch.return_types.max(_extreme(input, dim, keepdim, True))


def min(input, dim=None, keepdim=False):
    """The smallest element, or (values, indices) along `dim`."""
    if dim is None:
        return amin(input)
    return torch.return_types.min(_extreme(input, dim, keepdim, False))


@aten("argmax.default", "argmax.out")
def argmax(input, dim=None, keepdim=False, *, out=None):
    """The position of the first largest element (of the flattened input where dim is None)."""
    index = _extreme(input, dim, keepdim, True)[1]
    return written_to(index, out)


@aten("argmin.default", "argmin.out")
def argmin(input, dim=None, keepdim=False, *, out=None):
    """The position of the first smallest element."""
    index = _extreme(input, dim, keepdim, False)[1]
    return written_to(index, out)
