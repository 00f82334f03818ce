"""The language tests on the GPU: NumPy arrays to torch CUDA tensors for a launch, and back.

A test hands a kernel NumPy arrays, often views (a column, every other element, a reversed
array), and passes their strides itself. So each array's whole underlying buffer goes to the
device once per launch, as bytes, and the kernel gets a tensor of the array's dtype starting at
the array's first element, anywhere in that buffer; after the launch (synchronized) the buffer
comes back into the same memory. Arrays sharing a buffer share its device copy, so aliasing
between arguments is preserved. bfloat16 and fp8 arrays (ml_dtypes) are the torch dtypes of the
same bits.

A launch in debug mode is skipped: a failing one ends in a device-side assert (a bounds check
or device_assert), which leaves the CUDA context unusable for the tests after it (the GPU's
debug mode is tested in a subprocess, tests/gpu/test_debug_gpu.py).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from naiad import knobs

try:
    import torch
except ImportError:  # the CPU-only CI has torch; a bare environment may not
    torch = None

_TORCH_DTYPES = {
    np.dtype(bool): "bool",
    np.dtype(np.int8): "int8",
    np.dtype(np.int16): "int16",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.uint16): "uint16",
    np.dtype(np.uint32): "uint32",
    np.dtype(np.uint64): "uint64",
    np.dtype(np.float16): "float16",
    np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
    np.dtype(ml_dtypes.bfloat16): "bfloat16",
    np.dtype(ml_dtypes.float8_e4m3fn): "float8_e4m3fn",
    np.dtype(ml_dtypes.float8_e5m2): "float8_e5m2",
}


def cuda_available() -> bool:
    return torch is not None and torch.cuda.is_available()


def _root(array: np.ndarray) -> np.ndarray:
    """The array owning the memory `array` views."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


class _Buffers:
    """The device copies of the host buffers of one launch."""

    def __init__(self):
        self.copies: dict[int, tuple[np.ndarray, object]] = {}

    def tensor(self, array: np.ndarray):
        root = _root(array)
        if root.flags.f_contiguous and not root.flags.c_contiguous:
            root = root.T  # the same memory, seen in C order
        if not root.flags.c_contiguous:  # a buffer we cannot see as bytes: copy the array
            root = array = np.ascontiguousarray(array)
        key = id(root)
        if key not in self.copies:
            host = torch.from_numpy(root.reshape(-1).view(np.uint8))
            self.copies[key] = (root, host.to("cuda"))
        _, device = self.copies[key]
        offset = _address(array) - _address(root)
        itemsize = array.dtype.itemsize
        count = (device.numel() - offset) // itemsize
        typed = device[offset : offset + count * itemsize]
        return typed.view(getattr(torch, _TORCH_DTYPES[array.dtype]))

    def copy_back(self) -> None:
        torch.cuda.synchronize()
        for root, device in self.copies.values():
            if root.flags.writeable:
                root.reshape(-1).view(np.uint8)[...] = device.cpu().numpy()


def launch_on_cuda(run):
    """`JITFunction.run` with NumPy array arguments moved to the GPU and back."""

    def run_on_cuda(self, *args, grid, warmup=False, target=None, **kwargs):
        if warmup:
            return run(self, *args, grid=grid, warmup=warmup, target=target, **kwargs)
        if kwargs.get("debug") or self.debug or knobs.debug.get():
            pytest.skip("debug mode on the GPU is tested in a subprocess (tests/gpu)")
        buffers = _Buffers()

        def move(value):
            if isinstance(value, np.ndarray) and value.dtype in _TORCH_DTYPES:
                return buffers.tensor(value)
            if isinstance(value, tuple):  # a tuple argument's arrays (a NamedTuple keeps its class)
                items = [move(v) for v in value]
                return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
            return value

        args = [move(a) for a in args]
        kwargs = {k: move(v) for k, v in kwargs.items()}
        result = run(self, *args, grid=grid, warmup=warmup, target=target, **kwargs)
        buffers.copy_back()
        return result

    return run_on_cuda
