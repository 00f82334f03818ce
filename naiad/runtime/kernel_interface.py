"""`KernelInterface`: what every launchable object shares, so decorators can stack on each other.

A jit function, an `Autotuner` and a `Heuristics` all take `run(*args, grid, warmup=False,
**kwargs)` and are launched as `kernel[grid](*args, **kwargs)`; each also exposes `arg_names` (the
kernel's parameters, in order) and `fn` (what it wraps).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from .. import errors, knobs

# The launcher is compiled under a pseudo file name, so that a kernel error (already located at the
# user's line, see diagnostics.py) leaves Naiad through a frame that is not one of Naiad's files:
# the traceback a user sees then holds their own frames only, unless NAIAD_TRACEBACK=1.
_LAUNCHER_SOURCE = """
def make_launcher(run, grid, located_error, show_traceback):
    def launch(*args, **kwargs):
        try:
            return run(*args, grid=grid, warmup=False, **kwargs)
        except located_error as error:
            if show_traceback():
                raise
            raise error.with_traceback(None) from None
    return launch
"""
_namespace: dict = {}
exec(compile(_LAUNCHER_SOURCE, "<naiad launch>", "exec"), _namespace)
_make_launcher = _namespace["make_launcher"]


class KernelInterface(ABC):
    """Base of launchable kernels: `kernel[grid](*args)` means `kernel.run(*args, grid=grid)`."""

    arg_names: list[str]

    @abstractmethod
    def run(self, *args, grid, warmup=False, **kwargs):
        """Launch (or, with `warmup=True`, only compile) the kernel over `grid`."""

    def __getitem__(self, grid):
        """Bind a launch grid: a tuple of up to 3 ints, or a callable of the meta-parameters."""
        return _make_launcher(self.run, grid, errors.CompilationError, knobs.traceback.get)
