"""Variance and standard deviation over any dims (var, std, var_mean, std_mean), with torch's
`correction` (Bessel's by default): two passes per row, the mean and then the squared
deviations from it."""

from __future__ import annotations

from ..allocate import empty, written_to
from ..kept import KeptTable
from ..registry import aten
from . import kernels as K
from .launch import accumulator, launch_rows
from .rows import as_rows, normalized_dims
from .split_moments import split_moments
from .split_rows import split_parts

__all__ = ["moments", "std", "std_mean", "var", "var_mean"]


# What one kind of call decides (the operand's dtype, device, shape and strides, the dims,
# keepdim, variance or its root, the result's dtype): the results' shape and the bound
# launch(es); a call of a known kind allocates and launches. Kept where the rows read the
# operand as it lies.
_PLANS = KeptTable(1024)


def moments(input, dim, correction, keepdim, root: bool, dtype=None):
    """(variance or its root, mean) over `dim`, in `dtype` (the input's by default)."""
    dims = dim if dim is None or isinstance(dim, int) else tuple(dim)
    key = (input.dtype, input.device, input.shape, input.stride(), dims, keepdim, root, dtype)
    plan = _PLANS.get(key)
    if plan is None:
        return _first_moments(input, dim, correction, keepdim, root, dtype, key)
    shape, launch = plan
    spread = empty(shape, dtype or input.dtype, input.device)
    center = empty(shape, dtype or input.dtype, input.device)
    launch(input, spread, center, _correction(correction))
    return spread, center


def _correction(correction) -> float:
    return 1.0 if correction is None else float(correction)


def _first_moments(input, dim, correction, keepdim, root: bool, dtype, key):
    """`moments` the whole way, its plan kept where it can be."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"std and var only support floating point dtypes, got {input.dtype}")
    rows = as_rows(input, normalized_dims(dim, input.dim()))
    dtype = dtype or input.dtype
    shape = rows.shape(keepdim)
    spread = empty(shape, dtype, input.device)
    center = empty(shape, dtype, input.device)
    correction = _correction(correction)
    compute = accumulator(dtype)
    parts = split_parts(rows, input.device)
    if parts > 1:  # few long rows, each in parts over more programs (split_moments.py)
        launch = split_moments(rows, parts, spread, center, correction, root, compute)
    else:
        launch = launch_rows(K.moments_kernel, rows, [spread, center], [correction], compute,
                             SQRT=root)  # fmt: skip
    if launch is not None and rows.data is input:
        _PLANS.put(key, (shape, launch))
    return spread, center


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
