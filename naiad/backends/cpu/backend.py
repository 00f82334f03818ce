"""The CPU back end as the runtime sees it (backends/registry.py): targets `cpu` (this machine)
and `cpu:aarch64` (compiled ahead of time), the stages of compiler.py, and the launcher that
links the object code into the process and runs the grid on the worker pool.

compiler.py (and with it the Linalg conversion and the code generator) is imported when a
kernel is compiled, not when the back end is registered: a process that only loads cached
kernels never imports it."""

from __future__ import annotations

from ...language.target import CUDA_HOPPER, GPUTarget
from ..registry import Backend, register_backend
from .target import CpuTarget, cpu_target


class _Stages(dict):
    """A CPU kernel's `asm`: every stage's text, the assembly made the first time it is read
    (it is a second code generation, which most users never ask for)."""

    def __init__(self, stages: dict, target: CpuTarget):
        super().__init__(stages)
        self._target = target

    def __missing__(self, stage: str) -> str:
        if stage != "asm" or "llir" not in self:
            raise KeyError(stage)
        from . import compiler

        self[stage] = text = compiler.assembly(self["llir"], self._target)
        return text


class CpuBackend(Backend):
    name = "cpu"
    prefixes = ("cpu",)
    device_type = "cpu"
    launcher = "naiad.runtime.cpu_launcher:CpuLauncher"
    binary_stage = "obj"

    def parse_target(self, name: str) -> CpuTarget:
        return cpu_target(name)

    def language_target(self, target: CpuTarget, options):
        """The language's rules for the CPU: any dot shape, IEEE dots by default (there is no
        tf32 here), every fp8 format (AMD's fp8e4b8 and fp8e5b16 too, as Triton's CPU
        interpreter takes them) and conversion, and every fp8 format as a dot operand
        (fp8e4b15 too, which Hopper's tensor cores lack: the CPU's dot converts its operands
        anyway). No bulk tensor reduction: a tensor descriptor's fp16/bf16 atomic min/max is
        refused, as Triton refuses it off Hopper."""
        return CUDA_HOPPER.with_options(
            name=target.name,
            backend="cpu",
            arch=0,
            default_dot_input_precision="ieee",
            deprecated_fp8_dot_operand_dtypes=(),
            supported_fp8_dtypes=("fp8e5", "fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5b16"),
            debug=options.assertions,
            sanitize_overflow=options.sanitize_overflow,
            num_warps=options.num_warps,
            bulk_tensor_reduce=False,
            gpu_target=GPUTarget("cpu", target.triple, 1),
        )

    def stages(self, target, options):
        """The stages, their modules loaded (the Linalg converters too, which the first
        conversion would import): the runtime asks before it takes the compile lock."""
        from ...middle.linalg.conversion import load_converters
        from . import compiler

        load_converters()
        return list(compiler.STAGES)

    def cache_facts(self, target: CpuTarget, options) -> dict:
        return {"target": target.description(), "debug": bool(options.debug)}

    def device_target(self, index: int) -> str:
        return "cpu"

    def kernel_asm(self, asm: dict, target: CpuTarget) -> dict:
        return _Stages(asm, target)


register_backend(CpuBackend())
