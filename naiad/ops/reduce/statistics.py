"""Variance and standard deviation over any dims (var, std, var_mean, std_mean), with torch's
`correction` (Bessel's by default): two passes per row, the mean and then the squared
deviations from it."""

from __future__ import annotations

import torch

from ..allocate import written_to
from ..registry import aten
from . import kernels as K
from .launch import accumulator, launch_rows
from .rows import as_rows, normalized_dims
from .split_moments import split_moments
from .split_rows import split_parts

__all__ = ["moments", "std", "std_mean", "var", "var_mean"]


def moments(input, dim, correction, keepdim, root: bool, dtype=None):
    """(variance or its root, mean) over `dim`, in `dtype` (the input's by default)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"std and var only support floating point dtypes, got {input.dtype}")
    rows = as_rows(input, normalized_dims(dim, input.dim()))
    dtype = dtype or input.dtype
    spread = torch.empty(rows.M, dtype=dtype, device=input.device)
    center = torch.empty(rows.M, dtype=dtype, device=input.device)
    correction = 1 if correction is None else correction
    compute = accumulator(dtype)
    parts = split_parts(rows, input.device)
    if parts > 1:  # few long rows, each in parts over more programs (split_moments.py)
        split_moments(rows, parts, spread, center, float(correction), root, compute)
    else:
        launch_rows(K.moments_kernel, rows, [spread, center], [float(correction)], compute,
                    SQRT=root)  # fmt: skip
    shape = rows.shape(keepdim)
    return spread.view(shape), center.view(shape)


@aten("var.correction", "var.correction_out")
def var(input, dim=None, *, correction=None, keepdim=False, out=None):
    """The variance over `dim`, divided by N - correction."""
    return written_to(moments(input, dim, correction, keepdim, False)[0], out)


@aten("std.correction", "std.correction_out")
def std(input, dim=None, *, correction=None, keepdim=False, out=None):
    """The standard deviation over `dim`."""
    return written_to(moments(input, dim, correction, keepdim, True)[0], out)


@aten("var_mean.correction")
def var_mean(input, dim=None, *, correction=None, keepdim=False):
    """(variance, mean) over `dim`."""
    return moments(input, dim, correction, keepdim, False)


@aten("std_mean.correction")
def std_mean(input, dim=None, *, correction=None, keepdim=False):
    """(standard deviation, mean) over `dim`."""
    return moments(input, dim, correction, keepdim, True)
