"""Builtins that create values: program ids, ranges, constants and casts."""

from __future__ import annotations

from .core import _tensor_member, _unwrap_shape, builtin


@builtin
def program_id(axis, _semantic=None):
    """The id of this program instance along grid `axis` (0, 1 or 2), as int32."""
    return _semantic.program_id(axis)


@builtin
def num_programs(axis, _semantic=None):
    """The number of program instances along grid `axis`, as int32."""
    return _semantic.num_programs(axis)


@builtin
def arange(start, end, _semantic=None):
    """The int32 block `[start, start + 1, ..., end - 1]`; `end - start` must be a power of 2."""
    return _semantic.arange(start, end)


@builtin
def full(shape, value, dtype, _semantic=None):
    """A block of `shape` filled with `value` converted to `dtype`."""
    return _semantic.full(_unwrap_shape([shape]), value, dtype)


@_tensor_member
@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False, _semantic=None):
    """Convert `input` to `dtype` (value conversion, or reinterpretation with `bitcast=True`).

    Float to integer truncates toward zero and saturates (NaN becomes 0), as on the GPU.
    `fp_downcast_rounding` ("rtne" or "rtz") picks the rounding of a narrowing float conversion.
    """
    return _semantic.cast(input, dtype, fp_downcast_rounding, bitcast)


@builtin
def to_tensor(x, _semantic=None):
    """`x` as a kernel value: Python numbers take their literal type (1 -> int32, 1.0 -> fp32)."""
    return _semantic.to_tensor(x)
