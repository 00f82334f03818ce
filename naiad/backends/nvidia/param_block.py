"""A kernel's parameters as cuLaunchKernel reads them: one ctypes slot per parameter of the
kernel's signature (`*fp32`, `i32`, `fp16`, `tensormap`, ...), allocated once, and the `void**`
array of their addresses (`ParamBlock`). The slow launch path (`CubinKernel.launch`) writes
a launch's values into it in place; fp16 and bf16 values are rounded to their nearest
representable number, ties to even, as the GPU would hold them.
"""

from __future__ import annotations

import ctypes
import struct

from .driver import CudaError


class _TensorMapSlot(ctypes.Structure):
    """A `CUtensorMap` parameter: 128 bytes, written whole (`value`)."""

    _fields_ = (("raw", ctypes.c_uint8 * 128),)

    @property
    def value(self) -> bytes:
        return bytes(self.raw)

    @value.setter
    def value(self, data: bytes) -> None:
        ctypes.memmove(ctypes.addressof(self), data, 128)


class _HalfSlot(ctypes.Structure):
    """An fp16 parameter: a number written as its nearest half (`value`)."""

    _fields_ = (("bits", ctypes.c_uint16),)

    @property
    def value(self) -> float:
        return struct.unpack("<e", struct.pack("<H", self.bits))[0]

    @value.setter
    def value(self, number: float) -> None:
        self.bits = struct.unpack("<H", struct.pack("<e", number))[0]


class _BFloat16Slot(ctypes.Structure):
    """A bf16 parameter: a number written as its nearest bfloat16, ties to even (`value`)."""

    _fields_ = (("bits", ctypes.c_uint16),)

    @property
    def value(self) -> float:
        return struct.unpack("<f", struct.pack("<I", self.bits << 16))[0]

    @value.setter
    def value(self, number: float) -> None:
        (word,) = struct.unpack("<I", struct.pack("<f", number))
        if (word >> 23) & 0xFF == 0xFF and word & 0x7FFFFF:  # NaN stays a quiet NaN
            self.bits = (word >> 16) | 0x40
            return
        self.bits = ((word + 0x7FFF + ((word >> 16) & 1)) >> 16) & 0xFFFF


_SCALAR_TYPES = {
    "i1": ctypes.c_int8,
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "u1": ctypes.c_uint8,
    "u8": ctypes.c_uint8,
    "u16": ctypes.c_uint16,
    "u32": ctypes.c_uint32,
    "u64": ctypes.c_uint64,
    "fp32": ctypes.c_float,
    "fp64": ctypes.c_double,
    "fp16": _HalfSlot,
    "bf16": _BFloat16Slot,
    "tensormap": _TensorMapSlot,
}


class ParamBlock:
    """The kernel parameters of one signature (`*fp32`, `i32`, ...), allocated once: `set`
    writes a value in place and `address` is the `void**` that cuLaunchKernel reads."""

    def __init__(self, signature: tuple[str, ...]):
        self.signature = signature
        try:
            self.slots = [
                ctypes.c_uint64() if kind.startswith("*") else _SCALAR_TYPES[kind]()
                for kind in signature
            ]
        except KeyError as exc:
            raise CudaError(f"no kernel parameter of type {exc.args[0]!r}") from exc
        self.pointers = (ctypes.c_void_p * max(1, len(signature)))(
            *[ctypes.addressof(slot) for slot in self.slots]
        )
        self.address = ctypes.addressof(self.pointers)

    def set(self, index: int, value) -> None:
        self.slots[index].value = value
