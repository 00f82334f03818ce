"""Elementwise ops: on scalars they are copied as they are; on tensors each becomes a
`linalg.generic` over the result's shape whose body is the same op on the elements.

    %r = arith.addf %a, %b : tensor<1024xf32>
  becomes
    %e = tensor.empty() : tensor<1024xf32>
    %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
           ins(%a, %b : ...) outs(%e : ...) { ^bb0(%x: f32, %y: f32, %o: f32):
             %s = arith.addf %x, %y : f32
             linalg.yield %s : f32 } -> tensor<1024xf32>

Scalars used with tensors arrive splatted (the frontend broadcasts first), so every operand of
a tensor op is a tensor of the result's shape. Pointer-valued elementwise ops (`arith.select`
between pointers, `tt.addptr`) are pointer arithmetic and live in convert_pointers.py.
"""

from __future__ import annotations

from ...dialects import tt
from ...ir import Elementwise, Operation, RankedTensorType, element_type
from . import emit
from .conversion import ConversionError, FunctionConversion, converts


@converts(Elementwise)
def convert_elementwise(c: FunctionConversion, op: Operation) -> None:
    operands = [c.value(v) for v in op.operands]
    if not any(isinstance(r.type, RankedTensorType) for r in op.results):
        new = c.emit(op.clone_as(operands, [r.type for r in op.results]))
        for old, value in zip(op.results, new.results):
            c.bind(old, value)
        return
    scalar_types = [element_type(r.type) for r in op.results]

    def body(elements):
        return list(c.emit(op.clone_as(elements, scalar_types)).results)

    results = emit.elementwise(c, operands, [r.type for r in op.results], body)
    for old, value in zip(op.results, results):
        c.bind(old, value)


@converts(tt.ElementwiseInlineAsmOp)
def _inline_asm(c: FunctionConversion, op: Operation) -> None:
    raise ConversionError(
        f"inline_asm_elementwise holds PTX, which only GPU targets run (at {op.location})"
    )
