"""Elementwise math (`tl.math`): transcendental functions, rounding, fma, extrema, where.

The transcendental functions take fp32 and fp64 only (cast fp16/bf16 first), as in Triton;
`sqrt_rn` and `div_rn` are correctly rounded, while `/` and `sqrt` may be approximate on the GPU.
"""

from __future__ import annotations

from .core import PropagateNan, _tensor_member, builtin, tensor
from .dtypes import float32


def _unary(name, doc):
    @builtin
    def fn(x, _semantic=None):
        return _semantic.unary_math(name, x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return _tensor_member(fn)


exp = _unary("exp", "e**x, elementwise.")
exp2 = _unary("exp2", "2**x, elementwise.")
log = _unary("log", "Natural logarithm, elementwise.")
log2 = _unary("log2", "Base-2 logarithm, elementwise.")
cos = _unary("cos", "Cosine, elementwise.")
sin = _unary("sin", "Sine, elementwise.")
sqrt = _unary("sqrt", "Square root (may be approximate on the GPU), elementwise.")
rsqrt = _unary("rsqrt", "1/sqrt(x), elementwise.")
erf = _unary("erf", "The error function, elementwise.")
floor = _unary("floor", "Largest integer not above x, elementwise.")
ceil = _unary("ceil", "Smallest integer not below x, elementwise.")


@_tensor_member
@builtin
def sqrt_rn(x, _semantic=None):
    """Correctly rounded square root (fp32)."""
    return _semantic.sqrt_rn(x)


@_tensor_member
@builtin
def abs(x, _semantic=None):
    """Absolute value; unsigned integers are returned unchanged."""
    return _semantic.abs(x)


@builtin
def fdiv(x, y, ieee_rounding=False, _semantic=None):
    """x / y for floating-point operands."""
    return _semantic.fdiv(x, y, ieee_rounding)


# As in Triton's `tl.math`: the functions below make Python scalars tensors of their literal type
# first (so they take part in promotion: `tl.minimum(x_fp16, 0.5)` is fp32), and the dtype checks
# of `umulhi` / `div_rn` look at the tensor arguments as given, before promotion.
def _check_dtypes(allowed, *args):
    for arg in args:
        if isinstance(arg, tensor) and arg.type.scalar.name not in allowed:
            raise ValueError(f"Expected dtype {list(allowed)} but got {arg.type.scalar.name}")


def _promote_bf16(x, semantic):
    """Triton computes minimum / maximum / clamp of bf16 in fp32 (and returns fp32)."""
    return semantic.cast(x, float32) if x.type.scalar.is_bf16() else x


@_tensor_member
@builtin
def div_rn(x, y, _semantic=None):
    """Correctly rounded fp32 division."""
    _check_dtypes(("fp32",), x, y)
    return _semantic.div_rn(_semantic.to_tensor(x), _semantic.to_tensor(y))


@builtin
def fma(x, y, z, _semantic=None):
    """x * y + z with a single rounding."""
    return _semantic.fma(*(_semantic.to_tensor(v) for v in (x, y, z)))


@builtin
def umulhi(x, y, _semantic=None):
    """The high half of the 2N-bit product of two N-bit integers."""
    _check_dtypes(("int32", "int64", "uint32", "uint64"), x, y)
    return _semantic.umulhi(_semantic.to_tensor(x), _semantic.to_tensor(y))


@builtin
def minimum(x, y, propagate_nan=PropagateNan.NONE, _semantic=None):
    """Elementwise minimum; with PropagateNan.ALL a NaN operand gives NaN, else the other one."""
    x, y = (_promote_bf16(_semantic.to_tensor(v), _semantic) for v in (x, y))
    return _semantic.minimum(x, y, propagate_nan)


@builtin
def maximum(x, y, propagate_nan=PropagateNan.NONE, _semantic=None):
    """Elementwise maximum; with PropagateNan.ALL a NaN operand gives NaN, else the other one."""
    x, y = (_promote_bf16(_semantic.to_tensor(v), _semantic) for v in (x, y))
    return _semantic.maximum(x, y, propagate_nan)


@builtin
def clamp(x, min, max, propagate_nan=PropagateNan.NONE, _semantic=None):
    """min(max(x, min), max) for floating-point values."""
    x, min, max = (_promote_bf16(_semantic.to_tensor(v), _semantic) for v in (x, min, max))
    return _semantic.clamp(x, min, max, propagate_nan)


@builtin
def where(condition, x, y, _semantic=None):
    """`x` where `condition` holds, else `y` (both sides are evaluated)."""
    return _semantic.where(condition, x, y)


@builtin
def add(x, y, sanitize_overflow=True, _semantic=None):
    """x + y (the `+` operator)."""
    return _semantic.add(x, y, sanitize_overflow)


@builtin
def sub(x, y, sanitize_overflow=True, _semantic=None):
    """x - y (the `-` operator)."""
    return _semantic.sub(x, y, sanitize_overflow)


@builtin
def mul(x, y, sanitize_overflow=True, _semantic=None):
    """x * y (the `*` operator)."""
    return _semantic.mul(x, y, sanitize_overflow)
