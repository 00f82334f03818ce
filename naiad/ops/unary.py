"""Unary math: exp, log, sqrt, rsqrt, trigonometry, erf, abs, neg, reciprocal, sigmoid,
rounding, sign; each a scalar function under `@pointwise`, with torch's promotion (integers
become floats for the transcendental ones).

Transcendental functions take fp32 and fp64 only; the facility computes fp16 and bf16 in fp32
and rounds the result once, as ATen's kernels do.
"""

from __future__ import annotations

from .. import language as tl
from ..language.extra import libdevice
from ..runtime.jit import jit
from .dtypes import Kind
from .pointwise import pointwise
from .unary_family import unary

__all__ = [
    "abs",
    "abs_",
    "atan",
    "atan_",
    "ceil",
    "ceil_",
    "cos",
    "cos_",
    "erf",
    "erf_",
    "exp",
    "exp2",
    "exp2_",
    "exp_",
    "expm1",
    "expm1_",
    "floor",
    "floor_",
    "log",
    "log1p",
    "log1p_",
    "log2",
    "log2_",
    "log10",
    "log10_",
    "log_",
    "neg",
    "neg_",
    "reciprocal",
    "reciprocal_",
    "round",
    "round_",
    "rsqrt",
    "rsqrt_",
    "sigmoid",
    "sigmoid_",
    "sign",
    "sign_",
    "sin",
    "sin_",
    "sqrt",
    "sqrt_",
    "tan",
    "tan_",
    "tanh",
    "tanh_",
    "trunc",
    "trunc_",
]

_FLOAT = Kind.INT_TO_FLOAT


@pointwise(_FLOAT)
@jit
def _exp(x):
    return tl.exp(x)


@pointwise(_FLOAT)
@jit
def _exp2(x):
    return tl.exp2(x)


@pointwise(_FLOAT)
@jit
def _expm1(x):
    return libdevice.expm1(x)


@pointwise(_FLOAT)
@jit
def _log(x):
    return tl.log(x)


@pointwise(_FLOAT)
@jit
def _log2(x):
    return tl.log2(x)


@pointwise(_FLOAT)
@jit
def _log10(x):
    return libdevice.log10(x)


@pointwise(_FLOAT)
@jit
def _log1p(x):
    return libdevice.log1p(x)


@pointwise(_FLOAT)
@jit
def _sqrt(x):
    return tl.sqrt_rn(x) if x.dtype == tl.float32 else tl.sqrt(x)


@pointwise(_FLOAT)
@jit
def _rsqrt(x):
    return 1.0 / tl.sqrt_rn(x) if x.dtype == tl.float32 else 1.0 / tl.sqrt(x)


@pointwise(_FLOAT)
@jit
def _sin(x):
    return tl.sin(x)


@pointwise(_FLOAT)
@jit
def _cos(x):
    return tl.cos(x)


@pointwise(_FLOAT)
@jit
def _tan(x):
    return libdevice.tan(x)


@pointwise(_FLOAT)
@jit
def _tanh(x):
    return libdevice.tanh(x)


@pointwise(_FLOAT)
@jit
def _atan(x):
    return libdevice.atan(x)


@pointwise(_FLOAT)
@jit
def _erf(x):
    return tl.erf(x)


@pointwise(_FLOAT)
@jit
def _sigmoid(x):
    return 1.0 / (1.0 + tl.exp(-x))


@pointwise(_FLOAT)
@jit
def _reciprocal(x):
    return 1.0 / x


@pointwise(Kind.COMPLEX_TO_FLOAT)
@jit
def _abs(x):
    return tl.abs(x)


@pointwise()
@jit
def _neg(x):
    return -x


@pointwise()
@jit
def _floor(x):
    if x.dtype.is_floating():
        return tl.floor(x)
    return x


@pointwise()
@jit
def _ceil(x):
    if x.dtype.is_floating():
        return tl.ceil(x)
    return x


@pointwise()
@jit
def _trunc(x):
    if x.dtype.is_floating():
        return libdevice.trunc(x)
    return x


@pointwise()
@jit
def _round(x):
    if x.dtype.is_floating():
        return libdevice.rint(x)  # half to even, as torch.round
    return x


@pointwise()
@jit
def _sign(x):
    return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)


exp, exp_ = unary("exp", _exp, "e ** input.")
exp2, exp2_ = unary("exp2", _exp2, "2 ** input.")
expm1, expm1_ = unary("expm1", _expm1, "e ** input - 1, exact near 0.")
log, log_ = unary("log", _log, "The natural logarithm.")
log2, log2_ = unary("log2", _log2, "The base-2 logarithm.")
log10, log10_ = unary("log10", _log10, "The base-10 logarithm.")
log1p, log1p_ = unary("log1p", _log1p, "log(1 + input), exact near 0.")
sqrt, sqrt_ = unary("sqrt", _sqrt, "The square root.")
rsqrt, rsqrt_ = unary("rsqrt", _rsqrt, "1 / sqrt(input).")
sin, sin_ = unary("sin", _sin, "The sine.")
cos, cos_ = unary("cos", _cos, "The cosine.")
tan, tan_ = unary("tan", _tan, "The tangent.")
tanh, tanh_ = unary("tanh", _tanh, "The hyperbolic tangent.")
atan, atan_ = unary("atan", _atan, "The arctangent.")
erf, erf_ = unary("erf", _erf, "The error function.")
sigmoid, sigmoid_ = unary("sigmoid", _sigmoid, "1 / (1 + e ** -input).")
reciprocal, reciprocal_ = unary("reciprocal", _reciprocal, "1 / input.")
abs, abs_ = unary("abs", _abs, "The absolute value.")
neg, neg_ = unary("neg", _neg, "-input.")
floor, floor_ = unary("floor", _floor, "Round down.")
ceil, ceil_ = unary("ceil", _ceil, "Round up.")
trunc, trunc_ = unary("trunc", _trunc, "Round toward zero.")
round, round_ = unary("round", _round, "Round half to even.")
sign, sign_ = unary("sign", _sign, "-1, 0 or 1 as input's sign.")
