"""Autograd formulas of the products, the mean-and-spread pairs and the vector norms (prod,
cumprod, var_mean, std_mean, linalg_vector_norm), made of the custom ops and registered with the
others (derivatives.py). Each is ATen's derivative, written so that zeros need no branch on the
data (a compiled graph cannot take one):

- prod: each element's gradient is the product of the others, from the exclusive cumulative
  products from both ends (exact with zeros: one zero passes the gradient to itself alone, two
  pass none, as ATen's zero-safe path does);
- cumprod: element k's gradient is sum over j >= k of grad_j * (the product up to j but x_k),
  from the products of x_{k+1..j} of an n x n triangle per row (n the scanned dim's length);
- var_mean/std_mean: var's or std's gradient plus the mean's, grad / n at every element;
- norms: ord 0 none, ord inf/-inf shared evenly among the elements whose |x| is the norm,
  any other p sign(x) |x|^(p-1) grad / norm^(p-1), 0 where the norm is 0.
"""

from __future__ import annotations

import math

import torch

from .derivatives import _formula
from .row_derivatives import _as, _count, _dims, _expand_back, _variance_slope

__all__ = []

N = torch.ops.naiad


def _exclusive_cumprod(x, dim, n):
    ones = N.fill.Scalar(x.narrow(dim, 0, 1), 1)
    return N.cumprod(N.cat([ones, x.narrow(dim, 0, n - 1)], dim), dim)


def _product_of_others(x, dim):
    """Each element's product of the other elements along `dim`."""
    n = x.shape[dim]
    before = _exclusive_cumprod(x, dim, n)
    after = N.flip(_exclusive_cumprod(N.flip(x, [dim]), dim, n), [dim])
    return N.mul.Tensor(before, after)


@_formula("prod.default")
def _prod_all(grads, inputs, outputs):
    x = inputs[0]
    others = _product_of_others(x.reshape(-1), 0).reshape(x.shape)
    return _as(N.mul.Tensor(grads[0], others), x), None


@_formula("prod.dim_int")
def _prod(grads, inputs, outputs):
    x, dim, keepdim, _ = inputs
    if not x.dim():
        return _as(grads[0], x), None, None, None
    grad = _expand_back(grads[0], x, dim, keepdim)
    return _as(N.mul.Tensor(grad, _product_of_others(x, dim)), x), None, None, None


@_formula("cumprod.default")
def _cumprod(grads, inputs, outputs):
    x, dim, _ = inputs
    if not x.dim():
        return _as(grads[0], x), None, None
    rows, g = x.movedim(dim, -1), _as(grads[0], x).movedim(dim, -1)
    n = rows.shape[-1]
    square = rows.unsqueeze(-2).expand(*rows.shape, n)  # [..., k, j] is x_j
    past_k = N.triu(N.fill.Scalar(square, 1), 1)  # 1 where j > k
    spans = N.cumprod(N.masked_fill.Scalar(square, N.eq.Scalar(past_k, 0), 1), -1)
    weighted = N.triu(N.mul.Tensor(spans, g.unsqueeze(-2)), 0)  # j >= k only
    dx = N.mul.Tensor(_exclusive_cumprod(rows, -1, n), N.sum.dim_IntList(weighted, [-1], False))
    return dx.movedim(-1, dim), None, None


def _mean_part(grads, inputs):
    x, dims, _, keepdim = inputs
    return N.div.Scalar(_expand_back(grads[1], x, dims, keepdim), _count(x, dims))


@_formula("var_mean.correction")
def _var_mean(grads, inputs, outputs):
    grad, slope = _variance_slope(grads, inputs)
    dx = N.add.Tensor(N.mul.Tensor(grad, N.mul.Scalar(slope, 2.0)), _mean_part(grads, inputs))
    return dx, None, None, None


@_formula("std_mean.correction")
def _std_mean(grads, inputs, outputs):
    grad, slope = _variance_slope(grads, inputs)
    x, dims, _, keepdim = inputs
    grad = N.div.Tensor(grad, _expand_back(outputs[0], x, dims, keepdim))
    return N.add.Tensor(N.mul.Tensor(grad, slope), _mean_part(grads, inputs)), None, None, None


def _norm_share(x, order, norm, dims):
    """d norm / d x for an order other than 2."""
    if order == 0:
        return N.fill.Scalar(x, 0)
    if order == 1:
        return N.sign(x)
    if math.isinf(order):
        at = N.eq.Tensor(N.abs(x), norm)
        return N.div.Tensor(N.mul.Tensor(N.sign(x), at), N.sum.dim_IntList(at, dims, True))
    power = N.pow.Tensor_Scalar(N.abs(x), order - 1)
    if order < 1:
        power = N.masked_fill.Scalar(power, N.eq.Scalar(x, 0), 0)
    share = N.div.Tensor(N.mul.Tensor(N.sign(x), power), N.pow.Tensor_Scalar(norm, order - 1))
    return N.masked_fill.Scalar(share, N.eq.Scalar(norm, 0), 0)


@_formula("linalg_vector_norm.default")
def _norm(grads, inputs, outputs):
    x, order, dims, keepdim, _ = inputs
    grad = _expand_back(grads[0], x, dims, keepdim)
    norm = _expand_back(outputs[0], x, dims, keepdim)
    if order == 2:
        share = N.masked_fill.Scalar(N.div.Tensor(x, norm), N.eq.Scalar(norm, 0), 0)
    else:
        share = _norm_share(x, order, norm, _dims(dims, x.dim()))
    return _as(N.mul.Tensor(grad, share), x), None, None, None, None
