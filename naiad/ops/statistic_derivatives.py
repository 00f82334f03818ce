"""Autograd formulas of the products, the mean-and-spread pairs and the vector norms (prod,
cumprod, var_mean, std_mean, linalg_vector_norm), made of the custom ops and registered with the
others (derivatives.py). Each is ATen's derivative, written so that zeros need no branch on the
data (a compiled graph cannot take one):

- prod: each element's gradient is the product of the others, from the exclusive cumulative
  products from both ends (exact with zeros: one zero passes the gradient to itself alone, two
  pass none, as ATen's zero-safe path does);
- cumprod: element k's gradient is sum over j >= k of grad_j * (the product up to j but x_k):
  a reversed running sum divided by x_k before a row's first zero, the products around it at
  that zero (ATen's zero-safe backward, O(n) a row);
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
    """ATen's zero-safe backward, O(n) a row. With z a row's first zero and P the products:
    before z, element k's gradient is sum over j >= k of grad_j P_j, divided by x_k (P_j is 0
    from z on, so the reversed running sum of the whole row is that sum); at z, the product
    before z times sum over j >= z of grad_j times the product of x_{z+1..j} (a running
    product with x up to z set to 1); after z, none. Each is computed for every element and
    the masks pick: no branch on the data."""
    x, dim, _ = inputs
    if not x.dim() or not x.numel():
        return _as(grads[0], x), None, None
    rows, g = x.movedim(dim, -1), _as(grads[0], x).movedim(dim, -1)
    products = _as(outputs[0], x).movedim(dim, -1)
    zero = N.eq.Scalar(rows, 0)
    seen = N.cumsum(zero, -1)  # the zeros up to each element
    before, first = N.eq.Scalar(seen, 0), N.logical_and(zero, N.eq.Scalar(seen, 1))
    tail = N.flip(N.cumsum(N.flip(N.mul.Tensor(g, products), [-1]), -1), [-1])
    dx_before = N.div.Tensor(tail, N.masked_fill.Scalar(rows, N.logical_not(before), 1))
    spans = N.cumprod(N.masked_fill.Scalar(rows, N.logical_or(before, first), 1), -1)
    from_z = N.masked_fill.Scalar(N.mul.Tensor(g, spans), before, 0)
    dx_first = N.mul.Tensor(_shifted_in(products), N.sum.dim_IntList(from_z, [-1], True))
    dx_rest = N.masked_fill.Scalar(dx_first, N.logical_not(first), 0)
    return N.where.self(before, dx_before, dx_rest).movedim(-1, dim), None, None


def _shifted_in(products):
    """The products before each element of the last dim (a 1 shifted in): the exclusive ones."""
    ones = N.fill.Scalar(products.narrow(-1, 0, 1), 1)
    return N.cat([ones, products.narrow(-1, 0, products.shape[-1] - 1)], -1)


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
