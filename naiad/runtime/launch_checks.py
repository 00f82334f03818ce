"""Checks of a launch's arguments that every back end shares, made before any of them sees the
arguments (jit.py's slow path), so the interpreter, the CPU and the GPU refuse alike and name the
argument.

- A string is no launch value: `warmup()` reads `'*fp32'` or `'i32'` as a signature, but a
  launch would pass it to the back end as a pointer or an integer (the CPU path failed in
  `int()` or in the signature parser, with no argument named).
- A MockTensor stands for a tensor by its dtype alone (mock_tensor.py): nothing to launch on.
- An array in non-native byte order (NumPy's `'>f4'` on a little-endian host) is refused: every
  back end reads native numbers, so the kernel would see its bytes swapped, and torch, Triton's
  array type, has no such dtype to follow. A copy in native order is the fix the message gives.

NumPy views with negative strides are accepted, as any strided view: the kernel receives the
address of element [0] (for `a[::-1]`, the last element of `a`'s buffer) and walks the view with
the strides it is given (`a.strides[0] // a.itemsize`, negative), which gives the same values on
every back end. A kernel that walks it with positive offsets instead leaves the array, which the
interpreter and debug mode report naming the argument, as any out-of-bounds access; outside
debug mode it is undefined, as in Triton. (torch has no negative strides: `torch.from_numpy`
refuses such a view.)

The launch hot path never meets what is refused here: a string, a MockTensor and an object
that is only array-like take the slow path, and a NumPy array's dtype, byte order included, is
part of its key (binder.py), so a big-endian array never finds a launch prepared for a native
one.
"""

from __future__ import annotations

import sys

import numpy as np

from .host_arrays import TensorWrapper
from .mock_tensor import MockTensor
from .tensor_descriptor import TensorDescriptor
from .tuple_arguments import leaves

_VALUES = "an array, a tensor, an int, a float, a bool or None"


def check_arguments(kernel_name: str, params, bound: dict) -> None:
    """Raise TypeError, naming the kernel and the argument, for a launch argument (a tuple's
    leaf too) that no back end may receive (see the module doc). Constexpr parameters take any
    value."""
    for param in params:
        if param.is_constexpr:
            continue
        for name, value in leaves(param.name, bound[param.name]):
            if isinstance(value, (str, bytes)):
                raise TypeError(
                    f"{kernel_name}: argument `{name}`: expected {_VALUES}, got "
                    f"{type(value).__name__} {value!r} (signature strings such as '*fp32' "
                    "describe arguments to `warmup()` only)"
                )
            if isinstance(value, MockTensor):
                raise TypeError(
                    f"{kernel_name}: argument `{name}`: a MockTensor has no data to launch on "
                    "(it stands for a tensor in `warmup()` and compiles only)"
                )
            problem = byte_order_problem(value)
            if problem is not None:
                raise TypeError(f"{kernel_name}: argument `{name}`: {problem}")


def byte_order_problem(value) -> str | None:
    """What is wrong with an array argument (a descriptor's or a reinterpreted array's base
    included) whose elements are not in this machine's byte order; None if nothing is."""
    if isinstance(value, TensorDescriptor):
        value = value.base
    while isinstance(value, TensorWrapper):
        value = value.base
    if not isinstance(value, np.ndarray):
        if not hasattr(value, "__array_interface__") or isinstance(value, np.generic):
            return None
        value = np.asarray(value)
    dtype = value.dtype
    if dtype.isnative:
        return None
    order = "big" if dtype.byteorder == ">" else "little"
    return (
        f"expected an array in this machine's byte order ({sys.byteorder}-endian), got a "
        f"{order}-endian {dtype.name} array (dtype '{dtype.str}'): kernels read native numbers; "
        "pass `x.astype(x.dtype.newbyteorder('='))`"
    )
