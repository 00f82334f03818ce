"""What a JIT function shows of its compiled kernels, as Triton's does: `preload`, which
compiles a specialization the JIT cache hook recorded (jit_hooks.py), and `device_caches`,
the kernels loaded per device, which a program may empty.

    data = None
    def record(**kwargs): data = kwargs["compile"]["specialization_data"]
    triton.knobs.runtime.jit_cache_hook = record
    kernel.warmup(x, grid=(1,))          # compiled: `record` keeps its data (JSON text)
    kernel.preload(data)                 # the same CompiledKernel (the same `hash`), later

A preload compiles through the disk cache, so in a later process it loads the kernel rather
than compiling it; a launch then finds it there. It calls no hook.
"""

from __future__ import annotations

from ..backends import registry
from . import specialization_data
from .compiler import compile_specialization


class Preloading:
    """`preload` and `device_caches` of a JIT function (jit.py's JITFunction)."""

    def preload(self, data: str):
        """The CompiledKernel of the specialization `data` describes (the JIT cache hook's
        `compile["specialization_data"]`), compiled or read from the disk cache."""
        spec, target, options = specialization_data.loads(self, data)
        return compile_specialization(self, spec, target, options)

    @property
    def device_caches(self) -> DeviceCaches:
        """The kernels loaded per device: `device_caches[device][0]` is the table of the
        device's back end (`'cpu'`, a GPU's index or a torch device), which `clear()` empties."""
        return DeviceCaches(self)


class DeviceCaches:
    """A JIT function's loaded kernels by device (Triton's `device_caches`)."""

    def __init__(self, jit_function):
        self._jit_function = jit_function

    def clear(self) -> None:
        """Drop the kernels loaded on every device (`forget_compiled`)."""
        self._jit_function.forget_compiled()

    def __getitem__(self, device) -> tuple:
        kind = getattr(device, "type", device)
        backend = registry.for_device("cpu" if kind == "cpu" else "cuda")
        if backend is None:
            raise KeyError(device)
        return (LoadedKernels(self._jit_function, backend),)


class LoadedKernels:
    """The kernels one back end's launcher of a JIT function has loaded."""

    def __init__(self, jit_function, backend):
        self._jit_function, self._backend = jit_function, backend

    def _launcher(self):
        return self._jit_function._launchers.get(self._backend.name)

    def __len__(self) -> int:
        launcher = self._launcher()
        return 0 if launcher is None else len(launcher.kernels)

    def clear(self) -> None:
        """Drop them (and the launches prepared with them): the next launch compiles again,
        or loads from the disk cache."""
        launcher = self._launcher()
        if launcher is not None:
            launcher.forget()
        self._jit_function._forget_launches()
