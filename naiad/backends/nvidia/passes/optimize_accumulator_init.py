"""`tritongpu-optimize-accumulator-init`: a `wgmma` dot whose accumulator is chosen between a
zero and a value by a scalar condition takes the value, and the condition as its `useC`.

A fused persistent matmul (fuse-nested-loops) starts each output tile's accumulator over in
the first K step of the tile: `select(first, 0, acc)` feeds the dot. As a register op on the
accumulator, that select must wait for the dot before it, so the loop's dot could not run on
asynchronously across iterations. The instruction's own scale-d does the same without reading
the registers (`useC` false: d = a @ b), and the dot then accumulates straight into the value
the loop carries (asynchronous_dots.py). Legal always: the dot computes what it did.

    %c = arith.select %first, %zero, %acc : tensor<128x256xf32, #mma>
    %d = ttng.warp_group_dot %a, %b, %c : ... -> tensor<128x256xf32, #mma>
    ==>
    %use = arith.xori %first, %true : i1
    %d = ttng.warp_group_dot %a, %b, %acc, %use : ... -> tensor<128x256xf32, #mma>
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects import arith, ttng
from ....ir import IntegerAttr, IntegerType, Operation, register_pass
from ....ir.passes import Pass
from ....ir.types import i1
from ....passes.combine import is_zero


@register_pass("tritongpu-optimize-accumulator-init")
@dataclass(frozen=True)
class OptimizeAccumulatorInit(Pass):
    """Fold a zero-or-value accumulator choice into the dot's `useC` (see the module doc)."""

    def run(self, module: Operation) -> None:
        for dot in [op for op in module.walk() if isinstance(op, ttng.WarpGroupDotOp)]:
            choice = dot.c.defining_op
            if dot.useC is not None or not isinstance(choice, arith.SelectOp):
                continue
            if not isinstance(choice.condition.type, IntegerType):
                continue  # a tensor of conditions: each element its own choice
            if is_zero(choice.true_value) and not is_zero(choice.false_value):
                _fold(dot, choice, choice.false_value, negate=True)
            elif is_zero(choice.false_value) and not is_zero(choice.true_value):
                _fold(dot, choice, choice.true_value, negate=False)


def _fold(dot, choice, value, negate: bool) -> None:
    """`dot` accumulates into `value` where `choice`'s condition (negated) holds."""
    use = choice.condition
    if negate:
        true = arith.ConstantOp(IntegerAttr(1, i1), location=dot.location)
        flip = arith.XOrIOp(use, true.result, location=dot.location)
        dot.parent.insert_before(true, dot)
        dot.parent.insert_before(flip, dot)
        use = flip.result
    dot.set_operands([dot.a, dot.b, value, use])
    if not choice.result.has_uses:
        choice.erase()
