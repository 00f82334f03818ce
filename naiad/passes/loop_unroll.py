"""`loop-unroll`: unroll the `scf.for` loops that ask for it (`tt.loop_unroll_factor = F`).

The loop becomes a main loop stepping F times as far, whose body is F copies of the original body
chained through the loop-carried values (copy k sees `iv + k * step`), followed by an epilogue
loop — the original loop over what is left — so any trip count is right. A factor of 1 or less,
or a loop with unsigned bounds, only drops the attribute.

    scf.for %i = %lb to %ub step %s {tt.loop_unroll_factor = 2 : i32} { body(%i) }
    ==>
    %n = (max(%ub - %lb, 0) / (2 * %s)) * (2 * %s)
    scf.for %i = %lb to %lb + %n step 2 * %s { body(%i); body(%i + %s) }
    scf.for %i = %lb + %n to %ub step %s { body(%i) }
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dialects import arith, scf
from ..ir import IntegerAttr, Operation, register_pass
from ..ir.passes import Pass

_FACTOR = "tt.loop_unroll_factor"


@register_pass("loop-unroll")
@dataclass(frozen=True)
class LoopUnroll(Pass):
    """Unroll loops marked with `tt.loop_unroll_factor`."""

    def run(self, module: Operation) -> None:
        for loop in [op for op in module.walk(post_order=True) if isinstance(op, scf.ForOp)]:
            factor = loop.attributes.get(_FACTOR)
            if factor is None:
                continue
            del loop.attributes[_FACTOR]
            if (
                isinstance(factor, IntegerAttr)
                and factor.value > 1
                and "unsignedCmp" not in (loop.attributes)
            ):
                _unroll(loop, factor.value)


def _emit(block_anchor: Operation, op: Operation):
    block_anchor.parent.insert_before(op, block_anchor)
    return op.result


def _unroll(loop: scf.ForOp, factor: int) -> None:
    at, loc = loop, loop.location
    ty = loop.step.type
    factor_value = _emit(at, arith.ConstantOp(IntegerAttr(factor, ty), location=loc))
    zero = _emit(at, arith.ConstantOp(IntegerAttr(0, ty), location=loc))
    big_step = _emit(at, arith.MulIOp(loop.step, factor_value, location=loc))
    span = _emit(at, arith.SubIOp(loop.upperBound, loop.lowerBound, location=loc))
    span = _emit(at, arith.MaxSIOp(span, zero, location=loc))
    whole = _emit(at, arith.DivSIOp(span, big_step, location=loc))
    covered = _emit(at, arith.MulIOp(whole, big_step, location=loc))
    main_upper = _emit(at, arith.AddIOp(loop.lowerBound, covered, location=loc))
    main = scf.ForOp(
        loop.lowerBound,
        main_upper,
        big_step,
        loop.initArgs,
        attributes={k: v for k, v in loop.attributes.items()},
        location=loc,
    )
    loop.parent.insert_before(main, loop)
    _fill_unrolled_body(main, loop, factor)
    loop.set_operand(0, main_upper)
    for i, value in enumerate(main.outs):
        loop.set_operand(3 + i, value)


def _fill_unrolled_body(main: scf.ForOp, loop: scf.ForOp, factor: int) -> None:
    """F copies of `loop`'s body in `main`, copy k at induction value `iv + k * step`."""
    body = main.body
    carried = list(main.region_iter_args)
    yielded = None
    for k in range(factor):
        iv = main.induction_var
        if k:
            offset = arith.ConstantOp(IntegerAttr(k, iv.type), location=loop.location)
            body.append(offset)
            scaled = body.append(arith.MulIOp(loop.step, offset.result, location=loop.location))
            iv = body.append(arith.AddIOp(main.induction_var, scaled.result)).result
        mapping = {loop.induction_var: iv, **dict(zip(loop.region_iter_args, carried))}
        for op in loop.body:
            if isinstance(op, scf.YieldOp):
                yielded = [mapping.get(v, v) for v in op.operands]
                break
            body.append(op.clone(mapping))
        carried = yielded
    body.append(scf.YieldOp(carried, location=loop.location))
