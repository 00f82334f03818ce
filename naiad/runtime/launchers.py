"""Which back end runs a launch, and the launcher each JIT function keeps per back end.

A launch with arrays on a device of type T (a torch tensor's `device.type`: 'cuda'; NumPy arrays
and CPU tensors: 'cpu') runs on the back end that declares `device_type` T (backends/registry.py)
through that back end's launcher, named by the back end as `"module:attribute"` and made once
per JIT function. A launcher has `launch(bound, grid, options, debug, strict)`, which returns the
launch it prepared for the hot path (None: none) or `INTERPRET` (nothing ran: the interpreter
runs the kernel); `compiled(bound, options, debug)`, the CompiledKernel that launch ran (what
`kernel[grid](...)` returns, as does a prepared launch that ran); and `forget()`, which drops
what it compiled.
"""

from __future__ import annotations

import importlib

from ..backends import registry
from .tensor_descriptor import TensorDescriptor
from .tuple_arguments import all_leaves

# What `launch` returns when the kernel is to run in the interpreter instead.
INTERPRET = object()


def _arrays(bound: dict):
    """The arguments that are arrays or tensors (a descriptor's base for the descriptor), in
    order, those in tuples included."""
    for value in all_leaves(bound.values()):
        if isinstance(value, TensorDescriptor):
            value = value.base
        if hasattr(value, "data_ptr") or hasattr(value, "__array_interface__"):
            yield value


def device_of(bound: dict) -> tuple[str, int]:
    """The device type and index the arguments live on (in tuples too): the first tensor's
    that is not in host memory (the launcher checks that the others agree), else ('cpu', 0)
    for host arrays. A launch with no array at all (scalars, or types for `warmup`) runs
    where Triton's would, on the active driver's device (runtime/driver.py: the current GPU
    where one is present, else the CPU), so a kernel that only prints or asserts shows the
    GPU's behaviour on a GPU machine."""
    held = False
    for value in _arrays(bound):
        held = True
        device = getattr(value, "device", None)
        kind = getattr(device, "type", None)
        if kind is not None and kind != "cpu" and hasattr(value, "data_ptr"):
            return kind, getattr(device, "index", None) or 0
    if held:
        return "cpu", 0
    from .driver import active  # the CUDA driver's module only where such a launch asks

    return active.get_current_target().backend, active.get_current_device()


def holds_memory(bound: dict) -> bool:
    """Whether any argument is an array or tensor (a descriptor's base included), rather than
    only types and signature strings (`warmup`)."""
    return next(_arrays(bound), None) is not None


def backend_for_launch(bound: dict):
    """The back end a launch with these arguments runs on, and its device index; None when
    no back end runs on their device."""
    kind, index = device_of(bound)
    backend = registry.for_device(kind)
    return (backend, index) if backend is not None else (None, index)


def make_launcher(jit_function, backend):
    """A new launcher of `backend` for `jit_function` (None: the back end only compiles)."""
    if backend.launcher is None:
        return None
    module, _, attribute = backend.launcher.partition(":")
    return getattr(importlib.import_module(module), attribute)(jit_function, backend)
