"""The elementwise steps the composed normalizations and their backward share: 1/sqrt(var + eps),
(x - mean) * rstd, and (x - mean) * rstd * weight + bias with every operand broadcast to x; and
the dtype the statistics they save for their backward take."""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit
from ..dtypes import Kind
from ..pointwise import pointwise
from ..reduce.launch import accumulator

__all__ = ["normalize", "normalize_affine", "reciprocal_root", "saved_statistics_dtype"]


def saved_statistics_dtype(input):
    """The dtype of the mean and 1/std layer_norm and batch_norm hand back beside their output,
    as torch's kernels for the device give them: fp32 for fp16 and bf16 inputs on a GPU, the
    input's dtype on the CPU."""
    if input.device.type == "cpu":
        return input.dtype
    return accumulator(input.dtype)


@pointwise(Kind.DEFAULT)
@jit
def reciprocal_root(var, eps):
    return 1.0 / tl.sqrt(var + eps)


@pointwise(Kind.DEFAULT)
@jit
def normalize(x, mean, rstd):
    return (x - mean) * rstd


@pointwise(Kind.DEFAULT)
@jit
def _normalize_scale(x, mean, rstd, weight):
    return (x - mean) * rstd * weight


@pointwise(Kind.DEFAULT)
@jit
def _normalize_scale_shift(x, mean, rstd, weight, bias):
    return (x - mean) * rstd * weight + bias


def normalize_affine(x, mean, rstd, weight, bias):
    """(x - mean) * rstd, times weight and plus bias where given; in x's dtype."""
    if weight is None and bias is None:
        return normalize(x, mean, rstd, dtype=x.dtype)
    if bias is None:
        return _normalize_scale(x, mean, rstd, weight, dtype=x.dtype)
    if weight is None:
        weight = 1.0
    return _normalize_scale_shift(x, mean, rstd, weight, bias, dtype=x.dtype)
