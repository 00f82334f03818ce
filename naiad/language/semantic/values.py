"""Python values as typed kernel values, and broadcasting: the base of every rule."""

from __future__ import annotations

import struct

from .. import dtypes as t
from ..core import _unwrap_if_constexpr, constexpr, tensor
from .promotion import literal_type


def _round_to_fp32(value: float) -> float:
    """The nearest fp32 value (round to nearest even; beyond the fp32 range, infinity)."""
    if value != value or abs(value) == float("inf"):
        return value
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


class ValuesMixin:
    """Scalars, splats and broadcasting; mixed into `Semantic` (which has `builder`, `target`)."""

    # -- Python values --------------------------------------------------------------------------
    def scalar_constant(self, value, dtype: t.dtype) -> tensor:
        """`value` as a scalar of `dtype`, made as Triton's builder makes it: zero is the null
        value (a Python -0.0 becomes +0.0), and fp16 / bf16 / fp8 constants come from a C float
        (`get_fp16(float)`, `get_fp32` + truncation for fp8), so the value is rounded to fp32
        first."""
        if value == 0:
            value = 0
        elif dtype.is_floating() and dtype.primitive_bitwidth < 32:
            value = _round_to_fp32(float(value))
        return tensor(self.builder.constant(value, dtype), dtype)

    def full_constant(self, value, dtype: t.dtype, shape) -> tensor:
        scalar = self.scalar_constant(value, dtype)
        return self.splat(scalar, shape) if shape else scalar

    def to_tensor(self, x, check_type: bool = True) -> tensor:
        """A kernel value for `x`: tensors pass, Python numbers take their literal type."""
        if type(x) is tensor:  # the usual case, answered first
            return x
        x = _unwrap_if_constexpr(x)
        if isinstance(x, tensor):
            return x
        if hasattr(x, "dtype") and hasattr(x, "item") and not isinstance(x, (bool, int, float)):
            raise TypeError(f"cannot use a host array or NumPy scalar inside a kernel: {x!r}")
        if isinstance(x, (bool, int, float)):
            return self.scalar_constant(x, literal_type(x))
        if check_type:
            raise TypeError(f"cannot convert {x!r} of type {type(x).__name__} to a tensor")
        return x

    @staticmethod
    def is_python_scalar(x) -> bool:
        x = x.value if isinstance(x, constexpr) else x
        return isinstance(x, (bool, int, float))

    # -- shapes ---------------------------------------------------------------------------------
    def validate_block_shape(self, shape) -> tuple:
        block_numel(shape, self.target.max_tensor_numel)
        return tuple(shape)

    def splat(self, value: tensor, shape) -> tensor:
        shape = tuple(shape)
        if value.type.is_block():
            raise ValueError("cannot splat a block tensor")
        if not shape:
            return value
        ty = t.block_type(value.type, shape)
        return tensor(self.builder.splat(value.handle, ty), ty)

    def broadcast_impl_shape(self, x: tensor, shape) -> tensor:
        shape = tuple(shape)
        if not x.type.is_block():
            return self.splat(x, shape)
        src = x.type.get_block_shapes()
        if src == shape:
            return x
        if len(src) != len(shape):
            raise ValueError(f"Cannot broadcast, rank mismatch: {list(src)}, {list(shape)}")
        for a, b in zip(src, shape):
            if a != b and a != 1:
                raise ValueError(
                    f"Cannot broadcast, the expanded size of the tensor ({b}) must "
                    f"match the existing size ({a}) in non-singleton dimension"
                )
        ty = t.block_type(x.type.scalar, shape)
        return tensor(self.builder.broadcast(x.handle, ty), ty)

    def broadcast_impl_value(self, lhs: tensor, rhs: tensor):
        """Broadcast two values to their common shape (NumPy's rule, after aligning ranks)."""
        lhs_ty, rhs_ty = lhs.type, rhs.type
        if not lhs_ty.is_block() and not rhs_ty.is_block():
            return lhs, rhs
        if not lhs_ty.is_block():
            return self.splat(lhs, rhs_ty.shape), rhs
        if not rhs_ty.is_block():
            return lhs, self.splat(rhs, lhs_ty.shape)
        lhs_shape, rhs_shape = lhs_ty.shape, rhs_ty.shape
        if len(lhs_shape) < len(rhs_shape):
            for _ in range(len(rhs_shape) - len(lhs_shape)):
                lhs = self.expand_dims(lhs, 0)
            lhs_shape = lhs.type.shape
        elif len(rhs_shape) < len(lhs_shape):
            for _ in range(len(lhs_shape) - len(rhs_shape)):
                rhs = self.expand_dims(rhs, 0)
            rhs_shape = rhs.type.shape
        shape = []
        for i, (a, b) in enumerate(zip(lhs_shape, rhs_shape)):
            if a == 1 or a == b:
                shape.append(b)
            elif b == 1:
                shape.append(a)
            else:
                raise ValueError(
                    f"Cannot make_shape_compatible: incompatible dimensions at index "
                    f"{i}: {a} and {b}"
                )
        return self.broadcast_impl_shape(lhs, shape), self.broadcast_impl_shape(rhs, shape)


def is_power_of_two(n: int) -> bool:
    """Whether `n` is 1, 2, 4, ... (0 and negatives are not)."""
    return n > 0 and n & (n - 1) == 0


def block_numel(shape, max_numel: int) -> int:
    """The elements of a block of `shape`, each dimension an int power of 2, and at most
    `max_numel` in all (a target's limit); else a TypeError or ValueError naming the fault."""
    numel = 1
    for i, d in enumerate(shape):
        if not isinstance(d, int):
            raise TypeError(
                f"Shape element {i} must have type `constexpr[int]`, got "
                f"`{type(d).__name__}` ({d!r})"
            )
        if not is_power_of_two(d):
            raise ValueError(f"Shape element {i} must be a power of 2, got {d}")
        numel *= d
    if numel > max_numel:
        raise ValueError(f"numel ({numel}) exceeds the maximum tensor numel ({max_numel})")
    return numel
