"""What a kernel argument that is an array looks like to Naiad: address, storage, dtype, device.

Accepted: NumPy arrays, torch tensors (any device), objects with `__array_interface__`, objects
with `data_ptr()` and a `dtype` (and a way to know their size), and `naiad.reinterpret(x, dtype)`
wrappers that pass a buffer with another element type (as Triton's TensorWrapper).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..language import dtypes as t


class TensorWrapper:
    """`base` passed to a kernel as an array of `dtype` (e.g. uint16 bits read as fp8 pairs)."""

    def __init__(self, base, dtype):
        self.base = base
        self.dtype = dtype

    def data_ptr(self):
        return describe(self.base).data_ptr

    # The base's tensor surface, as Triton's TensorWrapper has it (its tests read strides and
    # move wrapped tensors between devices).
    @property
    def device(self):
        return getattr(self.base, "device", "cpu")

    @property
    def shape(self):
        return self.base.shape

    @property
    def data(self):
        return getattr(self.base, "data", self.base)

    @data.setter
    def data(self, value):
        """Rebinds the wrapped array (`w.data = w.data[:, :50]` narrows it to a view), as
        assigning a torch tensor's `.data` does; the dtype read in a kernel stays."""
        self.base = value

    def stride(self, *args):
        if hasattr(self.base, "stride"):
            return self.base.stride(*args)
        strides = tuple(s // self.base.itemsize for s in self.base.strides)
        return strides[args[0]] if args else strides

    def element_size(self):
        return max(1, self.dtype.primitive_bitwidth // 8)

    def cpu(self):
        return TensorWrapper(self.base.cpu(), self.dtype)

    def to(self, device):
        return TensorWrapper(self.base.to(device), self.dtype)

    def clone(self):
        return TensorWrapper(self.base.clone(), self.dtype)

    def copy_(self, other):
        self.base.copy_(other.base if isinstance(other, TensorWrapper) else other)

    def new_empty(self, sizes):
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)

    def __str__(self):
        return f"TensorWrapper[{self.dtype}]({self.base})"

    def __repr__(self):
        return f"TensorWrapper[{self.dtype}]({self.base!r})"


def reinterpret(tensor, dtype):
    """View `tensor`'s memory as elements of `dtype` in a kernel: a `naiad.language` dtype, or
    a host one (`torch.float8_e4m3fn`, `np.float16`), as Triton's `reinterpret` takes both."""
    if not isinstance(dtype, t.dtype):
        dtype = dtype_of_host_name(str(np.dtype(dtype) if _is_numpy_dtype(dtype) else dtype))
    if isinstance(tensor, TensorWrapper):
        return (
            tensor.base
            if dtype == describe(tensor.base).dtype
            else TensorWrapper(tensor.base, dtype)
        )
    return TensorWrapper(tensor, dtype)


@dataclass
class HostArray:
    """The facts of one array argument. `storage_base`/`storage_nbytes` bound what it may touch."""

    data_ptr: int
    dtype: t.dtype
    storage_base: int
    storage_nbytes: int
    device: str = "cpu"
    writable: bool = True
    owner: object = None  # the object to copy back to (a torch storage on a GPU), if any

    @property
    def itemsize(self) -> int:
        return max(1, self.dtype.primitive_bitwidth // 8)


def _is_numpy_dtype(dtype) -> bool:
    is_scalar_type = isinstance(dtype, type) and issubclass(dtype, np.generic)
    return isinstance(dtype, np.dtype) or is_scalar_type


def is_array_like(value) -> bool:
    return (
        isinstance(value, (np.ndarray, TensorWrapper))
        or _is_torch_tensor(value)
        or (hasattr(value, "__array_interface__") and not isinstance(value, np.generic))
        or (hasattr(value, "data_ptr") and hasattr(value, "dtype"))
    )


def _is_torch_tensor(value) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "untyped_storage")


def dtype_of_host_name(name: str) -> t.dtype:
    key = str(name).replace("torch.", "")
    try:
        return t.HOST_NAME_TO_DTYPE[key]
    except KeyError:
        raise TypeError(f"arrays of dtype {name} cannot be passed to a kernel") from None


def describe(value) -> HostArray:
    """The `HostArray` of an array-like kernel argument (TypeError if it is not one)."""
    if isinstance(value, TensorWrapper):
        inner = describe(value.base)
        inner.dtype = value.dtype
        return inner
    if _is_torch_tensor(value):
        storage = value.untyped_storage()
        return HostArray(
            value.data_ptr(),
            dtype_of_host_name(value.dtype),
            storage.data_ptr(),
            storage.nbytes(),
            value.device.type,
            True,
            storage,
        )
    if isinstance(value, np.ndarray) or hasattr(value, "__array_interface__"):
        array = np.asarray(value)
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        low, high = _byte_bounds(root)
        if not array.dtype.isnative:  # launches name the argument first (launch_checks.py)
            raise TypeError(
                f"arrays in non-native byte order (dtype '{array.dtype.str}') cannot be passed "
                "to a kernel"
            )
        return HostArray(
            array.__array_interface__["data"][0],
            dtype_of_host_name(array.dtype.name),
            low,
            high - low,
            "cpu",
            bool(array.flags.writeable),
        )
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        nbytes = _size_in_bytes(value)
        return HostArray(
            value.data_ptr(), dtype_of_host_name(value.dtype), value.data_ptr(), nbytes
        )
    raise TypeError(f"{type(value).__name__} is not an array")


def _byte_bounds(array: np.ndarray):
    try:
        from numpy.lib.array_utils import byte_bounds
    except ImportError:  # NumPy 1.x
        byte_bounds = np.byte_bounds
    return byte_bounds(array)


def _size_in_bytes(value) -> int:
    if hasattr(value, "nbytes"):
        nbytes = value.nbytes
        return int(nbytes() if callable(nbytes) else nbytes)
    if hasattr(value, "numel") and hasattr(value, "element_size"):
        return int(value.numel() * value.element_size())
    raise TypeError(
        f"cannot tell the size of a {type(value).__name__} (give it `nbytes` or "
        "`numel()` and `element_size()`)"
    )
