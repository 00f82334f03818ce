"""TTIR → Linalg: the hardware-neutral middle layer (triton-shared's design, in Naiad).

`convert_module` turns each kernel into a `func.func` over upstream MLIR's `linalg`, `tensor`,
`memref`, `bufferization`, `arith`, `math`, `scf` and `cf` dialects; the pass `tt-to-linalg`
does the same in place (`naiad-opt kernel.ttir -p tt-to-linalg`). The rooms:

    pointer_analysis.py   which pointer blocks are strided views of an argument (loop-carried
                          ones included)
    strided.py            the states it gives them: affine offsets, rows wrapping around `% M`
    mask_analysis.py      which masks are boxes
    index_expr.py         the symbolic offsets both reason with
    bounds_checks.py      every access checked against its argument's extent (`bounds`)
    conversion.py         the driver, value maps and the converter table; runtime declarations
    convert_*.py          the converters, one family of ops each (descriptors included)
    functions.py          functions, program ids and branches
    control_flow.py       scf loops and ifs, pointers carried as offsets or as their start
    emit.py               how the shared upstream pieces are built (index arithmetic, generics,
                          loops); emit_tensor.py, emit_memory.py, emit_atomics.py: the rest

An op the layer cannot lower is a `ConversionError`, the user's `KernelNotImplementedError` at
the op's source line (naiad/passes/diagnostics.py); anything else that fails is a bug of the
layer, which the pass manager reports as Naiad's InternalError.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import Operation, register_pass
from ...ir.passes import Pass
from .conversion import ConversionError, convert_module

__all__ = ["ConversionError", "TritonToLinalg", "convert_module"]


@register_pass("tt-to-linalg")
@dataclass(frozen=True)
class TritonToLinalg(Pass):
    """Convert every TTIR kernel of the module to the Linalg form (see the package); with
    `bounds`, every access is checked against its argument's extent (bounds_checks.py), which
    the kernel then takes after its arguments (the CPU back end always asks for it)."""

    bounds: bool = False

    def run(self, module: Operation) -> None:
        converted = convert_module(module, self.bounds)
        body = module.regions[0].entry_block
        for op in list(body):
            op.erase()
        for op in list(converted.regions[0].entry_block):
            body.append(op.detach())
