"""Autograd formulas of the reductions, normalizations, products, embedding and loss custom ops
(mirrors.py), made of those ops: the backward ops ATen's own formulas call where the table has
them (`_softmax_backward_data`, `native_layer_norm_backward`, `_fused_rms_norm_backward`,
`native_group_norm_backward`, `embedding_dense_backward`, `nll_loss_backward`), products for
the products, and a reduction's gradient expanded back over its reduced dims. Registered with
the pointwise ones (derivatives.py).

The products, var_mean/std_mean and the vector norms are in statistic_derivatives.py, the
other indexing ops in index_derivatives.py.
"""

from __future__ import annotations

import torch

from .derivatives import _formula, _reduce_to

__all__ = []

N = torch.ops.naiad


def _dims(dims, rank: int) -> list[int]:
    """The reduced dims, non-negative and sorted (None or an empty list: all of them)."""
    if isinstance(dims, int):
        dims = [dims]
    if not dims:
        return list(range(rank))
    return sorted(d % rank for d in dims)


def _expand_back(grad, x, dims, keepdim):
    """A reduction's result (or gradient) broadcast back over x's shape."""
    if not keepdim:
        for d in _dims(dims, x.dim()):
            grad = grad.unsqueeze(d)
    return grad.expand(x.shape)


def _as(grad, x):
    return grad if grad.dtype == x.dtype else N._to_copy(grad, dtype=x.dtype)


@_formula("sum.default")
def _sum_all(grads, inputs, outputs):
    return _as(grads[0], inputs[0]).expand(inputs[0].shape), None


@_formula("sum.dim_IntList")
def _sum(grads, inputs, outputs):
    x, dims, keepdim, _ = inputs
    return _as(_expand_back(grads[0], x, dims, keepdim), x), None, None, None


@_formula("mean.default", "mean.dim")
def _mean(grads, inputs, outputs):
    x, (dims, keepdim) = inputs[0], (inputs[1:3] if len(inputs) == 4 else (None, False))
    count = 1
    for d in _dims(dims, x.dim()):
        count *= x.shape[d]
    grad = N.div.Scalar(_expand_back(grads[0], x, dims, keepdim), count)
    return _as(grad, x), *[None] * (len(inputs) - 1)


@_formula("amax.default", "amin.default")
def _extreme(grads, inputs, outputs):
    x, dims, keepdim = inputs
    at = N.eq.Tensor(x, _expand_back(outputs[0], x, dims, keepdim))
    ties = N.sum.dim_IntList(at, _dims(dims, x.dim()), True)  # ATen shares among ties
    share = N.div.Tensor(N.mul.Tensor(_expand_back(grads[0], x, dims, keepdim), at), ties)
    return share, None, None


@_formula("max.default", "min.default")
def _whole_extreme(grads, inputs, outputs):
    """The gradient of the one extreme of all elements, shared among its ties as ATen does."""
    (x,) = inputs
    at = N.eq.Tensor(x, outputs[0])
    return (N.div.Tensor(N.mul.Tensor(grads[0], at), N.sum.default(at)),)


@_formula("logsumexp.default")
def _logsumexp(grads, inputs, outputs):
    x, dims, keepdim = inputs
    weights = N.exp(N.sub.Tensor(x, _expand_back(outputs[0], x, dims, keepdim)))
    return N.mul.Tensor(_expand_back(grads[0], x, dims, keepdim), weights), None, None


@_formula("_softmax.default")
def _softmax(grads, inputs, outputs):
    x, dim, _ = inputs
    return N._softmax_backward_data(grads[0], outputs[0], dim, x.dtype), None, None


@_formula("_log_softmax.default")
def _log_softmax(grads, inputs, outputs):
    x, dim, _ = inputs
    return N._log_softmax_backward_data(grads[0], outputs[0], dim, x.dtype), None, None


@_formula("native_layer_norm.default")
def _layer_norm(grads, inputs, outputs):
    x, shape, weight, bias, _ = inputs
    _, mean, rstd = outputs
    mask = [True, weight is not None, bias is not None]
    dx, dw, db = N.native_layer_norm_backward(grads[0], x, shape, mean, rstd, weight, bias, mask)
    return dx, None, dw, db, None


@_formula("_fused_rms_norm.default")
def _rms_norm(grads, inputs, outputs):
    x, shape, weight, _ = inputs
    mask = [True, weight is not None]
    dx, dw = N._fused_rms_norm_backward(grads[0], x, shape, outputs[1], weight, mask)
    return dx, None, dw, None


@_formula("native_group_norm.default")
def _group_norm(grads, inputs, outputs):
    x, weight, bias, n, c, hxw, group, _ = inputs
    _, mean, rstd = outputs
    mask = [True, weight is not None, bias is not None]
    dx, dw, db = N.native_group_norm_backward(
        grads[0], x, mean, rstd, weight, n, c, hxw, group, mask
    )
    return dx, dw, db, None, None, None, None, None


@_formula("mm.default")
def _mm(grads, inputs, outputs):
    (g,), (a, b) = grads, inputs
    return N.mm(g, b.t()), N.mm(a.t(), g)


@_formula("bmm.default")
def _bmm(grads, inputs, outputs):
    (g,), (a, b) = grads, inputs
    return N.bmm(g, b.transpose(1, 2)), N.bmm(a.transpose(1, 2), g)


@_formula("addmm.default", "baddbmm.default")
def _addmm(grads, inputs, outputs):
    (g,), (bias, a, b, beta, alpha) = grads, inputs
    product = N.mm if a.dim() == 2 else N.bmm
    da = product(g, b.transpose(-1, -2))
    db = product(a.transpose(-1, -2), g)
    if alpha != 1:
        da, db = N.mul.Scalar(da, alpha), N.mul.Scalar(db, alpha)
    dbias = _reduce_to(g if beta == 1 else N.mul.Scalar(g, beta), bias)
    return dbias, da, db, None, None


@_formula("embedding.default")
def _embedding(grads, inputs, outputs):
    weight, indices, padding_idx, by_frequency, _ = inputs
    dw = N.embedding_dense_backward(grads[0], indices, weight.shape[0], padding_idx, by_frequency)
    return dw, None, None, None, None


@_formula("nll_loss_forward.default")
def _nll_loss(grads, inputs, outputs):
    x, target, weight, reduction, ignore_index = inputs
    dx = N.nll_loss_backward(grads[0], x, target, weight, reduction, ignore_index, outputs[1])
    return dx, None, None, None, None


def _count(x, dims) -> int:
    count = 1
    for d in _dims(dims, x.dim()):
        count *= x.shape[d]
    return count


def _variance_slope(grads, inputs):
    """(the gradient expanded over x, (x - mean) / (n - correction))."""
    x, dims, correction, keepdim = inputs
    n = _count(x, dims) - (1 if correction is None else correction)
    centred = N.sub.Tensor(x, N.mean.dim(x, _dims(dims, x.dim()), True))
    return _expand_back(grads[0], x, dims, keepdim), N.div.Scalar(centred, n)


@_formula("var.correction")
def _var(grads, inputs, outputs):
    grad, slope = _variance_slope(grads, inputs)
    return N.mul.Tensor(grad, N.mul.Scalar(slope, 2.0)), None, None, None


@_formula("std.correction")
def _std(grads, inputs, outputs):
    grad, slope = _variance_slope(grads, inputs)
    x, dims, _, keepdim = inputs
    grad = N.div.Tensor(grad, _expand_back(outputs[0], x, dims, keepdim))
    return N.mul.Tensor(grad, slope), None, None, None


@_formula("cumsum.default")
def _cumsum(grads, inputs, outputs):
    x, dim, _ = inputs
    dims = [dim % x.dim()] if x.dim() else []
    reversed_sums = N.flip(N.cumsum(N.flip(grads[0], dims), dim), dims)
    return _as(reversed_sums, x), None, None


@_formula("max.dim", "min.dim")
def _extreme_at(grads, inputs, outputs):
    """The gradient of each kept value goes to the position its index names."""
    x, dim, keepdim = inputs
    grad, index = grads[0], outputs[1]
    if not keepdim and x.dim():
        grad, index = grad.unsqueeze(dim), index.unsqueeze(dim)
    return N.scatter.src(N.fill.Scalar(x, 0), dim, index, grad), None, None


@_formula("gather.default")
def _gather(grads, inputs, outputs):
    x, dim, index, _ = inputs
    return N.scatter_add(N.fill.Scalar(x, 0), dim, index, grads[0]), None, None, None


@_formula("index_select.default")
def _index_select(grads, inputs, outputs):
    x, dim, index = inputs
    return N.index_add(N.fill.Scalar(x, 0), dim, index, grads[0]), None, None


@_formula("cat.default")
def _cat(grads, inputs, outputs):
    """Each input's slice of the gradient (the inputs arrive as their shapes: derivatives.py);
    a legacy empty 1-d input beside others of higher rank gets none."""
    shapes, dim = inputs
    rank = len(outputs[0].shape)
    dim = dim % rank if rank else 0
    pieces, start = [], 0
    for shape in shapes:
        if len(shape) != rank:
            pieces.append(None)
            continue
        pieces.append(grads[0].narrow(dim, start, shape[dim]))
        start += shape[dim]
    return pieces, None
