"""Tensor maps encoded by one native call of cuTensorMapEncodeTiled (tensor_maps.py's maps).

A launch whose descriptor's tensor is new (a training step's activations: new addresses at
every step, from torch's caching allocator) encodes its map on the hot path. Through
cuda-bindings that call converts twelve arguments, four of them lists of driver integer
objects: 4 us alone on the H200's host and 16 us inside a Llama-style step, where a step
encodes about 44 maps (bench/RESULTS.md, 2026-11-30). Here the call is made by a small native
function that reads every argument from one block per kind of map: what a kind fixes (the
element type, rank, box, swizzle, L2 promotion and fill) is written once, and each encode
packs the address, sizes and byte strides with one `struct` call and reads the 128 bytes back.

    offset  0: cuTensorMapEncodeTiled's address   8: where the map is written (64-byte aligned)
           16: data type, rank, interleave, swizzle, L2 promotion, fill (six u32)
           40: the box (five u32)                60: the element strides (five u32, all 1)
           80: the global address                88: the sizes (rank u64, innermost first),
               then the byte strides (rank - 1 u64, innermost first but the innermost's)

The driver writes the map where the block says (its own 64-byte aligned place, after the
fields). A failed encode returns None, and the caller encodes through cuda-bindings, which
raises the driver's message.
"""

from __future__ import annotations

import ctypes
import struct
import threading

from .. import knobs
from ..backends.nvidia import driver as cuda_driver
from .cuda_native_launch import load_native

__all__ = ["encoder"]

HEADER = struct.Struct("<QQ6I5I5I")
VALUES = HEADER.size  # the address, then the sizes and strides
MAP = 192  # the map's offset in the block: past the largest rank's values, 64-byte aligned
MAP_BYTES = 128
_ALIGNMENT = 64
_MAX_RANK = 5

_IR = f"""
define i32 @naiad_cuda_encode(ptr %block) {{
entry:
  %encode = load ptr, ptr %block
  %map_at = getelementptr i8, ptr %block, i64 8
  %map = load ptr, ptr %map_at
  %type_at = getelementptr i8, ptr %block, i64 16
  %type = load i32, ptr %type_at
  %rank_at = getelementptr i8, ptr %block, i64 20
  %rank = load i32, ptr %rank_at
  %interleave_at = getelementptr i8, ptr %block, i64 24
  %interleave = load i32, ptr %interleave_at
  %swizzle_at = getelementptr i8, ptr %block, i64 28
  %swizzle = load i32, ptr %swizzle_at
  %promotion_at = getelementptr i8, ptr %block, i64 32
  %promotion = load i32, ptr %promotion_at
  %fill_at = getelementptr i8, ptr %block, i64 36
  %fill = load i32, ptr %fill_at
  %box = getelementptr i8, ptr %block, i64 40
  %element_strides = getelementptr i8, ptr %block, i64 60
  %address_at = getelementptr i8, ptr %block, i64 {VALUES}
  %address = load ptr, ptr %address_at
  %sizes = getelementptr i8, ptr %block, i64 {VALUES + 8}
  %rank_wide = zext i32 %rank to i64
  %sizes_bytes = mul i64 %rank_wide, 8
  %strides = getelementptr i8, ptr %sizes, i64 %sizes_bytes
  %result = call i32 %encode(ptr %map, i32 %type, i32 %rank, ptr %address, ptr %sizes,
                             ptr %strides, ptr %box, ptr %element_strides, i32 %interleave,
                             i32 %swizzle, i32 %promotion, i32 %fill)
  ret i32 %result
}}
"""


def native_encode():
    """`encode(block_address) -> CUresult`, the native function (the module doc), loaded once
    per process; None where the setting is off or the driver library lacks the entry point."""
    if not knobs.cuda_native_launch.get() or cuda_driver.encode_entry_point() is None:
        return None
    return load_native("cuda_encode", _IR)


def encoder(data_type: int, box: tuple, swizzle: int, promotion: int, fill: int):
    """`encode(address, sizes, byte_strides) -> bytes | None` for maps of one kind (the
    CUtensorMap enums' values, the box innermost first; its length is the rank), where sizes
    and byte strides come innermost first (the strides without the innermost's); None where
    there is no native encode. One block serves every thread: a lock holds it from the pack to
    the map's read."""
    native = native_encode()
    if native is None or not 1 <= len(box) <= _MAX_RANK:
        return None
    rank = len(box)
    buffer = ctypes.create_string_buffer(MAP + MAP_BYTES + _ALIGNMENT)
    start = -ctypes.addressof(buffer) % _ALIGNMENT
    base = ctypes.addressof(buffer) + start
    map_address = base + MAP
    padding = [0] * (_MAX_RANK - rank)
    HEADER.pack_into(
        buffer, start, cuda_driver.encode_entry_point(), map_address,
        data_type, rank, 0, swizzle, promotion, fill,
        *box, *padding, *[1] * rank, *padding,
    )  # fmt: skip
    pack = struct.Struct(f"<{2 * rank}Q").pack_into
    values = start + VALUES
    lock = threading.Lock()
    string_at = ctypes.string_at

    def encode(address: int, sizes, byte_strides):
        with lock:
            pack(buffer, values, address, *sizes, *byte_strides)
            if native(base):
                return None
            return string_at(map_address, MAP_BYTES)

    encode.buffer = buffer  # alive as long as the function
    return encode
