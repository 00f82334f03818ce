"""matmul, linear and cross_entropy as direct calls: ops torch composes of others (no ATen
kernel of their own, so the switch never sees them: their parts are what it registers), composed
here of naiad.ops' own entry points.

Imported by the package after its entry points are installed (`__init__.py`), so `mm`, `log_softmax`
and the rest below are those entry points: an eager call runs the plain kernels, a call that
records a gradient or runs under torch.compile goes through their custom ops, and dynamo traces
these functions through instead of breaking its graph at them. The views between the parts
(`reshape`, `expand`, `movedim`) are torch's; a reshape that cannot be a view copies, as torch's
own composition does.
"""

from __future__ import annotations

import math

import torch

from . import add as _add
from . import (
    addmm,
    bmm,
    div,
    eq,
    index_select,
    log_softmax,
    logical_not,
    masked_fill,
    mm,
    mul,
    neg,
    nll_loss,
)
from . import sum as _sum
from .allocate import written_to
from .graph_breaks import out_refusal, records

__all__ = ["cross_entropy", "linear", "matmul"]


def matmul(input, other, *, out=None):
    """torch.matmul: a dot product of vectors, a matrix-vector or vector-matrix product, a
    matrix product, or a batch of them whose batch dimensions broadcast. A vector operand is
    a one-row (first) or one-column (second) matrix whose dimension the result drops."""
    if out is not None and torch.is_grad_enabled() and records((input, other)):
        raise out_refusal("matmul")
    result = _matmul(input, other)
    return written_to(result, out)


def _matmul(input, other):
    rank_a, rank_b = input.dim(), other.dim()
    if not rank_a or not rank_b:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {rank_a}D and {rank_b}D"
        )
    a = input.unsqueeze(0) if rank_a == 1 else input  # (..., M, K)
    b = other.unsqueeze(1) if rank_b == 1 else other  # (..., K, N)
    (m, k), n = a.shape[-2:], b.shape[-1]
    if b.dim() == 2:  # a's batch folds into its rows: one product
        batch = a.shape[:-2]
        product = mm(a.reshape(math.prod(batch) * m, k), b)
    else:
        batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        count = math.prod(batch)
        a3 = a.expand(*batch, m, k).reshape(count, m, k)
        b3 = b.expand(*batch, *b.shape[-2:]).reshape(count, *b.shape[-2:])
        product = bmm(a3, b3)
    shape = (*batch, *([m] if rank_a > 1 else []), *([n] if rank_b > 1 else []))
    return product.reshape(shape)


def linear(input, weight, bias=None):
    """torch.nn.functional.linear: input @ weight.T + bias over input's last dimension, as one
    addmm of input's rows where there is a bias and a matrix of weights."""
    weight_t = weight.t() if weight.dim() == 2 else weight
    if bias is None or weight.dim() != 2 or input.dim() < 2:
        result = _matmul(input, weight_t)
        return result if bias is None else _add(result, bias)
    rows = input.reshape(math.prod(input.shape[:-1]), input.shape[-1])
    return addmm(bias, rows, weight_t).reshape(*input.shape[:-1], weight.shape[0])


_REDUCTIONS = ("none", "mean", "sum")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):  # fmt: skip
    """torch.nn.functional.cross_entropy of unnormalized scores `input`, (C,), (N, C) or
    (N, C, d1, ...), against class indices (`ignore_index` skipped, `weight` per class) or
    class probabilities of input's shape; `label_smoothing` mixes the target with the uniform
    distribution over the C classes. Made of log_softmax, nll_loss and pointwise ops and sums,
    each differentiable, so the gradient is theirs."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    log_p = log_softmax(input, class_dim)
    if target.dtype.is_floating_point:
        return _against_probabilities(log_p, target, weight, reduction, label_smoothing)
    classes = input.shape[class_dim]
    rows, labels = log_p, target
    if input.dim() > 2:  # classes last, one row a position
        rows, labels = log_p.movedim(1, -1).reshape(-1, classes), target.reshape(-1)
    loss = nll_loss(rows, labels, weight, ignore_index, reduction)
    if reduction == "none" and input.dim() > 2:
        loss = loss.reshape(target.shape)
    if not label_smoothing:
        return loss
    smooth = _smoothing_loss(rows, labels, weight, ignore_index, reduction)
    if reduction == "none" and input.dim() > 2:
        smooth = smooth.reshape(target.shape)
    return _add(mul(loss, 1.0 - label_smoothing), mul(smooth, label_smoothing / classes))


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    """The reduction the deprecated `size_average` and `reduce` name where either is given
    (each True when not), as torch reads them; else `reduction`."""
    if size_average is not None or reduce is not None:
        if reduce is False:
            return "none"
        return "sum" if size_average is False else "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _smoothing_loss(rows, labels, weight, ignore_index: int, reduction: str):
    """The uniform target's loss: minus each row's (weighted) sum of log-probabilities, 0 at an
    ignored target; the mean divides by the ignored-free targets' weights (their count), as
    nll_loss's mean does."""
    summed = rows if weight is None else mul(rows, weight)
    ignored = eq(labels, ignore_index)
    per_row = masked_fill(neg(_sum(summed, -1)), ignored, 0.0)
    if reduction == "none":
        return per_row
    total = _sum(per_row)
    if reduction == "sum":
        return total
    if weight is None:
        kept = _sum(logical_not(ignored), dtype=rows.dtype)
    else:
        picked = index_select(weight, 0, masked_fill(labels, ignored, 0))
        kept = _sum(masked_fill(picked, ignored, 0.0))
    return div(total, kept)


def _against_probabilities(log_p, target, weight, reduction: str, label_smoothing: float):
    """Minus the sum over classes of target x log-probability (x the class's weight); the mean
    divides by the number of rows, and is NaN for none."""
    if target.shape != log_p.shape:
        raise ValueError(
            f"class probabilities must have the input's shape {tuple(log_p.shape)}, got "
            f"{tuple(target.shape)}"
        )
    class_dim = 0 if log_p.dim() == 1 else 1
    classes = log_p.shape[class_dim]
    if label_smoothing:
        target = _add(mul(target, 1.0 - label_smoothing), label_smoothing / classes)
    terms = mul(log_p, target)
    if weight is not None:
        shape = [1] * log_p.dim()
        shape[class_dim] = classes
        terms = mul(terms, weight.reshape(shape))
    per_row = neg(_sum(terms, class_dim))
    if reduction == "none":
        return per_row
    total = _sum(per_row)
    if reduction == "sum":
        return total
    rows = log_p.numel() // classes if classes else 0
    return div(total, float(rows) if rows else math.nan)
