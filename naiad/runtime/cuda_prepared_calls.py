"""The per-call function of a prepared CUDA launch (cuda_launcher.fast_cuda_launch): the
binder's launch values selected and spread into the kernel's parameters (a host descriptor's
tensor map first where the kernel reads one), packed by one `struct` call into a block of
this thread's, and the driver's calls, either through the driver module (cuda-bindings'
cuCtxGetCurrent and cuLaunchKernel) or as one native call (cuda_native_launch.py), which on
the development CPU's stand-in driver saves ~0.7 us a launch (bench/RESULTS.md). It is a
closure: each name it reads per launch is a cell, not an attribute. `select`, `flatten` and
`scratch` are the compiled specialization's (cuda_launcher._Compiled); `prepared` holds the
rest.
"""

from __future__ import annotations

import ctypes
import struct
import threading

from ..backends.nvidia import driver as cuda_driver
from . import cuda_native_launch, global_scratch
from .cuda_bound_params import Prepared
from .cuda_packed_params import PackedParams


def prepared_launch(prepared: Prepared, select, flatten, scratch: int, native):
    """The prepared launch's per-call function: through `native`
    (cuda_native_launch.native_launch(): the grid, the stream and the values packed by one
    `struct` call into this thread's block, cuda_native_launch.unbound_block, then one call
    where the device's context is current, else the driver module's launch, which makes it
    current), or, where `native` is None, through the driver module's fast launch. A closure:
    each name it reads per launch is a cell, not an attribute."""
    launcher, table, check, stream, device, driver_launch, ran = prepared[:7]
    layout = PackedParams.layout(prepared.signature)
    local, (max_x, max_y, max_z) = threading.local(), cuda_driver.GRID_LIMITS
    other_context, raise_error = cuda_native_launch.OTHER_CONTEXT, cuda_driver.raise_launch_error

    def launch(dims, values, arguments=None):  # `arguments`: the CPU's need (binder.py)
        gx, gy, gz = dims
        if gx > max_x or gy > max_y or gz > max_z:
            return False
        if launcher.kernels is not table:
            return False
        if check is not None:
            check()
        if flatten is not None:
            values = flatten(values)
        if select is not None:
            values = select(values)
        try:
            pack, buffer, offset, base, address = local.params
        except AttributeError:
            pack, buffer, offset, base, address = _thread_block(prepared, layout, native, local)
        on = stream(device)
        if scratch:  # the allocation is kept until the kernel is queued
            kept = global_scratch.allocate(scratch, dims, device, on)
            values = (*values, global_scratch.address(kept))
        try:
            if native is None:
                pack(buffer, 0, *values)
            else:
                pack(buffer, offset, gx, gy, gz, on, *values)
        except struct.error:
            return False
        # Without the native call, the driver module launches, as where the context differs.
        result = other_context if native is None else native(base)
        if result == other_context:
            driver_launch(gx, gy, gz, on, address)
        elif result:
            raise_error(result)
        return ran  # the CompiledKernel: what a launch returns

    return launch


def _thread_block(prepared: Prepared, layout, native, local):
    """This thread's parameter block, made at its first launch and kept in `local`: (pack,
    buffer, offset of the grid, the native call's block, the `void**` array's address)."""
    if native is None:
        block = local.kept = PackedParams(layout)  # keeps the buffers alive
        local.params = (block.pack, block.buffer, 0, None, block.address)
    else:
        pack, buffer, offset, base, array = cuda_native_launch.unbound_block(
            prepared.function, prepared.threads, prepared.shared, layout
        )
        local.kept = array  # the block's `void**` array, alive while this thread launches
        local.params = (pack, buffer, offset, base, ctypes.addressof(array))
    return local.params
