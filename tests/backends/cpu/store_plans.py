"""The CPU back end's store plan of a kernel (codegen/store_plan.py), for tests that check how
the code it will emit reads and writes its tiles: the kernel compiled for the CPU, its Linalg
run through the CPU pipeline, the plan of its one function."""

from __future__ import annotations

from naiad.backends.cpu.codegen.store_plan import plan_stores
from naiad.backends.cpu.compiler import CPU_PIPELINE
from naiad.ir.parser import parse_module
from naiad.passes.pipeline import run_pipeline


def planned(kernel, *signature, **constants):
    """The store plan of `kernel` compiled for these arguments (arrays or type strings)."""
    compiled = kernel.warmup(*signature, grid=(1,), target="cpu", **constants)
    module = parse_module(compiled.asm["linalg"])
    run_pipeline(CPU_PIPELINE, module)
    (function,) = [op for op in module.walk() if op.name == "func.func" and op.regions[0].blocks]
    return plan_stores(function)
