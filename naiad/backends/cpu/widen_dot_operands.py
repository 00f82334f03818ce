"""`cpu-widen-dot-operands`: a dot's 16/8-bit float operands widened to f32 where they are made.

The CPU's matmul micro-kernel (codegen/lower_matmul.py) multiplies in f32 and reads f32
operands in place; a narrower float operand is decoded into packed scratch by the dot itself,
every time the dot runs. This pass instead widens such an operand once, with a
`linalg.generic` of `arith.extf` placed right after the operand is made, and gives the dot the
f32 tensor:

    %p16 = linalg.generic ins(%p : f32) { %r = arith.truncf %x : f32 to bf16 ; yield %r }
    scf.for ... { %d = linalg.matmul ins(%q16, %v16 : bf16, bf16) outs(%acc : f32) }
  becomes
    %p16 = linalg.generic ins(%p : f32) { %r = arith.truncf %x : f32 to bf16 ; yield %r }
    %p32 = linalg.generic ins(%p16 : bf16) { %w = arith.extf %y : bf16 to f32 ; yield %w }
    scf.for ... { %d = linalg.matmul ins(%q32, %v32 : f32, f32) outs(%acc : f32) }

Two things follow. A loop-invariant operand (attention's query tile, loaded before the loop)
is widened once, before the loop, instead of once per iteration. And an operand rounded from
f32 in the kernel (attention's `p.to(v.dtype)`) becomes one elementwise chain, rounding then
widening, that `cpu-fuse-elementwise` (run next) makes one loop: the rounded 16-bit block is
never written, and no second pass decodes it. Results are unchanged bit for bit: widening is
exact, and the dot multiplies the same f32 values (upstream's matmul casts its inputs to the
output type the same way).

Legal for `linalg.matmul` / `linalg.batch_matmul` on tensors of static shape whose
accumulator is f32 (or a 16/8-bit float, which the micro-kernel accumulates in f32) and whose
operand is a 16- or 8-bit float. Each operand value is widened once, however many dots read it.
A dot that runs on AVX512-BF16's `vdpbf16ps` (codegen/lower_matmul_bf16.py: `takes_pairs`)
has its operands widened to bf16 instead, exactly: bf16 ones stay as they are, 8-bit floats
become bf16 (every value of theirs is one).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import arith, linalg, tensor
from ...ir import Builder, FloatType, Operation, RankedTensorType, bf16, f32, register_pass
from ...ir.affine import AffineMap
from ...ir.passes import Pass
from .codegen.element_math import narrow_float
from .codegen.lower_matmul import MATMULS
from .codegen.lower_matmul_bf16 import takes_pairs


def _widened_type(value, target):
    """The tensor type of `target` elements `value` (a dot operand) is widened to, else None."""
    t = value.type
    if not isinstance(t, RankedTensorType) or not t.has_static_shape:
        return None
    if narrow_float(t.element_type) is None or t.element_type is target:
        return None
    return RankedTensorType(t.shape, target)


def _accumulates_in_f32(op) -> bool:
    out = op.outputs[0].type
    if not isinstance(out, RankedTensorType):
        return False
    element = out.element_type
    return element is f32 or (isinstance(element, FloatType) and narrow_float(element) is not None)


def _widen(value, wide: RankedTensorType) -> Operation:
    """A generic computing `value`'s elements as f32, inserted right after `value` is made (at
    its block's start for a block argument), with the location of what made it."""
    owner = value.defining_op
    builder = Builder(owner.location if owner is not None else value.location)
    place = builder.after(owner) if owner is not None else builder.at_start(value.owner)
    identity = AffineMap.identity(wide.rank)
    with place:
        empty = builder.create(tensor.EmptyOp, wide)
        widen = builder.create(
            linalg.GenericOp,
            [value],
            [empty.results[0]],
            [identity, identity],
            ["parallel"] * wide.rank,
        )
    with builder.at_end(widen.body):
        element = builder.create(arith.ExtFOp, widen.body.arguments[0], out=f32)
        if wide.element_type is not f32:
            # to bf16 through f32: exact, and IEEE's meaning of the source's bits, as the f32
            # path reads them (a direct fp8e5 -> bf16 cast reads inf and NaN as numbers)
            element = builder.create(arith.TruncFOp, element.results[0], out=wide.element_type)
        builder.create(linalg.YieldOp, [element.results[0]])
    return widen


def widen_dot_operands(module: Operation) -> int:
    """Widen every narrow float operand of the f32 dots in `module` (see the module); the
    number of operands widened."""
    widened: dict = {}  # (operand value, element type) -> its widened tensor
    for op in list(module.walk()):
        if op.name not in MATMULS or not _accumulates_in_f32(op):
            continue
        target = bf16 if takes_pairs(op) else f32
        for index, value in enumerate(op.inputs):
            wide = _widened_type(value, target)
            if wide is None:
                continue
            if (value, target) not in widened:
                widened[value, target] = _widen(value, wide).results[0]
            op.set_operand(index, widened[value, target])
    return len(widened)


@register_pass("cpu-widen-dot-operands")
@dataclass(frozen=True)
class WidenDotOperands(Pass):
    """Widen a dot's 16/8-bit float operands to f32 once, where they are made (see the module)."""

    def run(self, module: Operation) -> None:
        widen_dot_operands(module)
