"""Naiad kernels in PyTorch programs: `naiad.torch.install()`, `wrap_triton` and `triton_op`.

torch recognises Triton kernels by Triton's own classes (`triton.runtime.jit.JITFunction`,
`triton.runtime.autotuner.Autotuner`): with Naiad standing in for Triton
(`naiad.install_as_triton()`, `python -m naiad.run`, or `install()` here) those are Naiad's, so
`torch.library.wrap_triton` and `torch.library.triton_op` take Naiad kernels as they are and
`torch.compile` records their launches in its graph, as for Triton's. The helpers here work
either way:

    import naiad.torch

    @naiad.torch.triton_op("mylib::add", mutates_args=())
    def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        naiad.torch.wrap_triton(add_kernel)[(triton.cdiv(x.numel(), 256),)](x, y, out,
                                                                             x.numel(), 256)
        return out

- switched on, they are torch's own `triton_op` and `wrap_triton` (the launch is a node of the
  traced graph; Inductor compiles the kernel with the rest);
- switched off (a real Triton imported, or none wanted), `triton_op` is a
  `torch.library.custom_op` whose fake implementation runs the function on fake tensors with
  every launch skipped, so `torch.compile(fullgraph=True)` traces a call to the op without a
  graph break, and `wrap_triton` launches the kernel directly (in eager code and inside such an
  op). A `wrap_triton` launch traced by `torch.compile` outside a `triton_op` needs the switch.

`install(cpu_backend="triton")` also makes Inductor generate Triton kernels for CPU tensors,
compiled by Naiad's CPU back end (docs/pytorch.md).
"""

from __future__ import annotations

from .custom_ops import install, triton_op, wrap_triton

__all__ = ["install", "triton_op", "wrap_triton"]
