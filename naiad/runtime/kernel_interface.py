"""`KernelInterface`: what every launchable object shares, so decorators can stack on each other.

A jit function, an `Autotuner` and a `Heuristics` all take `run(*args, grid, warmup=False,
**kwargs)` and are launched as `kernel[grid](*args, **kwargs)`; each also exposes `arg_names` (the
kernel's parameters, in order) and `fn` (what it wraps). Naiad's three pickle by reference to
where their kernel is defined (pickling.py's `PicklesByReference`); a library's own subclass of
this interface (Inductor's `CachingAutotuner`) pickles as its class says.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod

from .. import errors, knobs
from .pickling import KernelReference


class KernelInterface(ABC):
    """Base of launchable kernels: `kernel[grid](*args)` means `kernel.run(*args, grid=grid)`."""

    arg_names: list[str]

    @abstractmethod
    def run(self, *args, grid, warmup=False, **kwargs):
        """Launch (or, with `warmup=True`, only compile) the kernel over `grid`."""

    @property
    def reference(self) -> KernelReference:
        """Where the kernel is defined (that of the kernel this object wraps)."""
        return self.fn.reference

    def warmup(self, *args, grid, **kwargs):
        """Compile for these arguments without running (`run(..., warmup=True)`)."""
        return self.run(*args, grid=grid, warmup=True, **kwargs)

    def __getitem__(self, grid):
        """Bind a launch grid: a tuple of up to 3 ints, or a callable of the meta-parameters."""
        # Kernel errors leave through `<naiad launch>`, so users see only their own frames.
        launch = functools.partial(self.run, grid=grid, warmup=False)
        return errors.user_facing(launch, knobs.traceback.get, "<naiad launch>")
