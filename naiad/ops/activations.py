"""Activations and their ATen backward ops: relu, gelu (exact and tanh), silu, elu, leaky_relu,
hardswish, hardsigmoid, softplus; threshold_backward (relu's), gelu_backward, silu_backward,
sigmoid_backward, tanh_backward, elu_backward, leaky_relu_backward, hardswish_backward.
Registering the backward ops lets torch's autograd run its own formulas on Naiad kernels
(silu_backward is CompositeImplicitAutograd too, but has CPU and CUDA kernels and an autograd
formula of its own, so a kernel registered for it hides nothing).
"""

from __future__ import annotations

from .. import language as tl
from ..language.extra import libdevice
from ..runtime.jit import jit
from .pointwise import pointwise
from .registry import aten
from .unary_family import unary

__all__ = [
    "elu",
    "elu_",
    "gelu",
    "gelu_",
    "hardsigmoid",
    "hardsigmoid_",
    "hardswish",
    "hardswish_",
    "leaky_relu",
    "leaky_relu_",
    "relu",
    "relu_",
    "silu",
    "silu_",
    "softplus",
]

_SQRT1_2 = 0.7071067811865476
_SQRT2_PI = 0.7978845608028654  # sqrt(2 / pi)
_INV_SQRT_2PI = 0.3989422804014327  # 1 / sqrt(2 * pi)


@pointwise()
@jit
def _relu(x):
    """torch's: NaN and -0.0 pass through (a select on x > 0 made NaN 0)."""
    return tl.where(x < 0, 0, x)


@pointwise()
@jit
def _gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * _SQRT1_2))


@pointwise()
@jit
def _gelu_tanh(x):
    return 0.5 * x * (1.0 + libdevice.tanh(_SQRT2_PI * (x + 0.044715 * x * x * x)))


@pointwise()
@jit
def _silu(x):
    return x / (1.0 + tl.exp(-x))


@pointwise()
@jit
def _elu(x, alpha, scale, input_scale):
    return tl.where(x > 0, x * scale, (libdevice.expm1(x * input_scale) * alpha) * scale)


@pointwise()
@jit
def _leaky_relu(x, slope):
    return tl.where(x > 0, x, x * slope)


@jit
def _relu6(x):
    """min(max(x, 0), 6) with NaN kept, as torch's clamps keep it."""
    nan = tl.PropagateNan.ALL
    return tl.minimum(tl.maximum(x, 0.0, propagate_nan=nan), 6.0, propagate_nan=nan)


@pointwise()
@jit
def _hardswish(x):
    return x * _relu6(x + 3.0) / 6.0


@pointwise()
@jit
def _hardsigmoid(x):
    return _relu6(x + 3.0) / 6.0


@pointwise()
@jit
def _softplus(x, beta, threshold):
    return tl.where(x * beta > threshold, x, libdevice.log1p(tl.exp(x * beta)) / beta)


relu, relu_ = unary("relu", _relu, "max(input, 0).")
silu, silu_ = unary("silu", _silu, "input * sigmoid(input).")
hardswish, hardswish_ = unary("hardswish", _hardswish, "input * relu6(input + 3) / 6.")
hardsigmoid, hardsigmoid_ = unary("hardsigmoid", _hardsigmoid, "relu6(input + 3) / 6.")


@aten("gelu.default", "gelu.out")
def gelu(input, *, approximate="none", out=None):
    """input * Φ(input), or its tanh approximation (approximate='tanh')."""
    return (_gelu_tanh if approximate == "tanh" else _gelu)(input, out=out)


@aten("gelu_.default")
def gelu_(input, *, approximate="none"):
    return gelu(input, approximate=approximate, out=input)


@aten("elu.default", "elu.out")
def elu(input, alpha=1.0, scale=1.0, input_scale=1.0, *, out=None):
    """scale * input where positive, else scale * alpha * (exp(input_scale * input) - 1)."""
    return _elu(input, alpha, scale, input_scale, out=out)


@aten("elu_.default")
def elu_(input, alpha=1.0, scale=1.0, input_scale=1.0):
    return elu(input, alpha, scale, input_scale, out=input)


@aten("leaky_relu.default", "leaky_relu.out")
def leaky_relu(input, negative_slope=0.01, *, out=None):
    """input where positive, else input * negative_slope."""
    return _leaky_relu(input, negative_slope, out=out)


@aten("leaky_relu_.default")
def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, out=input)


@aten("softplus.default", "softplus.out")
def softplus(input, beta=1.0, threshold=20.0, *, out=None):
    """log(1 + exp(beta * input)) / beta, linear above the threshold."""
    return _softplus(input, beta, threshold, out=out)


# -- backward ops ---------------------------------------------------------------------------------
@pointwise()
@jit
def _threshold_backward(grad, x, threshold):
    return tl.where(x <= threshold, 0.0, grad)


@pointwise()
@jit
def _gelu_backward(grad, x):
    cdf = 0.5 * (1.0 + tl.erf(x * _SQRT1_2))
    pdf = tl.exp(-0.5 * x * x) * _INV_SQRT_2PI
    return grad * (cdf + x * pdf)


@pointwise()
@jit
def _gelu_tanh_backward(grad, x):
    inner = _SQRT2_PI * (x + 0.044715 * x * x * x)
    t = libdevice.tanh(inner)
    d_inner = _SQRT2_PI * (1.0 + 3.0 * 0.044715 * x * x)
    return grad * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * d_inner)


@pointwise()
@jit
def _silu_backward(grad, x):
    s = 1.0 / (1.0 + tl.exp(-x))
    return grad * s * (1.0 + x * (1.0 - s))


@pointwise()
@jit
def _sigmoid_backward(grad, y):
    return grad * y * (1.0 - y)


@pointwise()
@jit
def _tanh_backward(grad, y):
    return grad * (1.0 - y * y)


@pointwise()
@jit
def _elu_backward_of_input(grad, alpha, scale, input_scale, x):
    negative = alpha * scale * input_scale * tl.exp(x * input_scale)
    return tl.where(x > 0, grad * scale, grad * negative)


@pointwise()
@jit
def _elu_backward_of_result(grad, alpha, scale, input_scale, y):
    return tl.where(y > 0, grad * scale, grad * (y + alpha * scale) * input_scale)


@pointwise()
@jit
def _leaky_relu_backward(grad, x, slope):
    return tl.where(x > 0, grad, grad * slope)


@pointwise()
@jit
def _hardswish_backward(grad, x):
    return tl.where(x < -3.0, 0.0, tl.where(x <= 3.0, grad * (x / 3.0 + 0.5), grad))


@aten("threshold_backward.default", "threshold_backward.grad_input")
def threshold_backward(grad_output, input, threshold, *, grad_input=None):
    return _threshold_backward(grad_output, input, threshold, out=grad_input)


@aten("gelu_backward.default", "gelu_backward.grad_input")
def gelu_backward(grad_output, input, *, approximate="none", grad_input=None):
    backward = _gelu_tanh_backward if approximate == "tanh" else _gelu_backward
    return backward(grad_output, input, out=grad_input)


@aten("silu_backward.default", "silu_backward.grad_input")
def silu_backward(grad_output, input, *, grad_input=None):
    return _silu_backward(grad_output, input, out=grad_input)


@aten("sigmoid_backward.default", "sigmoid_backward.grad_input")
def sigmoid_backward(grad_output, output, *, grad_input=None):
    return _sigmoid_backward(grad_output, output, out=grad_input)


@aten("tanh_backward.default", "tanh_backward.grad_input")
def tanh_backward(grad_output, output, *, grad_input=None):
    return _tanh_backward(grad_output, output, out=grad_input)


@aten("elu_backward.default", "elu_backward.grad_input")
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result, *,
                 grad_input=None):  # fmt: skip
    backward = _elu_backward_of_result if is_result else _elu_backward_of_input
    return backward(grad_output, alpha, scale, input_scale, self_or_result, out=grad_input)


@aten("leaky_relu_backward.default", "leaky_relu_backward.grad_input")
def leaky_relu_backward(grad_output, input, negative_slope, self_is_result, *, grad_input=None):
    return _leaky_relu_backward(grad_output, input, negative_slope, out=grad_input)


@aten("hardswish_backward.default", "hardswish_backward.out")
def hardswish_backward(grad_output, input, *, out=None):
    return _hardswish_backward(grad_output, input, out=out)
