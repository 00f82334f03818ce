"""A prepared CUDA launch bound to one bound launch's fixed arguments (bound_launch.py): their
parameters packed once, and per call only the varying ones.

A bound launch passes the same sizes, strides and factors at every call of its kind, and only
a few tensors change (a matrix product: 3 of its 17 kernel parameters). cuLaunchKernel reads
each parameter through its own pointer in the `void**` array, so the fixed ones are written
once into a block of their own, and the array points there for them and into a small block
per thread for the varying ones, which each call packs. The per-call work left: one `struct`
call on the varying values, the stream query and the driver call; the runtime values' tuple,
the selection of the kernel's parameters among them and the packing of the fixed ones are gone.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from typing import NamedTuple

from ..backends.nvidia import driver as cuda_driver
from . import cuda_native_launch
from .cuda_parameters import tuple_getter


class Prepared(NamedTuple):
    """What a prepared launch reads at each call (cuda_launcher.fast_cuda_launch), and how its
    kernel's parameters are laid out."""

    launcher: object  # its CudaLauncher, whose table of kernels it checks
    table: dict  # that table when the launch was prepared
    check: object  # the globals check, or None
    stream: object  # device -> the current stream
    device: int
    driver: object  # driver.fast_launch's launch
    ran: object  # what a launch returns
    signature: tuple  # the kernel's parameter types
    kept: tuple  # the runtime value each parameter takes, by position
    packed: type  # cuda_launcher.PackedParams
    function: object  # the driver.Function launched, its threads per block and shared bytes:
    threads: int  # what the native launch (cuda_native_launch.py) writes into its block
    shared: int


def bind_parameters(prepared: Prepared, fixed: dict, varying: tuple, dims):
    """`launch(values, arguments) -> ran | False` over `dims` for a bound launch whose runtime
    values at the positions in `fixed` never change (position -> value) and those at `varying`
    come, in that order, as `values` (`arguments`, what they come from, is not read); None
    where one cannot be made (a grid or a fixed value the driver refuses: the prepared launch
    then says so on each call). `prepared` holds what the prepared launch reads
    (cuda_launcher.fast_cuda_launch). False from a call: a varying value does not fit its
    parameter, or the kernel was forgotten; nothing was launched. The driver calls are one
    native call where cuda_native_launch.py's function is at hand."""
    if any(size > limit for size, limit in zip(dims, cuda_driver.GRID_LIMITS)):
        return None
    signature, kept, packed = prepared.signature, prepared.kept, prepared.packed
    fixed_params = [j for j, index in enumerate(kept) if index in fixed]
    varying_params = [j for j, index in enumerate(kept) if index not in fixed]
    block = packed(packed.layout(tuple(signature[j] for j in fixed_params)))
    try:
        block.pack(block.buffer, 0, *(fixed[kept[j]] for j in fixed_params))
    except struct.error:
        return None
    text, offsets = packed.layout(tuple(signature[j] for j in varying_params))
    picked = [varying.index(kept[j]) for j in varying_params]
    pick = None if picked == list(range(len(varying))) else tuple_getter(picked)
    native = cuda_native_launch.native_launch()
    start = cuda_native_launch.VALUES if native is not None else 0
    local = threading.local()

    def params():
        """This thread's block of the varying parameters (after the native launch's header
        and stream where it has one) and the `void**` array, made at its first launch."""
        own = ctypes.create_string_buffer(max(1, start + struct.calcsize(text)))
        base = ctypes.addressof(own)
        addresses = dict(zip(fixed_params, block.pointers))
        addresses.update((j, base + start + o) for j, o in zip(varying_params, offsets))
        array = (ctypes.c_void_p * max(1, len(kept)))(*(addresses[j] for j in range(len(kept))))
        if native is None:
            pack = struct.Struct(text).pack_into
        else:  # the stream, then the values: one pack per call
            pack = struct.Struct("<Q" + text[1:]).pack_into
            header = cuda_native_launch.header_values(
                prepared.function, prepared.threads, prepared.shared, ctypes.addressof(array)
            )
            cuda_native_launch.HEADER.pack_into(own, 0, *header)
            cuda_native_launch.GRID_SIZES.pack_into(own, cuda_native_launch.GRID, *dims)
        local.kept = (own, array, block)  # alive while this thread may launch
        local.params = (pack, own, base, ctypes.addressof(array))
        return local.params

    launch = _bound_launch(prepared, dims, pick, local, params, native)
    launch.block = block  # the fixed parameters' block lives as long as the launch
    return launch


def _bound_launch(prepared: Prepared, dims, pick, local, params, native):
    """The bound launch's per-call function: through `native` (one call where the device's
    context is current, else the driver module's launch, which makes it current) or, where
    `native` is None, through the driver module's fast launch."""
    launcher, table, check, stream, device, driver_launch, ran = prepared[:7]
    gx, gy, gz = dims
    other_context, raise_error = cuda_native_launch.OTHER_CONTEXT, cuda_driver.raise_launch_error

    def launch(values, arguments=None):  # the arrays' extents are the CPU's (bound_launch.py)
        if launcher.kernels is not table:
            return False
        if check is not None:
            check()
        if pick is not None:
            values = pick(values)
        try:
            pack, buffer, base, address = local.params
        except AttributeError:
            pack, buffer, base, address = params()
        on = stream(device)
        try:
            if native is None:
                pack(buffer, 0, *values)
            else:
                pack(buffer, cuda_native_launch.STREAM, on, *values)
        except struct.error:
            return False
        # Without the native call, the driver module launches, as where the context differs.
        result = other_context if native is None else native(base)
        if result == other_context:
            driver_launch(gx, gy, gz, on, address)
        elif result:
            raise_error(result)
        return ran

    return launch
