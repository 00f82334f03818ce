"""A prepared CUDA launch's driver calls made by one native function (bound launches and the
others alike): the context check and cuLaunchKernel, which cuda-bindings makes as two calls.

Through cuda-bindings a launch on the hot path calls cuCtxGetCurrent (to see that its device's
context is current), compares the context objects, then calls cuLaunchKernel with eleven
arguments that cuda-bindings converts one by one and around which it releases the GIL. Measured
on a stand-in driver library whose entry points return at once (bench/RESULTS.md, 2026-11-29):
those steps cost ~1,070 ns a launch on the development CPU, the same launch through this
function ~350 ns, the parameters' packing included. The function reads everything from one
block per prepared launch and thread, which the caller writes once (`HEADER`) but for what
changes between its calls, which each call packs in one `struct` call after the header: a bound
launch's stream and varying values (cuda_bound_params.py), a prepared launch's grid too, and
all of its values (`unbound_block`):

    offset  0: cuCtxGetCurrent's address     8: cuLaunchKernel's address
           16: the context the launch needs  24: the CUfunction
           32: threads per block, dynamic shared bytes (two u32)
           40: the parameters' void** array  48: grid x, y, z (three u32), padding
           64: the stream                    72: the parameters' values, where the array points

It returns cuLaunchKernel's CUresult (0: queued), or OTHER_CONTEXT where another context is
current or the query failed: the caller then launches through the driver module, which makes the
device's context current for the launch and gives the caller's back (driver.device_context).
The call keeps the GIL, as torch's own launches do: nothing on it waits but the driver.
"""

from __future__ import annotations

import ctypes
import struct
import threading

from .. import knobs
from ..backends.nvidia import driver as cuda_driver

__all__ = [
    "GRID",
    "HEADER",
    "OTHER_CONTEXT",
    "STREAM",
    "VALUES",
    "header_values",
    "native_launch",
    "unbound_block",
]

HEADER = struct.Struct("<QQQQIIQ")  # the block's fixed part (the module doc)
GRID = HEADER.size  # the grid's offset (three u32 and padding), then the stream's
GRID_SIZES = struct.Struct("<III")
STREAM = GRID + 16
VALUES = STREAM + 8
_VALUES_ALIGNMENT = 64  # a tensor map's (cuda_launcher.PackedParams lays the values out so)
OTHER_CONTEXT = -1

_IR = f"""
define i32 @naiad_cuda_launch(ptr %block) {{
entry:
  %current = alloca ptr
  store ptr null, ptr %current
  %get_current = load ptr, ptr %block
  %queried = call i32 %get_current(ptr %current)
  %context = load ptr, ptr %current
  %expected_at = getelementptr i8, ptr %block, i64 16
  %expected = load ptr, ptr %expected_at
  %same = icmp eq ptr %context, %expected
  %answered = icmp eq i32 %queried, 0
  %ready = and i1 %answered, %same
  br i1 %ready, label %launch, label %other
other:
  ret i32 {OTHER_CONTEXT}
launch:
  %launch_at = getelementptr i8, ptr %block, i64 8
  %launch_kernel = load ptr, ptr %launch_at
  %function_at = getelementptr i8, ptr %block, i64 24
  %function = load ptr, ptr %function_at
  %threads_at = getelementptr i8, ptr %block, i64 32
  %threads = load i32, ptr %threads_at
  %shared_at = getelementptr i8, ptr %block, i64 36
  %shared = load i32, ptr %shared_at
  %params_at = getelementptr i8, ptr %block, i64 40
  %params = load ptr, ptr %params_at
  %gx_at = getelementptr i8, ptr %block, i64 48
  %gx = load i32, ptr %gx_at
  %gy_at = getelementptr i8, ptr %block, i64 52
  %gy = load i32, ptr %gy_at
  %gz_at = getelementptr i8, ptr %block, i64 56
  %gz = load i32, ptr %gz_at
  %stream_at = getelementptr i8, ptr %block, i64 {STREAM}
  %stream = load ptr, ptr %stream_at
  %result = call i32 %launch_kernel(ptr %function, i32 %gx, i32 %gy, i32 %gz, i32 %threads,
                                    i32 1, i32 1, i32 %shared, ptr %stream, ptr %params, ptr null)
  ret i32 %result
}}
"""

_loaded: dict = {}  # name -> (the loaded object, the ctypes function), once made
_loading = threading.Lock()


def native_launch():
    """`launch(block_address) -> int`, the native function (see the module doc), compiled for
    the host once (the disk cache keeps it) and loaded once per process; None where the
    setting is off or the driver library's entry points cannot be found."""
    if not knobs.cuda_native_launch.get() or cuda_driver.entry_points() is None:
        return None
    return load_native("cuda_launch", _IR)


def load_native(name: str, ir: str):
    """The function `naiad_<name>(ptr) -> i32` of the LLVM IR `ir` as a ctypes function that
    keeps the GIL: compiled for the host once (the disk cache keeps the object under `name`),
    loaded once per process and kept loaded (another thread's unkept copy could be unmapped
    under a caller)."""
    if name not in _loaded:
        with _loading:
            if name not in _loaded:
                _loaded[name] = _load(name, ir)
    return _loaded[name][1]


def _load(name: str, ir: str):
    from ..backends.cpu import llvm_tools, loader, object_store
    from ..backends.cpu.target import host_target
    from . import cpu_objects  # noqa: F401 (serves object_store from the disk cache)

    def make() -> bytes:
        return llvm_tools.compile_ir(ir, host_target().machine, name, optimized=False)

    symbol = f"naiad_{name}"
    code = object_store.cached_object(name, make)
    loaded = loader.load_object(code, [symbol], symbol)
    function_type = ctypes.PYFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)  # keeps the GIL
    return loaded, function_type(loaded.address(symbol))


def header_values(function, threads: int, shared: int, params_address: int) -> tuple:
    """HEADER's values for a launch of `function` (a driver.Function)."""
    get_current, launch_kernel = cuda_driver.entry_points()
    handle, context = cuda_driver.launch_handles(function)
    return (get_current, launch_kernel, context, handle, threads, shared, params_address)


def unbound_block(function, threads: int, shared: int, layout: tuple[str, tuple[int, ...]]):
    """The block of a prepared launch whose grid, stream and every parameter's value each call
    packs (cuda_launcher.fast_cuda_launch), laid out by `layout` (cuda_launcher.PackedParams'
    struct format and offsets of the kernel's parameters), with its header written:
    `(pack, buffer, offset, base, array)`. A call runs `pack(buffer, offset, gx, gy, gz,
    stream, *values)` (`offset`: the grid's in `buffer`) then the native launch on `base`;
    `array` is the `void**` array (the driver module's launch reads it where another context
    is current; the caller keeps it alive). The values start 64-byte aligned, as a tensor
    map's fields."""
    text, offsets = layout
    size = struct.calcsize(text)
    buffer = ctypes.create_string_buffer(_VALUES_ALIGNMENT + VALUES + max(1, size))
    offset = -(ctypes.addressof(buffer) + VALUES) % _VALUES_ALIGNMENT
    base = ctypes.addressof(buffer) + offset
    array = (ctypes.c_void_p * max(1, len(offsets)))(*[base + VALUES + o for o in offsets])
    header = header_values(function, threads, shared, ctypes.addressof(array))
    HEADER.pack_into(buffer, offset, *header)
    pack = struct.Struct("<IIIxxxxQ" + text[1:]).pack_into
    return pack, buffer, offset + GRID, base, array
