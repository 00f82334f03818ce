"""Launches with attributes without a GPU (backends/nvidia/launch_attributes.py): a kernel
compiled with `launch_pdl=True` or `launch_cooperative_grid=True` launches through
cuLaunchKernelEx with the matching CUlaunchAttribute, on the slow path and the hot path, and is
never bound; the driver is a stand-in that records the launch configuration (cuda-bindings'
own types). The launches on a GPU: tests/gpu/test_launch_attributes_gpu.py."""

import contextlib
import types

import pytest

from naiad.backends.nvidia import cubin_kernel, launch_attributes
from naiad.backends.nvidia import driver as cuda_driver
from naiad.runtime import cuda_launcher

cuda = pytest.importorskip("cuda.bindings.driver")
IDS = cuda.CUlaunchAttributeID
PDL, COOPERATIVE = (
    IDS.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
    IDS.CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
)
FIELDS = {PDL: "programmaticStreamSerializationAllowed", COOPERATIVE: "cooperative"}
CURRENT = [None]  # the context the stand-in driver says is current


@pytest.fixture
def launches(monkeypatch):
    """Each cuLaunchKernelEx as (grid, block, shared, stream, attributes, params address)."""
    made = []

    def launch_kernel_ex(config, handle, params, extra):
        attributes = []
        for attribute in list(config.attrs)[: config.numAttrs]:
            field = FIELDS[attribute.id]  # the value is a union: read the id's own member
            attributes.append((attribute.id, getattr(attribute.value, field)))
        grid = (config.gridDimX, config.gridDimY, config.gridDimZ)
        block = (config.blockDimX, config.blockDimY, config.blockDimZ)
        made.append((grid, block, config.sharedMemBytes, int(config.hStream), attributes, params))
        return (0,)

    fake = types.SimpleNamespace(
        CUlaunchConfig=cuda.CUlaunchConfig,
        CUlaunchAttribute=cuda.CUlaunchAttribute,
        CUlaunchAttributeID=IDS,
        cuLaunchKernelEx=launch_kernel_ex,
        cuCtxGetCurrent=lambda: (0, CURRENT[0]),
    )

    @contextlib.contextmanager
    def device_context(device):
        made.append(f"context of device {device}")
        yield

    monkeypatch.setattr(cuda_driver, "_cuda", lambda: fake)
    monkeypatch.setattr(cuda_driver, "context", lambda device: "device 0's context")
    monkeypatch.setattr(cuda_driver, "device_context", device_context)
    CURRENT[0] = "device 0's context"
    return made


FUNCTION = cuda_driver.Function(None, 0, 0, 0, 0, 0)


@pytest.mark.parametrize(
    "pdl, cooperative, expected",
    [
        (True, False, [(PDL, 1)]),
        (False, True, [(COOPERATIVE, 1)]),
    ],
    ids=["pdl", "cooperative"],
)
def test_the_options_become_launch_attributes(launches, pdl, cooperative, expected):
    wanted = launch_attributes.names(pdl, cooperative)
    launch = launch_attributes.fast_launch(FUNCTION, 256, 4096, wanted)
    launch(7, 2, 1, 55, 0xABC0)
    CURRENT[0] = "another device's context"  # the launch makes its device's current for it
    launch(3, 1, 1, 56, 0xDEF0)
    assert launches == [
        ((7, 2, 1), (256, 1, 1), 4096, 55, expected, 0xABC0),
        "context of device 0",
        ((3, 1, 1), (256, 1, 1), 4096, 56, expected, 0xDEF0),
    ]


def test_both_attributes_and_none():
    assert launch_attributes.names(True, True) == (
        launch_attributes.PDL,
        launch_attributes.COOPERATIVE,
    )
    assert launch_attributes.names(False, False) == ()


def test_a_kernel_with_attributes_launches_through_them_and_is_never_bound(launches, monkeypatch):
    """The slow path (CubinKernel.launch) and the hot path (fast_cuda_launch) both take
    cuLaunchKernelEx; a launch every parameter of which is taken would be bound, but not one
    with attributes (the bound launch makes cuLaunchKernel's call)."""
    wanted = launch_attributes.names(True, False)
    kernel = cubin_kernel.CubinKernel(b"", "k", ("*fp32", "i32"), attributes=wanted)
    monkeypatch.setattr(cubin_kernel.CubinKernel, "function", lambda self, device: FUNCTION)
    monkeypatch.setattr(cuda_driver, "current_device", lambda: 0)
    monkeypatch.setattr(cuda_driver, "launch", lambda *args: pytest.fail("cuLaunchKernel"))
    kernel.launch((4,), (0x1000, 9), 77)
    kernel.launch((0,), (0x1000, 9), 77)  # an empty grid launches nothing
    compiled = cuda_launcher._Compiled(kernel, None, (0,), {}, taken=(0, 1))
    launcher = types.SimpleNamespace(
        jit_function=None, kernels={}, _current_stream=lambda device: 78
    )
    monkeypatch.setattr(cuda_launcher, "globals_checker", lambda *args: None)
    fast = cuda_launcher.fast_cuda_launch(launcher, compiled, 0)
    assert not hasattr(fast, "bind")
    assert fast((5, 1, 1), (0x2000, 11)) is True
    pdl = [(PDL, 1)]
    assert [entry[:5] for entry in launches] == [
        ((4, 1, 1), (128, 1, 1), 0, 77, pdl),
        ((5, 1, 1), (128, 1, 1), 0, 78, pdl),
    ]
