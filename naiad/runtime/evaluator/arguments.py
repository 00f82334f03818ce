"""Launch arguments as evaluator values, typed by the `tt.func`'s signature.

Arrays (NumPy, torch tensors, anything `host_arrays.describe` knows) become the interpreter's
`Buffer`s, named after the argument (the name location Triton gives each argument, else
`arg<i>`), so an out-of-bounds access names it exactly as in the interpreter. Python numbers are
typed by the signature (wrapping to the integer's width), a `TensorDescriptor` becomes a
descriptor value. GPU arrays are copied to the host and back, as the interpreter does.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ...dialects.tt.types import PointerType
from ...ir import FloatType, RankedTensorType
from ...ir.locations import argument_names
from ..host_arrays import describe, is_array_like
from ..interpreter.memory import HostCopies, Memory, Pointers, argument_pointers
from ..tensor_descriptor import TensorDescriptor
from .errors import EvaluationError
from .memory_ops import Descriptor
from .values import array_value, scalar_dtype, scalar_value

__all__ = ["HostCopies", "argument_names", "bind_arguments"]


def _expand_descriptors(args: Mapping, names: list, func) -> dict:
    """A host TensorDescriptor given for an argument the frontend passes as its parts (`d`,
    `d.shape.i`, `d.stride.i`: base pointer, then i64 shape and strides) becomes those parts."""
    expanded = dict(args)
    for name, value in args.items():
        if (
            isinstance(value, TensorDescriptor)
            and f"{name}.shape.0" in names
            and isinstance(func.arguments[names.index(name)].type, PointerType)
        ):
            expanded[name] = value.base
            for i, (size, stride) in enumerate(zip(value.shape, value.strides)):
                expanded[f"{name}.shape.{i}"] = int(size)
                expanded[f"{name}.stride.{i}"] = int(stride)
    return expanded


def bind_arguments(func, args, memory: Memory, copies: HostCopies) -> list:
    """The values of `args` (a sequence, or a mapping by argument name) for `func`."""
    names = argument_names(func)
    if isinstance(args, Mapping):
        args = _expand_descriptors(args, names, func)
        unknown = set(args) - set(names)
        if unknown:
            raise EvaluationError(
                f"@{func.sym_name.value} has no argument(s) {sorted(unknown)}; it takes {names}"
            )
        missing = [n for n in names if n not in args]
        if missing:
            raise EvaluationError(f"@{func.sym_name.value}: missing argument(s) {missing}")
        args = [args[n] for n in names]
    args = list(args)
    if len(args) != len(names):
        raise EvaluationError(
            f"@{func.sym_name.value} takes {len(names)} argument(s), got {len(args)}"
        )
    return [
        _value(name, value, arg.type, memory, copies)
        for name, value, arg in zip(names, args, func.arguments)
    ]


def _value(name, value, ir_type, memory, copies):
    desc_block = getattr(ir_type, "block_type", None)
    if desc_block is not None:  # !tt.tensordesc
        if not isinstance(value, TensorDescriptor):
            raise EvaluationError(f"argument `{name}` must be a TensorDescriptor")
        base = argument_pointers(name, describe(value.base), memory, copies)
        return Descriptor(
            base,
            desc_block.element_type,
            tuple(value.shape),
            tuple(value.strides),
            desc_block.shape,
            value.padding,
        )
    if isinstance(ir_type, RankedTensorType):
        if scalar_dtype(ir_type.element_type).is_ptr():
            raise EvaluationError(f"argument `{name}`: tensors of pointers cannot be passed in")
        return array_value(value, ir_type)
    if scalar_dtype(ir_type).is_ptr():
        if value is None:
            return Pointers(np.array(0, np.uint64), None)
        if not is_array_like(value):
            raise EvaluationError(
                f"argument `{name}` is a pointer ({ir_type}): pass an array, not "
                f"{type(value).__name__}"
            )
        return argument_pointers(name, describe(value), memory, copies)
    if (isinstance(value, np.ndarray) and value.ndim == 0) or isinstance(value, np.generic):
        value = value.item()
    integer = not isinstance(ir_type, FloatType)
    if not isinstance(value, bool | int | float) or (integer and isinstance(value, float)):
        what = "an integer" if integer else "a number"
        raise EvaluationError(
            f"argument `{name}` of type {ir_type} must be {what}, got {type(value).__name__}"
        )
    return scalar_value(value, ir_type)
