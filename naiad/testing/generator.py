"""Random kernels for differential testing: a seed becomes a small expression graph over `tl`
operations (`generator_graph`), which renders to the source of a whole `@naiad.jit` function,
written to a real file and imported from it, so that error locations and `inspect.getsource`
work as for any kernel.

    case = load_kernel(random_kernel(7), tmp_path)     # tmp_path/generated_7.py
    run_differential(case.kernel, case.make_args, case.grid, tolerance=case.tolerance, seed=7)

A kernel is 1-D (`BLOCK` lanes per program) or 2-D (`BLOCK_M` rows by `BLOCK_N` columns, with
row and column vectors broadcast through `[None, :]` and `[:, None]`). It loads its inputs under
`offs < n` masks with `other=`, applies elementwise operations (arithmetic, comparisons, `where`,
casts between integer and float dtypes including fp16 and bf16, bit reinterpretations, math
functions on safe domains, minimum/maximum), reduces along an axis (sum, max, min, argmax,
argmin, xor_sum), runs at most one `for` loop over a runtime trip count with loop-carried
accumulators and at most one `if` on a runtime scalar, and stores every value nothing else read.
In 2-D, half of the loops also read a carried vector through a broadcast before they update it
(`generator_build.carried_view`, issue 13).
About half of the kernels also load and store through offsets and masks made of runtime scalars
cast to narrower or unsigned dtypes (generator_casts.py), and a quarter run a K loop of `tl.dot`
on loaded tiles into a carried accumulator, with its own arguments (generator_dots.py).

A value made by an inexact operation (a transcendental function, a float sum, fp32 division) is
only ever stored: the tolerance table bounds one operation, not a chain, so each output is held
to the row of the operation that made it, and everything before that operation is exact. Loop
and branch bodies use exact operations only, for the same reason. (A back end that contracts
`a * b + c` into a fused multiply-add rounds once where the interpreter rounds twice; such a
back end registers its executor with that in mind.)
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .generator_build import random_kernel
from .generator_graph import KernelSpec
from .generator_render import arguments, dot_loops, programs, render

__all__ = ["GeneratedKernel", "KernelSpec", "load_kernel", "random_kernel", "render"]


@dataclass(frozen=True)
class GeneratedKernel:
    """A generated kernel, imported: the jit function, the file it lives in, and what
    `run_differential` needs to launch it."""

    spec: KernelSpec
    kernel: object  # the JITFunction
    path: Path

    def make_args(self, rng: np.random.Generator) -> dict:
        """Every argument of one launch, drawn from `rng`."""
        return arguments(self.spec, rng)

    def grid(self, args: dict) -> tuple[int]:
        """The launch grid for `args` (one program per `BLOCK` or `BLOCK_M` rows)."""
        return (programs(self.spec, args),)

    @property
    def tolerance(self) -> dict:
        """The tolerance row (and reduction length) of every output, by argument name."""
        rows = {s.output: (s.value.row, s.value.k) for s in self.spec.stores}
        for loop in dot_loops(self.spec):
            rows.update(loop.tolerance)
        return rows


def load_kernel(spec: KernelSpec, directory) -> GeneratedKernel:
    """Write `spec`'s source to `directory/<name>.py`, import it, and return the kernel."""
    path = Path(directory) / f"{spec.name}.py"
    path.write_text(render(spec))
    module_spec = importlib.util.spec_from_file_location(f"naiad_{spec.name}", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return GeneratedKernel(spec, getattr(module, spec.name), path)
