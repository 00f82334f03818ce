"""The launch entry's keys of arguments that are neither torch tensors nor ints (binder.py
keys those two inline): constexprs by type and repr, integers beyond int32 by width, floats,
bools, None, NumPy arrays and other tensors by dtype, alignment and device, host tensor
descriptors by what specializes them, and tuples by their class and their leaves' keys, nested
(tuple_arguments.py). Each key comes with the argument's launch value; what the entry does
not handle raises `Unbound`, and the slow path takes the launch."""

from __future__ import annotations

import operator
import sys

import numpy as np

from ..language import core
from .tensor_descriptor import TensorDescriptor

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class Unbound(Exception):
    """This launch is not one the binder handles: the slow path takes it."""


def constexpr_key(value):
    """A constexpr that is not a plain int, keyed by its type and repr: `1`, `1.0` and `True`
    hash alike but specialize differently, and a list is not hashable. Scalar dtypes, bools and
    strings key by themselves: a dtype's repr looks up the package it is printed from, which
    cost a library's launches several microseconds each (naiad.ops' products pass the
    accumulator's dtype)."""
    kind = type(value)
    if kind is core.dtype:
        return (kind, value.name)
    if kind is bool or kind is str:
        return (kind, value)
    return (kind, repr(value))


def wide_int_key(value: int):
    """The key of an integer beyond int32: int64 or uint64 by range (as Triton), and %16."""
    if -(2**63) <= value < 2**63:
        return ("i64", value % 16 == 0)
    if 2**63 <= value < 2**64:
        return ("u64", value % 16 == 0)
    raise Unbound  # the slow path says it is too large


def other_key(value, align_free: bool = False, plain_ints: bool = False):
    """(key, launch value) of an argument that is neither a torch.Tensor nor an int; an array's
    alignment is left out of the key when `align_free`, the ==1 and %16 of a tuple's integers
    when `plain_ints` (`do_not_specialize`)."""
    kind = type(value)
    if kind is TensorDescriptor:  # the binder's entries key them first (descriptor_key)
        return descriptor_key(value, align_free)
    if value is None:
        return None, None
    if kind is bool:
        return "i1", value
    if isinstance(value, float):  # a NumPy float64 too: the slow path makes it an fp32
        return "fp32", float(value)
    if isinstance(value, tuple):
        leaves = []
        return _tuple_key(value, align_free, plain_ints, leaves), tuple(leaves)
    if kind is np.ndarray:
        address, read_only = value.__array_interface__["data"]
        return (value.dtype, align_free or address % 16 == 0, "numpy", read_only), address
    device = getattr(value, "device", None)
    if device is not None and hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        address = value.data_ptr()  # a tensor subclass (a Parameter, ...)
        return (kind, value.dtype, align_free or address % 16 == 0, device), address
    raise Unbound  # NumPy scalars, array subclasses, dtypes: the slow path


def _tuple_key(value: tuple, align_free: bool, plain_ints: bool, leaves: list) -> tuple:
    """The key of a tuple argument (its class, then each element's key, nested as the tuple),
    appending the launch value of each leaf to `leaves`, constants included, in the order the
    slow path spreads them (tuple_arguments.py). A descriptor in a tuple takes the slow path."""
    keys = [type(value)]
    for item in value:
        kind = type(item)
        if kind is int:
            in_range = INT32_MIN <= item <= INT32_MAX
            small = 0 if plain_ints else 1 if item == 1 else 16 if item % 16 == 0 else 0
            keys.append(small if in_range else wide_int_key(item))
            leaves.append(item)
        elif isinstance(item, tuple):
            keys.append(_tuple_key(item, align_free, plain_ints, leaves))
        elif kind is core.constexpr or getattr(item, "__naiad_jit__", False):
            keys.append(constexpr_key(item))
            leaves.append(None)
        elif kind is TensorDescriptor:
            raise Unbound
        else:
            key, launch_value = other_key(item, align_free)
            keys.append(key)
            leaves.append(launch_value)
    return tuple(keys)


def descriptor_key(desc: TensorDescriptor, align_free: bool = False, tensor=None):
    """(key, launch value) of a host tensor descriptor: what compiler.specialize reads of it
    (its tensor's dtype and alignment, which sizes and strides are divisible by 16, its block
    shape, its padding) and where it lives, and its parts (base address, shape..., strides...)
    as one tuple. `tensor`: `tensor_type()`, which the binder's generated code passes (a
    library's launch may pass several descriptors: attention's 15 a forward and backward)."""
    base = desc.base
    if type(base) is (tensor_type() if tensor is None else tensor):  # keyed inline
        address = base.data_ptr()
        base_key = (type(base), base.dtype, align_free or address % 16 == 0, base.device)
    else:
        base_key, address = other_key(base, align_free)
        if not isinstance(base_key, tuple):
            raise Unbound  # not a tensor: the slow path says so
    block_shape, shape, strides = desc.block_shape, desc.shape, desc.strides
    geometry = (len(block_shape), *block_shape, *shape, *strides)
    found = _GEOMETRIES.get(geometry)
    if found is None:
        found = _geometry(geometry, block_shape, shape + strides)
    block, divisible = found
    key = (TensorDescriptor, base_key, block, desc.padding, () if align_free else divisible)
    return key, (address, *shape, *strides)


# A descriptor's block as ints and which of its sizes and strides divide by 16, by its geometry
# (the block's rank, the block, the shape, the strides): a library launches the same few at
# every call (attention: 15 descriptors a forward and backward), and both cost a descriptor's
# key 0.5 us of its 1.3 on the development CPU. Emptied when full.
_GEOMETRIES: dict = {}
_GEOMETRIES_KEPT = 1024


def _geometry(geometry: tuple, block_shape, sizes) -> tuple[tuple, tuple]:
    """(block, divisible) of a descriptor (`descriptor_key`), kept under `geometry`."""
    found = tuple(map(operator.index, block_shape)), tuple([s % 16 == 0 for s in sizes])
    if len(_GEOMETRIES) >= _GEOMETRIES_KEPT:
        _GEOMETRIES.clear()
    _GEOMETRIES[geometry] = found
    return found


def tensor_type() -> type:
    """torch.Tensor once torch has been imported (arguments of exactly that type take the
    inline branch, and a host descriptor's tensor here), else `_NoTensor`. A launch never
    imports torch itself: a NumPy program would pay seconds for it. A binder made before torch
    was imported keys tensors through `other_key`, which is slower but correct;
    `JITFunction.run` remakes the binder and the entry once torch appears (both must key
    alike)."""
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", _NoTensor) if torch is not None else _NoTensor


class _NoTensor:
    """What the generated code compares argument types with while torch is not imported: a
    type no argument has."""
