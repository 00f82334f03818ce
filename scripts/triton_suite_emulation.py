"""A pytest plugin of scripts/triton_suite.py (`--ptx-target cuda:sm_90a`): Triton's tests take
their CUDA branches on a machine without a GPU. Kernels run on the CPU (the values a test
checks are the CPU's), and the compiled kernel a launch or `warmup` returns is a compile for
the target, so the PTX, TTGIR and LLVM IR a test reads back are the GPU's; `is_cuda()` is true
and the capability is the target's.

What it finds are the GPU's compile errors and the IR shapes the tests check (which MMA, which
qualifiers, vector widths), not what only running on a GPU shows. Loaded before the test
module is imported (`-p triton_suite_emulation`, with NAIAD_SUITE_PTX_TARGET set), so the
predicates the test module imports by name are these.

A test that makes its tensors with `device="cuda"` (test_warp_specialization's matmuls and its
cuBLAS reference) gets CPU tensors: a function mode moves every CUDA device a torch call
names to the CPU, `torch.cuda.is_available()` is true, and the device's properties are an
H200's (132 multiprocessors, for persistent grids).
"""

from __future__ import annotations

import functools
import os
from types import SimpleNamespace

import torch
from torch.overrides import TorchFunctionMode

import naiad.triton._internal_testing as testing
from naiad.backends.cpu.backend import CpuBackend
from naiad.runtime.jit import JITFunction

TARGET = os.environ["NAIAD_SUITE_PTX_TARGET"]
_ARCH = int("".join(ch for ch in TARGET.split(":sm_")[1] if ch.isdigit()))
_CAPABILITY = (_ARCH // 10, _ARCH % 10)

testing.is_cuda = lambda: True
testing._capability = lambda: _CAPABILITY[0]
torch.cuda.get_device_capability = lambda *args, **kwargs: _CAPABILITY
torch.cuda.get_device_name = lambda *args, **kwargs: f"emulated {TARGET}"

_run = JITFunction.run


def _run_reading_the_target(self, *args, grid, warmup=False, **kwargs):
    """Launch on the CPU (unless a warmup), then return the target's compile of the kernel;
    a launch or warmup that names its own target (or Triton's `arch`) is left alone."""
    if kwargs.get("target") or kwargs.get("arch"):
        return _run(self, *args, grid=grid, warmup=warmup, **kwargs)
    if not warmup:
        _run(self, *args, grid=grid, **kwargs)
    return _run(self, *args, grid=grid, warmup=True, target=TARGET, **kwargs)


JITFunction.run = _run_reading_the_target
# `kernel[grid](...)` goes through `run` too: the launch entry's hot path would return the
# CPU's compile of a specialization launched before.
JITFunction.__getitem__ = lambda self, grid: functools.partial(self.run, grid=grid)

_cpu_rules = CpuBackend.language_target


def _cpu_rules_with_the_targets_reductions(self, target, options):
    """The CPU's language rules, with the target's bulk tensor reduction: a tensor
    descriptor's fp16/bf16 atomic min/max, which Triton takes on sm_90 and refuses on a CPU,
    runs here when the target has it (the CPU computes it as the GPU does)."""
    rules = _cpu_rules(self, target, options)
    return rules.with_options(bulk_tensor_reduce=_ARCH >= 90)


CpuBackend.language_target = _cpu_rules_with_the_targets_reductions


def _on_the_cpu(value):
    """`value`, or the CPU where it names a CUDA device."""
    if isinstance(value, torch.device) and value.type == "cuda":
        return torch.device("cpu")
    if isinstance(value, str) and value.split(":")[0] == "cuda":
        return "cpu"
    return value


class _CudaOnTheCpu(TorchFunctionMode):
    """Every torch call that names a CUDA device names the CPU instead; `Tensor.cuda()` keeps
    the tensor where it is."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.cuda:
            return args[0]
        args = tuple(_on_the_cpu(arg) for arg in args)
        kwargs = {name: _on_the_cpu(value) for name, value in (kwargs or {}).items()}
        return func(*args, **kwargs)


_H200 = SimpleNamespace(
    name=f"emulated {TARGET}",
    major=_CAPABILITY[0],
    minor=_CAPABILITY[1],
    multi_processor_count=132,
    total_memory=141 * 2**30,
)
torch.cuda.is_available = lambda: True
torch.cuda.get_device_properties = lambda *args, **kwargs: _H200
torch.cuda.synchronize = lambda *args, **kwargs: None
_CudaOnTheCpu().__enter__()
