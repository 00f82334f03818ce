"""Autograd formulas of the arithmetic custom ops whose operands both may need a gradient (pow
of a tensor exponent, clamp_min/clamp_max with a tensor bound, fmod/remainder), made of the
custom ops and registered with the others (derivatives.py). Each is ATen's derivative: pow's
exponent gets grad * result * log(base), zero where the base is 0 and the exponent >= 0 (where
torch takes 0^x's slope as 0); a tensor bound gets the gradient where it is the result; fmod's
and remainder's divisor gets -grad times the rounded quotient (truncated for fmod, floored for
remainder). A scalar's remainder by a tensor (remainder.Scalar_Tensor) is not differentiable
in ATen either.
"""

from __future__ import annotations

import math

import torch

from .derivatives import _formula, _reduce_to

__all__ = []

N = torch.ops.naiad


def _exponent_grad(g, base, exponent, result):
    """ATen's pow_backward_exponent: grad * result * log(base), 0 where base == 0 <= exponent."""
    if not isinstance(base, torch.Tensor):
        grad = N.mul.Tensor(g, N.mul.Scalar(result, math.log(base) if base else -math.inf))
        return N.masked_fill.Scalar(grad, N.ge.Scalar(exponent, 0), 0) if base == 0 else grad
    slope = N.mul.Tensor(result, N.log(base))
    flat = N.logical_and(N.eq.Scalar(base, 0), N.ge.Scalar(exponent, 0))
    return N.masked_fill.Scalar(N.mul.Tensor(g, slope), flat, 0)


@_formula("pow.Scalar")
def _pow_of_scalar(grads, inputs, outputs):
    (g,), (base, exponent) = grads, inputs
    return None, _exponent_grad(g, base, exponent, outputs[0])


@_formula("pow.Tensor_Tensor")
def _pow_of_tensors(grads, inputs, outputs):
    """The base's gradient is grad * e * x^(e-1), 0 where the exponent is 0 (ATen's)."""
    (g,), (x, exponent) = grads, inputs
    slope = N.mul.Tensor(exponent, N.pow.Tensor_Tensor(x, N.sub.Scalar(exponent, 1.0)))
    dx = N.masked_fill.Scalar(N.mul.Tensor(g, slope), N.eq.Scalar(exponent, 0), 0)
    dexponent = _exponent_grad(g, x, exponent, outputs[0])
    return _reduce_to(dx, x), _reduce_to(dexponent, exponent)


def _bounded(grads, inputs, outside):
    """x keeps the gradient where it is the result, the bound where x is `outside` it."""
    (g,), (x, bound) = grads, inputs
    out = outside(x, bound)
    dx = N.masked_fill.Scalar(g, out, 0)
    dbound = N.masked_fill.Scalar(g, N.logical_not(out), 0)
    return _reduce_to(dx, x), _reduce_to(dbound, bound)


@_formula("clamp_min.Tensor")
def _clamp_min_tensor(grads, inputs, outputs):
    return _bounded(grads, inputs, N.lt.Tensor)


@_formula("clamp_max.Tensor")
def _clamp_max_tensor(grads, inputs, outputs):
    return _bounded(grads, inputs, N.gt.Tensor)


def _rounded_remainder(rounding_mode):
    """x - other * round(x / other): x's gradient is grad, other's -grad * round(x / other)."""

    def formula(grads, inputs, outputs):
        (g,), (x, other) = grads, inputs
        if not isinstance(other, torch.Tensor):
            return g, None
        quotient = N.div.Tensor_mode(x, other, rounding_mode=rounding_mode)
        return _reduce_to(g, x), _reduce_to(N.neg(N.mul.Tensor(g, quotient)), other)

    return formula


_formula("fmod.Tensor", "fmod.Scalar")(_rounded_remainder("trunc"))
_formula("remainder.Tensor", "remainder.Scalar")(_rounded_remainder("floor"))
