"""The tensor maps of host descriptors: the 128-byte `CUtensorMap` a kernel's tensor copies read
(frontend/tensor_maps.py says which descriptors have one, backends/nvidia/lowering/tma.py how the
kernel uses it).

A map is encoded by the driver (`cuTensorMapEncodeTiled`, in one native call where it can:
cuda_native_encode.py) from the descriptor's tensor (address, sizes, byte strides; innermost
first), the box one copy moves and its swizzle (those of the kernel's scratch: `tma.box`,
`tma.swizzle_bytes`) and the fill of out-of-bounds elements (zero, or NaN for
`padding="nan"`). Encoding costs a driver call, so maps are kept per tensor address,
shape and strides (`TensorMaps`): a launch over the same tensor reuses its map. The hot path
finds a map by the descriptor's launch value itself, `(address, *shape, *strides)`, in one
dict (`by_parts`, which a launch's generated selector reads directly: cuda_parameters.selector),
before `encode`'s slicing and its cache by address (a library's launches look up several maps
a call: naiad.ops attention 15 a forward and backward).
"""

from __future__ import annotations

import ctypes
import functools

from ..backends.nvidia import driver as cuda_driver
from ..backends.nvidia.lowering.tma import box, swizzle_bytes
from ..language.dtypes import str_to_ty
from . import cuda_native_encode

TENSOR_MAP_BYTES = 128
_CACHED_MAPS = 256  # per descriptor parameter of a compiled kernel

# CUtensorMapDataType by element type (8-bit floats move as bytes).
_DATA_TYPES = {
    "i8": 0, "u8": 0, "fp8e4nv": 0, "fp8e5": 0, "fp8e4b15": 0, "fp8e4b8": 0, "fp8e5b16": 0,
    "i16": 1, "u16": 1,
    "u32": 2, "i32": 3, "u64": 4, "i64": 5,
    "fp16": 6, "fp32": 7, "fp64": 8, "bf16": 9,
}  # fmt: skip
_SWIZZLES = {32: 1, 64: 2, 128: 3}  # CUtensorMapSwizzle
_L2_PROMOTION_128B = 2
_NAN_FILL = 1  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA


class TensorMaps:
    """`encode(parts) -> bytes`: the tensor map of a descriptor whose parts are (base, *shape,
    *strides), for blocks of `block_shape` of `element` with `padding`."""

    def __init__(self, name: str, element: str, block_shape, padding: str):
        self.name = name
        self.nbytes = str_to_ty(element).primitive_bitwidth // 8
        self.data_type = _DATA_TYPES[element]
        # a block's leading dimensions are 1 (frontend/tensor_maps.py): one box each
        columns, rows = box(block_shape[-2:], self.nbytes)
        self.box = (columns, rows, *[1] * (len(block_shape) - 2))
        self.swizzle = _SWIZZLES[swizzle_bytes(block_shape[-1], self.nbytes)]
        self.fill = _NAN_FILL if padding == "nan" else 0
        self.encode_address = functools.lru_cache(_CACHED_MAPS)(self._encode)
        self.native = None  # cuda_native_encode's encoder once asked (False: none here)
        # (address, *shape, *strides) -> its map, as `encode` found them; emptied when full
        self.by_parts: dict = {}

    def encode(self, parts) -> bytes:
        """The map of a descriptor's `parts` (base, *shape, *strides): by the parts where they
        were seen (the hot path's), else found or encoded by address and kept by the parts."""
        found = self.by_parts.get(parts) if type(parts) is tuple else None
        if found is not None:
            return found
        base = parts[0]  # an address as the binder gives it, or a tensor (the slow path's)
        if type(base) is not int:
            base = base.data_ptr() if hasattr(base, "data_ptr") else int(base)
        sizes = tuple(parts[1:])
        found = self.encode_address(base, sizes)
        if len(self.by_parts) >= _CACHED_MAPS:
            self.by_parts.clear()
        self.by_parts[(base, *sizes)] = found
        return found

    def _encode(self, address: int, sizes_and_strides: tuple) -> bytes:
        rank = len(sizes_and_strides) // 2
        shape, strides = sizes_and_strides[:rank], sizes_and_strides[rank:]
        if any(size < 1 for size in shape):
            raise ValueError(
                f"descriptor `{self.name}`: its tensor has shape {list(shape)}; a tensor map "
                "describes a tensor of at least one element per dimension"
            )
        byte_strides = [s * self.nbytes for s in reversed(strides[:-1])]
        if self.native is None:  # asked once: the native encoder, or False where none is
            made = cuda_native_encode.encoder(
                self.data_type, self.box, self.swizzle, _L2_PROMOTION_128B, self.fill
            )
            self.native = made or False
        if self.native:
            found = self.native(address, shape[::-1], byte_strides)
            if found is not None:
                return found
        # Without the native call, or where it failed: cuda-bindings' (the driver's message)
        cuda = cuda_driver._cuda()
        result, tensor_map = cuda.cuTensorMapEncodeTiled(
            cuda.CUtensorMapDataType(self.data_type),
            rank,
            address,
            [cuda.cuuint64_t(size) for size in reversed(shape)],
            [cuda.cuuint64_t(s) for s in byte_strides],
            [cuda.cuuint32_t(size) for size in self.box],
            [cuda.cuuint32_t(1)] * rank,
            cuda.CUtensorMapInterleave(0),
            cuda.CUtensorMapSwizzle(self.swizzle),
            cuda.CUtensorMapL2promotion(_L2_PROMOTION_128B),
            cuda.CUtensorMapFloatOOBfill(self.fill),
        )
        if result:
            _, message = cuda.cuGetErrorString(result)
            raise cuda_driver.CudaError(
                f"descriptor `{self.name}`: cuTensorMapEncodeTiled failed ({result.name}: "
                f"{message.decode() if message else ''}) for shape {list(shape)}, strides "
                f"{list(strides)}, block box {list(self.box)}"
            )
        return ctypes.string_at(tensor_map.getPtr(), TENSOR_MAP_BYTES)
