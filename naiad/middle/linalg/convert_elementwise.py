"""Elementwise ops: on scalars they are copied as they are; on tensors each becomes a
`linalg.generic` over the result's shape whose body is the same op on the elements.

    %r = arith.addf %a, %b : tensor<1024xf32>
  becomes
    %e = tensor.empty() : tensor<1024xf32>
    %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
           ins(%a, %b : ...) outs(%e : ...) { ^bb0(%x: f32, %y: f32, %o: f32):
             %s = arith.addf %x, %y : f32
             linalg.yield %s : f32 } -> tensor<1024xf32>

Scalars used with tensors arrive splatted (the frontend broadcasts first); the one scalar
operand a tensor op may have, as MLIR allows, is an `arith.select`'s condition (loop fusion
selects whole tensors on one i1), which the body reads as it is. Pointer-valued elementwise
ops (`arith.select` between pointers, `tt.addptr`) are pointer arithmetic and live in
convert_pointers.py.

TTIR's own elementwise ops become their upstream equivalents, with the same results bit for bit:

    tt.precise_divf        arith.divf (IEEE division is correctly rounded on a CPU)
    tt.precise_sqrt        math.sqrt
    tt.mulhiui             the high half of the double-width product: extui, muli, shrui, trunci
    tt.clampf              arith.maxnumf then arith.minnumf (propagateNan = all: maximumf and
                           minimumf, which propagate NaN)
    tt.fp_to_fp            arith.extf, or arith.truncf with the rounding mode (rtz: toward_zero);
                           between formats of one width (f16 and bf16), through f32, which holds
                           both exactly
    tt.bitcast             arith.bitcast (of non-pointers)
    tt.extern_elementwise  kept as it is in the body: the symbol names a function of the target's
                           math library (libdevice's names), which the CPU back end implements
"""

from __future__ import annotations

from ...dialects import tt
from ...dialects.arith.attributes import RoundingMode
from ...dialects.base import bit_width
from ...dialects.tt.attributes import PropagateNan
from ...dialects.tt.attributes import RoundingMode as TTRoundingMode
from ...ir import Elementwise, IntegerType, Operation, RankedTensorType, element_type, f32
from . import emit
from .conversion import FunctionConversion, converts, fail


@converts(Elementwise)
def convert_elementwise(c: FunctionConversion, op: Operation) -> None:
    operands = [c.value(v) for v in op.operands]
    if not any(isinstance(r.type, RankedTensorType) for r in op.results):
        for old, value in zip(op.results, scalar_op(c, op, operands)):
            c.bind(old, value)
        return

    is_tensor = [isinstance(v.type, RankedTensorType) for v in operands]
    tensors = [v for v, tensor in zip(operands, is_tensor) if tensor]

    def body(elements):
        element = iter(elements)
        inside = [next(element) if tensor else v for v, tensor in zip(operands, is_tensor)]
        return scalar_op(c, op, inside)

    results = emit.elementwise(c, tensors, [r.type for r in op.results], body)
    for old, value in zip(op.results, results):
        c.bind(old, value)


def scalar_op(c: FunctionConversion, op: Operation, operands) -> list:
    """`op` applied to scalar `operands`, as upstream ops: the op itself, or the translation
    of a TTIR op (see the module docstring)."""
    types = [element_type(r.type) for r in op.results]
    translate = _TRANSLATIONS.get(op.name)
    if translate is not None:
        return [translate(c, op, operands, types[0])]
    return list(c.emit(op.clone_as(operands, types)).results)


def _precise_divf(c, op, operands, t):
    return emit.op(c, "arith.divf", operands, t)


def _precise_sqrt(c, op, operands, t):
    return emit.op(c, "math.sqrt", operands, t)


def _mulhiui(c, op, operands, t):
    wide = IntegerType(2 * t.width)
    x, y = (emit.op(c, "arith.extui", [v], wide) for v in operands)
    product = emit.op(c, "arith.muli", [x, y], wide)
    high = emit.op(c, "arith.shrui", [product, emit.scalar_constant(c, t.width, wide)], wide)
    return emit.op(c, "arith.trunci", [high], t)


def _clampf(c, op, operands, t):
    x, low, high = operands
    propagate = PropagateNan.keyword(op.propagateNan) == "all"
    larger, smaller = ("arith.maximumf", "arith.minimumf") if propagate else _NUMBER_EXTREMA
    return emit.op(c, smaller, [emit.op(c, larger, [x, low], t), high], t)


_NUMBER_EXTREMA = ("arith.maxnumf", "arith.minnumf")


def _fp_to_fp(c, op, operands, t):
    (x,) = operands
    source = x.type
    if bit_width(t) > bit_width(source):
        return emit.op(c, "arith.extf", [x], t)
    if bit_width(t) == bit_width(source):
        x = emit.op(c, "arith.extf", [x], f32)
    toward_zero = op.rounding is not None and TTRoundingMode.keyword(op.rounding) == "rtz"
    attributes = {"roundingmode": RoundingMode.get("toward_zero")} if toward_zero else None
    return emit.op(c, "arith.truncf", [x], t, attributes)


def _bitcast(c, op, operands, t):
    return emit.op(c, "arith.bitcast", operands, t)


_TRANSLATIONS = {
    "tt.precise_divf": _precise_divf,
    "tt.precise_sqrt": _precise_sqrt,
    "tt.mulhiui": _mulhiui,
    "tt.clampf": _clampf,
    "tt.fp_to_fp": _fp_to_fp,
    "tt.bitcast": _bitcast,
}


@converts(tt.ElementwiseInlineAsmOp)
def _inline_asm(c: FunctionConversion, op: Operation) -> None:
    fail(op, "inline_asm_elementwise holds PTX, which only GPU targets run")
