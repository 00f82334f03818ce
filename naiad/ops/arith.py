"""Binary arithmetic: add, sub, mul, div (true, trunc, floor), remainder, fmod, pow, maximum,
minimum, with tensors or scalars on either side, out= and in place.

Each op is one scalar function under `@pointwise`; the functions below it give torch's
signatures (alpha, rounding_mode) and pick the scalar function, never a kernel of their own.
"""

from __future__ import annotations

import torch

from .. import language as tl
from ..language.extra import libdevice
from ..runtime.jit import jit
from .dtypes import Kind, Unsupported
from .pointwise import inplace_target as _inplace
from .pointwise import pointwise
from .registry import aten

__all__ = [
    "add",
    "add_",
    "div",
    "div_",
    "floor_divide",
    "floor_divide_",
    "fmod",
    "fmod_",
    "maximum",
    "minimum",
    "mul",
    "mul_",
    "pow",
    "pow_",
    "remainder",
    "remainder_",
    "sub",
    "sub_",
]


@pointwise()
@jit
def _add(x, y):
    return x + y


@pointwise()
@jit
def _add_scaled(x, y, alpha):
    return x + y * alpha


@pointwise()
@jit
def _or(x, y):
    return x | y


@pointwise()
@jit
def _mul(x, y):
    return x * y


@pointwise()
@jit
def _and(x, y):
    return x & y


@pointwise(Kind.INT_TO_FLOAT)
@jit
def _true_div(x, y):
    return x / y


@pointwise()
@jit
def _trunc_div(x, y):
    if x.dtype.is_floating():
        return libdevice.trunc(x / y)
    return x // y


@pointwise()
@jit
def _floor_div(x, y):
    """Floats as torch rounds them: the quotient of x less its remainder, so that 1 // 0.1 is 9
    (floor(1 / 0.1) is 10: the rounded quotient is 10 exactly) and inf // 1 is nan, as Python's
    own floor division gives."""
    if x.dtype.is_floating():
        mod = libdevice.fmod(x, y)
        div = (x - mod) / y
        div = tl.where((mod != 0) & ((y < 0) != (mod < 0)), div - 1, div)
        floored = libdevice.floor(div)
        floored = tl.where(div - floored > 0.5, floored + 1, floored)
        floored = tl.where(div != 0, floored, libdevice.copysign(tl.zeros_like(div), x / y))
        return tl.where(y != 0, floored, x / y)
    q = x // y
    return tl.where((x % y != 0) & ((x < 0) != (y < 0)), q - 1, q)


@pointwise()
@jit
def _remainder(x, y):
    if x.dtype.is_floating():
        r = libdevice.fmod(x, y)
    else:
        r = x % y
    return tl.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)


@pointwise()
@jit
def _fmod(x, y):
    if x.dtype.is_floating():
        return libdevice.fmod(x, y)
    return x % y


@pointwise()
@jit
def _pow(x, y):
    return libdevice.pow(x, y)


@pointwise()
@jit
def _maximum(x, y):
    return tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)


@pointwise()
@jit
def _minimum(x, y):
    return tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)


def _is_floating(value) -> bool:
    if isinstance(value, torch.Tensor):
        return value.dtype.is_floating_point
    return isinstance(value, float)


def _is_bool(a, b) -> bool:
    """Whether both operands are bools or bool tensors (spelled out: every add and mul asks,
    and a loop over `*values` cost a call a quarter of a microsecond more)."""
    if isinstance(a, torch.Tensor):
        if a.dtype is not torch.bool:
            return False
    elif type(a) is not bool:
        return False
    if isinstance(b, torch.Tensor):
        return b.dtype is torch.bool
    return type(b) is bool


@aten("add.Tensor", "add.Scalar", "add.out", "add.Scalar_out")
def add(input, other, *, alpha=1, out=None):
    """input + alpha * other (logical or for booleans, as torch)."""
    if alpha != 1:
        return _add_scaled(input, other, alpha, out=out)
    return (_or if _is_bool(input, other) else _add)(input, other, out=out)


@aten("add_.Tensor", "add_.Scalar")
def add_(input, other, *, alpha=1):
    return add(input, other, alpha=alpha, out=_inplace(input, other))


@aten("sub.Tensor", "sub.Scalar", "sub.out", "sub.Scalar_out")
def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other."""
    if _is_bool(input, other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported")
    return _add_scaled(input, other, -alpha, out=out)


@aten("sub_.Tensor", "sub_.Scalar")
def sub_(input, other, *, alpha=1):
    return sub(input, other, alpha=alpha, out=_inplace(input, other))


@aten("mul.Tensor", "mul.Scalar", "mul.out", "mul.Scalar_out")
def mul(input, other, *, out=None):
    """input * other (logical and for booleans)."""
    return (_and if _is_bool(input, other) else _mul)(input, other, out=out)


@aten("mul_.Tensor", "mul_.Scalar")
def mul_(input, other):
    return mul(input, other, out=_inplace(input, other))


_DIVISIONS = {None: _true_div, "trunc": _trunc_div, "floor": _floor_div}


@aten(
    "div.Tensor", "div.Scalar", "div.Tensor_mode", "div.Scalar_mode",
    "div.out", "div.out_mode", "div.Scalar_out", "div.Scalar_mode_out",
)  # fmt: skip
def div(input, other, *, rounding_mode=None, out=None):
    """input / other, rounded as `rounding_mode` says (None, 'trunc', 'floor')."""
    return _DIVISIONS[rounding_mode](input, other, out=out)


@aten("div_.Tensor", "div_.Tensor_mode", "div_.Scalar", "div_.Scalar_mode")
def div_(input, other, *, rounding_mode=None):
    return div(input, other, rounding_mode=rounding_mode, out=_inplace(input, other))


@aten("floor_divide.default", "floor_divide.Scalar", "floor_divide.out", "floor_divide.Scalar_out")
def floor_divide(input, other, *, out=None):
    return _floor_div(input, other, out=out)


@aten("floor_divide_.Tensor", "floor_divide_.Scalar")
def floor_divide_(input, other):
    return floor_divide(input, other, out=_inplace(input, other))


@aten("remainder.Tensor", "remainder.Scalar", "remainder.Scalar_Tensor",
      "remainder.Tensor_out", "remainder.Scalar_out", "remainder.Scalar_Tensor_out")  # fmt: skip
def remainder(input, other, *, out=None):
    """The remainder with the divisor's sign (Python's %)."""
    return _remainder(input, other, out=out)


@aten("remainder_.Tensor", "remainder_.Scalar")
def remainder_(input, other):
    return remainder(input, other, out=_inplace(input, other))


@aten("fmod.Tensor", "fmod.Scalar", "fmod.Tensor_out", "fmod.Scalar_out")
def fmod(input, other, *, out=None):
    """The remainder with the dividend's sign (C's fmod)."""
    return _fmod(input, other, out=out)


@aten("fmod_.Tensor", "fmod_.Scalar")
def fmod_(input, other):
    return fmod(input, other, out=_inplace(input, other))


@aten("pow.Tensor_Tensor", "pow.Tensor_Scalar", "pow.Scalar", "pow.Tensor_Tensor_out",
      "pow.Tensor_Scalar_out", "pow.Scalar_out")  # fmt: skip
def pow(input, exponent, *, out=None):
    """input ** exponent on floating point (integer powers are left to torch)."""
    if not (_is_floating(input) or _is_floating(exponent)):
        raise Unsupported("integer powers")
    return _pow(input, exponent, out=out)


@aten("pow_.Tensor", "pow_.Scalar")
def pow_(input, exponent):
    return pow(input, exponent, out=_inplace(input, exponent))


@aten("maximum.default", "maximum.out")
def maximum(input, other, *, out=None):
    """The larger of each pair; NaN where either is NaN."""
    return _maximum(input, other, out=out)


@aten("minimum.default", "minimum.out")
def minimum(input, other, *, out=None):
    """The smaller of each pair; NaN where either is NaN."""
    return _minimum(input, other, out=out)
