"""Autograd formulas of the `torch.ops.naiad` custom ops (mirrors.py), made of those ops.

Each formula is ATen's derivative of the overload the op mirrors, written with the mirrored
ops themselves, so a backward runs Naiad's kernels eagerly and appears as `torch.ops.naiad`
nodes in a compiled backward graph: relu's is `threshold_backward`, silu's `silu_backward`,
softmax's `_softmax_backward_data`, layer_norm's `native_layer_norm_backward`, mm's two
products. A
formula takes (grad of each output, inputs, outputs) and returns one gradient per input (None
for numbers and for inputs without one); `register_autograd` saves what it reads. Broadcast
operands get the gradient summed back to their shape.

Ops without a formula here or in arith_, row_, statistic_ or index_derivatives.py (the integer,
comparison and bitwise ops, a scalar's remainder by a tensor) are not differentiable through
their custom op: a backward through one raises torch's error.
"""

from __future__ import annotations

import math

import torch

from .mirrors import mirrored
from .second_derivatives import computed_once, reaches

__all__ = ["FORMULAS", "UNDIFFERENTIATED", "register", "register_formula"]

N = torch.ops.naiad
FORMULAS: dict = {}


def _formula(*overloads):
    def decorate(fn):
        for name in overloads:
            FORMULAS[name] = fn
        return fn

    return decorate


def _reduce_to(grad, like):
    """`grad` summed over the dims `like` (a tensor) was broadcast along."""
    if like is None or not isinstance(like, torch.Tensor) or grad.shape == like.shape:
        return grad
    lead = grad.dim() - like.dim()
    dims = [*range(lead)]
    dims += [lead + i for i, n in enumerate(like.shape) if n == 1 and grad.shape[lead + i] != 1]
    return N.sum.dim_IntList(grad, dims, True).reshape(like.shape) if dims else grad


def _unary(scale):
    """A formula grad * scale(x, y) for an op of one tensor."""

    def formula(grads, inputs, outputs):
        return (N.mul.Tensor(grads[0], scale(inputs[0], outputs[0])), *[None] * (len(inputs) - 1))

    return formula


_UNARY = {
    "exp.default": lambda x, y: y,
    "exp2.default": lambda x, y: N.mul.Scalar(y, math.log(2.0)),
    "expm1.default": lambda x, y: N.add.Scalar(y, 1.0),
    "log.default": lambda x, y: N.reciprocal(x),
    "log2.default": lambda x, y: N.reciprocal(N.mul.Scalar(x, math.log(2.0))),
    "log10.default": lambda x, y: N.reciprocal(N.mul.Scalar(x, math.log(10.0))),
    "log1p.default": lambda x, y: N.reciprocal(N.add.Scalar(x, 1.0)),
    "sqrt.default": lambda x, y: N.reciprocal(N.mul.Scalar(y, 2.0)),
    "rsqrt.default": lambda x, y: N.mul.Scalar(N.pow.Tensor_Scalar(y, 3), -0.5),
    "sin.default": lambda x, y: N.cos(x),
    "cos.default": lambda x, y: N.neg(N.sin(x)),
    "tan.default": lambda x, y: N.add.Scalar(N.mul.Tensor(y, y), 1.0),
    "atan.default": lambda x, y: N.reciprocal(N.add.Scalar(N.mul.Tensor(x, x), 1.0)),
    "erf.default": lambda x, y: N.mul.Scalar(
        N.exp(N.neg(N.mul.Tensor(x, x))), 2 / math.sqrt(math.pi)
    ),
    "reciprocal.default": lambda x, y: N.neg(N.mul.Tensor(y, y)),
    "abs.default": lambda x, y: N.sign(x),
}


for _name, _scale in _UNARY.items():
    _formula(_name)(_unary(_scale))


@_formula("neg.default")
def _neg(grads, inputs, outputs):
    return (N.neg(grads[0]),)


@_formula("relu.default")
def _relu(grads, inputs, outputs):
    return (N.threshold_backward(grads[0], outputs[0], 0),)


@_formula("silu.default")
def _silu(grads, inputs, outputs):
    return (N.silu_backward(grads[0], inputs[0]),)


@_formula("sigmoid.default")
def _sigmoid(grads, inputs, outputs):
    return (N.sigmoid_backward(grads[0], outputs[0]),)


@_formula("tanh.default")
def _tanh(grads, inputs, outputs):
    return (N.tanh_backward(grads[0], outputs[0]),)


@_formula("gelu.default")
def _gelu(grads, inputs, outputs):
    return N.gelu_backward(grads[0], inputs[0], approximate=inputs[1]), None


@_formula("elu.default")
def _elu(grads, inputs, outputs):
    x, alpha, scale, input_scale = inputs
    return N.elu_backward(grads[0], alpha, scale, input_scale, False, x), None, None, None


@_formula("leaky_relu.default")
def _leaky_relu(grads, inputs, outputs):
    return N.leaky_relu_backward(grads[0], inputs[0], inputs[1], False), None


@_formula("hardswish.default")
def _hardswish(grads, inputs, outputs):
    return (N.hardswish_backward(grads[0], inputs[0]),)


@_formula("add.Tensor", "add.Scalar", "sub.Scalar")
def _add(grads, inputs, outputs):
    (g,), (x, other, alpha) = grads, inputs
    if not isinstance(other, torch.Tensor):
        return g, None, None
    go = g if alpha == 1 else N.mul.Scalar(g, alpha)
    return _reduce_to(g, x), _reduce_to(go, other), None


@_formula("sub.Tensor")
def _sub(grads, inputs, outputs):
    dx, do, _ = _add(grads, inputs, outputs)
    return dx, None if do is None else N.neg(do), None


@_formula("mul.Tensor", "mul.Scalar")
def _mul(grads, inputs, outputs):
    (g,), (x, other) = grads, inputs
    if not isinstance(other, torch.Tensor):
        return N.mul.Scalar(g, other), None
    return _reduce_to(N.mul.Tensor(g, other), x), _reduce_to(N.mul.Tensor(g, x), other)


@_formula("div.Tensor", "div.Scalar")
def _div(grads, inputs, outputs):
    (g,), (x, other) = grads, inputs
    if not isinstance(other, torch.Tensor):
        return N.div.Scalar(g, other), None
    dx = N.div.Tensor(g, other)
    do = N.neg(N.div.Tensor(N.mul.Tensor(dx, x), other))
    return _reduce_to(dx, x), _reduce_to(do, other)


@_formula("pow.Tensor_Scalar")
def _pow(grads, inputs, outputs):
    (g,), (x, e) = grads, inputs
    return N.mul.Tensor(g, N.mul.Scalar(N.pow.Tensor_Scalar(x, e - 1), e)), None


@_formula("where.self")
def _where(grads, inputs, outputs):
    (g,), (condition, x, other) = grads, inputs
    dx = N.masked_fill.Scalar(g, N.logical_not(condition), 0)
    return None, _reduce_to(dx, x), _reduce_to(N.masked_fill.Scalar(g, condition, 0), other)


@_formula("_to_copy.default")
def _to_copy(grads, inputs, outputs):
    return (N._to_copy(grads[0], dtype=inputs[0].dtype),)


@_formula("clamp.default")
def _clamp(grads, inputs, outputs):
    (g,), (x, low, high) = grads, inputs
    if low is not None:
        g = N.masked_fill.Scalar(g, N.lt.Scalar(x, low), 0)
    if high is not None:
        g = N.masked_fill.Scalar(g, N.gt.Scalar(x, high), 0)
    return g, None, None


@_formula(*[f"{op}.default" for op in ("floor", "ceil", "round", "trunc", "sign")])
def _flat(grads, inputs, outputs):
    return (N.fill.Scalar(grads[0], 0),)


def _refusing(overload: str, advice: str):
    """A formula for an op torch does not differentiate either (or only under another name):
    its backward raises, where torch's fallback would leave its inputs without a gradient."""
    op = overload.split(".")[0]

    def formula(grads, inputs, outputs):
        raise RuntimeError(f"naiad.ops: the derivative of {op} is not implemented{advice}")

    return formula


# Ops torch itself does not differentiate (their `out=` calls record nothing, as torch's).
UNDIFFERENTIATED = ("floor_divide.default", "floor_divide.Scalar", "remainder.Scalar_Tensor")
for _overload in UNDIFFERENTIATED:
    FORMULAS[_overload] = _refusing(_overload, " (nor is it in torch)")
for _overload in (  # (the CPU flash overload's keyword-only mask takes no formula)
    "_scaled_dot_product_flash_attention.default",
    "_scaled_dot_product_efficient_attention.default",
    "_scaled_dot_product_cudnn_attention.default",
):
    FORMULAS[_overload] = _refusing(
        _overload, " through this custom op: call naiad.ops.scaled_dot_product_attention"
    )


@_formula("div.Tensor_mode", "div.Scalar_mode")
def _rounded_div(grads, inputs, outputs):
    """A rounded quotient is flat where it is differentiable: zeros, as ATen gives."""
    other = inputs[1]
    zeros = N.fill.Scalar(grads[0], 0)
    return zeros, _reduce_to(zeros, other) if isinstance(other, torch.Tensor) else None, None


@_formula("clamp.Tensor")
def _clamp_tensors(grads, inputs, outputs):
    """ATen's: the gradient goes to x inside its bounds, else to the bound the result is; where
    the bounds cross (max < min) the result is max."""
    (g,), (x, low, high) = grads, inputs
    below = None if low is None else N.lt.Tensor(x, low)
    above = None if high is None else N.gt.Tensor(x, high)
    outside = below if above is None else above if below is None else N.logical_or(below, above)
    if below is not None and above is not None:
        crossed = N.lt.Tensor(high, low)
        below, above = N.logical_and(below, N.logical_not(crossed)), N.logical_or(above, crossed)
    dlow = None if below is None else N.masked_fill.Scalar(g, N.logical_not(below), 0)
    dhigh = None if above is None else N.masked_fill.Scalar(g, N.logical_not(above), 0)
    dx = N.masked_fill.Scalar(g, outside, 0)
    return _reduce_to(dx, x), _reduce_to(dlow, low), _reduce_to(dhigh, high)


@_formula("maximum.default", "minimum.default")
def _extreme_of_two(grads, inputs, outputs):
    """ATen's: the gradient goes to the larger (smaller) operand, half to each on ties."""
    (g,), (x, other) = grads, inputs
    larger = N.eq.Tensor(outputs[0], x)  # x is the result (the larger one for maximum)
    half = N.where.self(N.eq.Tensor(x, other), N.div.Scalar(g, 2), g)
    dx = N.masked_fill.Scalar(half, N.logical_not(larger), 0)
    do = N.masked_fill.Scalar(half, N.logical_and(larger, N.ne.Tensor(x, other)), 0)
    return _reduce_to(dx, x), _reduce_to(do, other)


@_formula("clamp_min.default")
def _clamp_min(grads, inputs, outputs):
    return N.masked_fill.Scalar(grads[0], N.lt.Scalar(inputs[0], inputs[1]), 0), None


@_formula("clamp_max.default")
def _clamp_max(grads, inputs, outputs):
    return N.masked_fill.Scalar(grads[0], N.gt.Scalar(inputs[0], inputs[1]), 0), None


@_formula("masked_fill.Scalar", "masked_fill.Tensor")
def _masked_fill(grads, inputs, outputs):
    """The filled places take no gradient; a value tensor (0-dim) takes their sum."""
    (g,), (_, mask, value) = grads, inputs
    dvalue = None
    if isinstance(value, torch.Tensor):
        dvalue = N.sum.default(N.masked_fill.Scalar(g, N.logical_not(mask), 0))
    return N.masked_fill.Scalar(g, mask, 0), None, dvalue


@_formula("fill.Scalar", "fill.Tensor")
def _fill(grads, inputs, outputs):
    """The input is replaced: no gradient; a value tensor (0-dim) takes the gradient's sum."""
    (g,), value = grads, inputs[1]
    dvalue = N.sum.default(g) if isinstance(value, torch.Tensor) else None
    return N.fill.Scalar(g, 0), dvalue


@_formula("lerp.Scalar", "lerp.Tensor")
def _lerp(grads, inputs, outputs):
    (g,), (x, end, weight) = grads, inputs
    if not isinstance(weight, torch.Tensor):
        dx, dend = N.mul.Scalar(g, 1 - weight), N.mul.Scalar(g, weight)
        return _reduce_to(dx, x), _reduce_to(dend, end), None
    dx = N.mul.Tensor(g, N.add.Scalar(N.neg(weight), 1.0))
    dweight = N.mul.Tensor(g, N.sub.Tensor(end, x))
    return _reduce_to(dx, x), _reduce_to(N.mul.Tensor(g, weight), end), _reduce_to(dweight, weight)


@_formula("addcmul.default")
def _addcmul(grads, inputs, outputs):
    (g,), (x, t1, t2, value) = grads, inputs
    scaled = N.mul.Scalar(g, value)
    d1, d2 = N.mul.Tensor(scaled, t2), N.mul.Tensor(scaled, t1)
    return _reduce_to(g, x), _reduce_to(d1, t1), _reduce_to(d2, t2), None


@_formula("addcdiv.default")
def _addcdiv(grads, inputs, outputs):
    (g,), (x, t1, t2, value) = grads, inputs
    d1 = N.div.Tensor(N.mul.Scalar(g, value), t2)
    d2 = N.neg(N.div.Tensor(N.mul.Tensor(d1, t1), t2))
    return _reduce_to(g, x), _reduce_to(d1, t1), _reduce_to(d2, t2), None


@_formula("softplus.default")
def _softplus(grads, inputs, outputs):
    (g,), (x, beta, threshold) = grads, inputs
    scaled = N.mul.Scalar(x, beta)
    soft = N.mul.Tensor(g, N.sigmoid(scaled))
    return N.where.self(N.gt.Scalar(scaled, threshold), g, soft), None, None


@_formula("hardsigmoid.default")
def _hardsigmoid(grads, inputs, outputs):
    x = inputs[0]
    inside = N.logical_and(N.gt.Scalar(x, -3.0), N.lt.Scalar(x, 3.0))
    return (N.masked_fill.Scalar(N.div.Scalar(grads[0], 6.0), N.logical_not(inside), 0),)


def _saved(ctx, inputs, output, keyword_only_inputs=None):
    """Save what a formula reads: every tensor among the inputs (positional, then keyword-only,
    in the schema's order) and outputs, by position."""
    outputs = output if isinstance(output, tuple) else (output,)
    keywords = tuple((keyword_only_inputs or {}).values())
    inputs = [_shapes(v) if isinstance(v, (list, tuple)) else v for v in inputs]
    values = (*inputs, *keywords, *outputs)
    positions = [i for i, v in enumerate(values) if isinstance(v, torch.Tensor)]
    ctx.save_for_backward(*[values[i] for i in positions])
    ctx.positions = positions
    ctx.others = [None if isinstance(v, torch.Tensor) else v for v in values]
    ctx.count = len(inputs) + len(keywords)


def _shapes(values):
    """A list of tensors kept as their shapes: cat's formula needs no more of its inputs."""
    return [v.shape if isinstance(v, torch.Tensor) else v for v in values]


def _backward(formula, name: str):
    """The backward of `formula`: gradients of the positional inputs the call passed (autograd
    takes the keyword-only ones as the op's options, and the dispatcher drops trailing ones
    equal to their defaults: `needs_input_grad` has one entry per input passed). A formula
    that calls a backward op without a derivative gives, in a `create_graph` backward,
    gradients that raise if differentiated (second_derivatives.py)."""
    once = reaches(formula, _underived)
    op = name.removeprefix("naiad::")  # as users call it: ops.tanh, ops.attention

    def backward(ctx, *grads):
        values = list(ctx.others)
        for i, tensor in zip(ctx.positions, ctx.saved_tensors, strict=True):
            values[i] = tensor
        passed = len(ctx.needs_input_grad)

        def compute():
            return tuple(formula(grads, values[: ctx.count], values[ctx.count :]))[:passed]

        if once:
            return computed_once(op, compute, (*grads, *ctx.saved_tensors))
        return compute()

    return backward


def _underived(name: str) -> bool:
    """Whether `name` is a backward op of `torch.ops.naiad` (none has a derivative)."""
    return "backward" in name and hasattr(N, name)


def register_formula(name: str, formula) -> None:
    """Register `formula` (grads, inputs, outputs -> one gradient per input) as the autograd
    of the custom op `name` ("naiad::relu")."""
    torch.library.register_autograd(name, _backward(formula, name), setup_context=_saved)


def register() -> frozenset:
    """Register every formula whose overload has a custom op; return those overloads."""
    done = []
    for overload, formula in FORMULAS.items():
        if overload in mirrored():
            register_formula(f"naiad::{overload.removesuffix('.default')}", formula)
            done.append(overload)
    return frozenset(done)
