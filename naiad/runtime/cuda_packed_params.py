"""A CUDA kernel's parameters as cuLaunchKernel reads them: one buffer that one `struct` call
writes (cheaper than a ctypes object per parameter), each value at its natural alignment (a
tensor map's at 64 bytes), and the `void**` array of their addresses. The prepared launches
(cuda_launcher.py, cuda_bound_params.py, cuda_native_launch.py) lay their blocks out by
`PackedParams.layout`."""

from __future__ import annotations

import ctypes
import struct

from ..backends.nvidia import driver as cuda_driver

# The struct code of each scalar kernel parameter type (a pointer is a 'Q').
_PARAM_FORMATS = {
    "i1": "b",
    "i8": "b",
    "i16": "h",
    "i32": "i",
    "i64": "q",
    "u1": "B",
    "u8": "B",
    "u16": "H",
    "u32": "I",
    "u64": "Q",
    "fp16": "e",
    "fp32": "f",
    "fp64": "d",
    "tensormap": "128s",  # a CUtensorMap, passed by value (runtime/tensor_maps.py)
}
_TENSOR_MAP_ALIGNMENT = 64


class PackedParams:
    """A kernel's parameters in one buffer written by one `struct` call (cheaper than a ctypes
    object per parameter), each at its natural alignment, and the `void**` array of their
    addresses that cuLaunchKernel reads."""

    def __init__(self, layout: tuple[str, tuple[int, ...]]):
        text, offsets = layout
        self.pack = struct.Struct(text).pack_into
        self.buffer = ctypes.create_string_buffer(max(1, struct.calcsize(text)))
        base = ctypes.addressof(self.buffer)
        self.pointers = (ctypes.c_void_p * max(1, len(offsets)))(*[base + o for o in offsets])
        self.address = ctypes.addressof(self.pointers)

    @classmethod
    def layout(cls, signature: tuple[str, ...]) -> tuple[str, tuple[int, ...]]:
        """The struct format (little-endian, explicit padding) and each parameter's offset."""
        text, offsets, offset = "<", [], 0
        for kind in signature:
            code = "Q" if kind.startswith("*") else _PARAM_FORMATS.get(kind)
            if code is None:
                raise cuda_driver.CudaError(f"no kernel parameter of type {kind!r}")
            size = struct.calcsize(code)
            padding = -offset % _TENSOR_MAP_ALIGNMENT if kind == "tensormap" else -offset % size
            text += "x" * padding + code
            offsets.append(offset + padding)
            offset += padding + size
        return text, tuple(offsets)
