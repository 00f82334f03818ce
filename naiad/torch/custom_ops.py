"""`install`, `triton_op` and `wrap_triton` for PyTorch programs (the package docstring says
what each does with Naiad standing in for Triton and without it)."""

from __future__ import annotations

import contextvars
import functools
import sys

from ..as_triton import install_as_triton, is_installed
from ..run import switch_on_child_processes

# Set while a `triton_op`'s fake implementation runs: its launches have nothing to compute.
_faking = contextvars.ContextVar("naiad_torch_faking", default=False)


def install(cpu_backend: str | None = None) -> None:
    """Make torch see Naiad as Triton: `naiad.install_as_triton()`, the Python processes this
    one starts switched on too, and Inductor compiling its kernels in this process (its worker
    processes pickle Triton kernels, which Naiad's do not survive). With `cpu_backend="triton"`,
    Inductor generates Triton kernels for CPU tensors too, which Naiad compiles for the CPU.

    Call it before the first `torch.compile` runs: torch decides once whether Triton exists.

    Raises:
        RuntimeError: torch's Inductor already looked for Triton and did not find it.
    """
    compat = sys.modules.get("torch._inductor.runtime.triton_compat")
    if compat is not None and not compat.HAS_TRITON:
        raise RuntimeError(
            "torch's Inductor looked for Triton before naiad.torch.install(): call it before "
            "the first torch.compile (or run the program with `python -m naiad.run`)"
        )
    install_as_triton()
    switch_on_child_processes()
    if cpu_backend is not None:
        from torch._inductor import config

        config.cpu_backend = cpu_backend


def wrap_triton(kernel):
    """`torch.library.wrap_triton(kernel)` where Naiad stands in for Triton (the launch becomes
    a node of the traced graph); otherwise an object launched as the kernel is,
    `wrap_triton(kernel)[grid](*args)`, that runs it directly and skips the launch inside a
    `triton_op`'s fake implementation."""
    if is_installed():
        import torch

        return torch.library.wrap_triton(kernel)
    if not hasattr(kernel, "run") or not hasattr(kernel, "arg_names"):
        raise TypeError(
            f"wrap_triton needs a @naiad.jit, @autotune or @heuristics kernel, got "
            f"{type(kernel).__name__}"
        )
    return _DirectLaunch(kernel)


class _DirectLaunch:
    """A kernel launched directly (Naiad not standing in for Triton)."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        return functools.partial(self._launch, grid)

    def _launch(self, grid, *args, **kwargs):
        import torch

        if torch.compiler.is_dynamo_compiling():  # traced by Dynamo, not run
            raise RuntimeError(
                f"torch.compile traced a launch of `{self.kernel.fn.__name__}` through "
                "naiad.torch.wrap_triton outside a naiad.torch.triton_op: put the launch in "
                "a triton_op, or call naiad.torch.install() first so that torch records "
                "Naiad kernels as Triton kernels"
            )
        if _faking.get():
            return None
        return self.kernel[grid](*args, **kwargs)


def triton_op(name: str, fn=None, /, *, mutates_args, schema: str | None = None):
    """A torch custom operator `name` ("namespace::op") implemented by `fn`, which launches
    kernels through `wrap_triton`: `torch.library.triton_op` where Naiad stands in for
    Triton, else a `torch.library.custom_op` whose fake implementation runs `fn` on fake
    tensors with its launches skipped. Either way the result takes `register_autograd`,
    `register_fake` and the rest of torch's custom-op surface."""
    import torch

    def decorate(fn):
        if is_installed():
            return torch.library.triton_op(name, fn, mutates_args=mutates_args, schema=schema)
        op = torch.library.custom_op(name, fn, mutates_args=mutates_args, schema=schema)

        @functools.wraps(fn)
        def fake(*args, **kwargs):
            token = _faking.set(True)
            try:
                return fn(*args, **kwargs)
            finally:
                _faking.reset(token)

        op.register_fake(fake)
        return op

    return decorate if fn is None else decorate(fn)
