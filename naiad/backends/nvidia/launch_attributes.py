"""Launches with attributes, through cuLaunchKernelEx: programmatic dependent launch
(`launch_pdl=True`) and cooperative grids (`launch_cooperative_grid=True`), Triton's launch
options of the same names.

A kernel launched with `launch_pdl=True` may start while the kernel before it on its stream is
still running: the driver lets it begin once every program of that kernel has executed
`griddepcontrol.launch_dependents` (`tl.extra.cuda.gdc_launch_dependents()`) or finished, and
the new kernel's `griddepcontrol.wait` (`gdc_wait()`) blocks until that kernel has completed and
its memory is visible. So the dependent's prologue overlaps the end of its producer
(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION). A cooperative launch guarantees that
every program of the grid is resident at once, so programs may wait on each other; the driver
refuses a grid larger than the device can hold (CU_LAUNCH_ATTRIBUTE_COOPERATIVE).

Other launches keep cuLaunchKernel, whose call is cheaper (driver.fast_launch); the attributes
are fixed per compiled kernel (the options are part of its key), so each launch here builds
nothing but the grid's three sizes.
"""

from __future__ import annotations

from . import driver

PDL = "programmatic dependent launch"
COOPERATIVE = "cooperative grid"


def names(pdl: bool, cooperative: bool) -> tuple[str, ...]:
    """The attributes a kernel launched with these options needs (none: cuLaunchKernel)."""
    return (PDL,) * bool(pdl) + (COOPERATIVE,) * bool(cooperative)


def _attributes(cuda, wanted: tuple[str, ...]) -> list:
    ids = cuda.CUlaunchAttributeID
    made = []
    for name in wanted:
        attribute = cuda.CUlaunchAttribute()
        if name == PDL:
            attribute.id = ids.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            attribute.value.programmaticStreamSerializationAllowed = 1
        else:
            attribute.id = ids.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
            attribute.value.cooperative = 1
        made.append(attribute)
    return made


def fast_launch(function: driver.Function, threads: int, shared: int, wanted: tuple[str, ...]):
    """`launch(gx, gy, gz, stream, params_address)` as driver.fast_launch's, with the
    attributes `wanted`: one query that the device's context is current (else the launch
    goes through `device_context`, the caller's context given back after), the grid and stream
    written into the configuration built once, and the launch."""
    cuda = driver._cuda()
    config = cuda.CUlaunchConfig()
    config.blockDimX, config.blockDimY, config.blockDimZ = threads, 1, 1
    config.sharedMemBytes = shared
    config.attrs = _attributes(cuda, wanted)
    config.numAttrs = len(wanted)
    device, handle, launch_kernel = function.device, function.handle, cuda.cuLaunchKernelEx
    expected, get_current = driver.context(device), cuda.cuCtxGetCurrent

    def launch(gx: int, gy: int, gz: int, stream: int, params_address: int) -> None:
        config.gridDimX, config.gridDimY, config.gridDimZ = gx, gy, gz
        config.hStream = stream
        result, current = get_current()
        if result or current != expected:
            with driver.device_context(device):
                (result,) = launch_kernel(config, handle, params_address, 0)
        else:
            (result,) = launch_kernel(config, handle, params_address, 0)
        if result:
            driver._check(cuda, result, "cuLaunchKernelEx")

    return launch


def launch(function, grid, threads: int, shared: int, stream: int, params, wanted) -> None:
    """driver.launch with the attributes `wanted`; an empty grid launches nothing."""
    if grid[0] * grid[1] * grid[2] == 0:
        return
    fast_launch(function, threads, shared, wanted)(*grid, stream, params.address)
