"""TTIR → Linalg: the hardware-neutral middle layer (triton-shared's design, in Naiad).

`convert_module` turns each kernel into a `func.func` over upstream MLIR's `linalg`, `tensor`,
`memref`, `bufferization`, `arith`, `math`, `scf` and `cf` dialects; the pass `tt-to-linalg`
does the same in place (`naiad-opt kernel.ttir -p tt-to-linalg`). The rooms:

    pointer_analysis.py   which pointer blocks are strided views of an argument
    mask_analysis.py      which masks are prefix boxes
    index_expr.py         the symbolic offsets both reason with
    conversion.py         the driver, value maps and the converter table
    convert_*.py          the converters, one family of ops each
    functions.py          functions, control flow and program ids
    emit.py               how each upstream op is built
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
    """Convert every TTIR kernel of the module to the Linalg form (see the package)."""

    def run(self, module: Operation) -> None:
        converted = convert_module(module)
        body = module.regions[0].entry_block
        for op in list(body):
            op.erase()
        for op in list(converted.regions[0].entry_block):
            body.append(op.detach())
