"""The parameter block a CPU kernel reads (abi.py): grid size, then one 8-byte slot per argument
of the compiled function, then the extent of each pointer argument, then whether the launch
streams its stores (cpu_streaming.py).

Apart from the launcher (cpu_launcher.py) because two launches build it: the slow path packs it
whole from the bound arguments (`pack_parameters`), and the hot path (cpu_fast_launch.py) packs
the binder's launch values, converting each as `slot_converter` says and reading each array's
`extent`. Every access is checked against its argument's extent (middle/linalg/bounds_checks.py),
debug mode or not, so the hot path reads each array's storage at every launch too: a NumPy
array that owns its data is its own storage, a torch tensor's is one call away.
"""

from __future__ import annotations

import struct

import numpy as np

from .host_arrays import describe, is_array_like
from .tensor_descriptor import TensorDescriptor


def slot_converter(kind: str, annotation):
    """How a launch value of a compiled argument of `kind` becomes its 8-byte slot: None when
    it already is one (a pointer's address, an int the binder keyed as 32-bit)."""
    if kind in ("f32", "f64", "f16", "bf16"):
        return lambda value: _float_bits(kind, float(value))
    if kind == "i64" or (kind != "ptr" and annotation is not None):
        return lambda value: _signed64(int(value))
    return None


def pack_parameters(arguments, bound: dict, grid, addresses, stream: int) -> np.ndarray:
    """The parameter block of abi.py: grid size, then one slot per compiled argument
    (`addresses`: the data addresses of array arguments, when known, else None), then the extent
    of each pointer argument, then `stream`, the bytes a program's stores must write to
    stream (cpu_streaming.program_threshold)."""
    values = _expand_descriptors(bound)
    slots = [grid[0], grid[1], grid[2]]
    for name, kind in arguments:
        known = None if addresses is None else addresses.get(name)
        slots.append(_signed64(known) if known is not None else _slot(name, kind, values[name]))
    for name, kind in arguments:
        if kind == "ptr":
            slots += extent(values[name])
    slots.append(stream)
    return np.array(slots, dtype=np.int64)


def extent(value, address: int | None = None, tensor: type | None = None) -> tuple[int, int]:
    """The bytes `[low, high)` around an array's data pointer (`address`, when known) that its
    storage allows (abi.py); empty for a null pointer. Quick where the hot path meets them: a
    NumPy array that owns its data (no base) is exactly its storage, and a `tensor` (torch's
    class, when imported: binder.tensor_type) has its storage read directly; anything else is
    described (host_arrays.py)."""
    if value is None:
        return 0, 0
    kind = type(value)
    if kind is np.ndarray and value.base is None:
        return 0, value.nbytes
    if kind is tensor and address is not None:
        storage = value.untyped_storage()
        low = storage.data_ptr() - address
        return low, low + storage.nbytes()
    array = describe(value)
    low = array.storage_base - array.data_ptr
    return low, low + array.storage_nbytes


def _expand_descriptors(bound: dict) -> dict:
    """Host TensorDescriptors as the parts the frontend passes (base, shape.i, stride.i)."""
    values = dict(bound)
    for name, value in bound.items():
        if isinstance(value, TensorDescriptor):
            _check_block_bytes(name, value)
            values[name] = value.base
            for i, (size, stride) in enumerate(zip(value.shape, value.strides)):
                values[f"{name}.shape.{i}"] = int(size)
                values[f"{name}.stride.{i}"] = int(stride)
    return values


def _check_block_bytes(name: str, desc: TensorDescriptor) -> None:
    """A descriptor's block spans at least 16 bytes along its last dimension, the rule of the
    GPU's bulk copies that the interpreter and the CUDA launcher apply too: a kernel that runs
    on the CPU runs there."""
    itemsize = describe(desc.base).itemsize
    last = int(desc.block_shape[-1])
    if last * itemsize < 16:
        raise ValueError(
            f"argument `{name}`: descriptor blocks need at least 16 bytes in the last "
            f"dimension, got {last} x {itemsize} bytes"
        )


def _slot(name: str, kind: str, value) -> int:
    if kind == "ptr":
        if value is None:
            return 0
        if not is_array_like(value):
            raise TypeError(
                f"argument `{name}` is a pointer: pass an array, not {type(value).__name__}"
            )
        array = describe(value)
        if array.device != "cpu":
            raise ValueError(
                f"argument `{name}` is on {array.device}; a kernel compiled for the CPU reads "
                "host memory"
            )
        return _signed64(array.data_ptr)
    if isinstance(value, np.generic | np.ndarray):
        value = value.item()
    if kind in ("f32", "f64", "f16", "bf16"):
        return _float_bits(kind, float(value))
    return _signed64(int(value))


def _signed64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _float_bits(kind: str, value: float) -> int:
    if kind == "f64":
        return _signed64(struct.unpack("<Q", struct.pack("<d", value))[0])
    if kind == "f32":
        return struct.unpack("<I", struct.pack("<f", value))[0]
    from ..ir.float_format import float_to_bits

    return float_to_bits(kind, value)
