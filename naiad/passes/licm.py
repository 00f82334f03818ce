"""`licm`: loop-invariant code motion — ops of a loop body that compute the same value on every
iteration move in front of the loop.

A pure op whose operands are all defined outside the loop is hoisted (innermost loops first, so
an op can climb several levels). A `tt.load` is hoisted from an `scf.for` only when nothing in the
loop writes memory or calls a function, as Triton's triton-licm does; since the hoisted load runs
even when the loop would run zero times, its mask is ANDed with the trip condition `lb < ub`.
Loops marked `tt.disable_licm` are left alone.

    scf.for %i = %lb to %ub step %s {              %v = arith.muli %a, %b : i32
      %v = arith.muli %a, %b : i32         ==>     scf.for %i = %lb to %ub step %s {
      ...                                            ...
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dialects import arith, scf, tt
from ..ir import LoopLike, MemoryWrite, Operation, Pure, Terminator, Value, register_pass
from ..ir.passes import Pass
from ..ir.types import RankedTensorType


def _defined_inside(value: Value, loop: Operation) -> bool:
    owner = value.defining_op
    if owner is None:  # a block argument: it belongs to the op holding its block
        owner = value.owner.parent_op()
    return owner is not None and loop.is_ancestor(owner)


def _invariant(op: Operation, loop: Operation) -> bool:
    if op.regions or Terminator in op.traits:
        return False
    return all(not _defined_inside(v, loop) for v in op.operands)


def _writes_or_calls(loop: Operation) -> bool:
    return any(
        MemoryWrite in op.traits or isinstance(op, tt.CallOp)
        for op in loop.walk()
        if op is not loop
    )


@register_pass("licm")
@dataclass(frozen=True)
class LICM(Pass):
    """Hoist loop-invariant pure ops, and loads from loops that do not write memory."""

    def run(self, module: Operation) -> None:
        loops = [op for op in module.walk(post_order=True) if LoopLike in op.traits]
        for loop in loops:
            if "tt.disable_licm" not in loop.attributes:
                self._hoist_from(loop)

    def _hoist_from(self, loop: Operation) -> None:
        loads_allowed = isinstance(loop, scf.ForOp) and not _writes_or_calls(loop)
        moved = True
        while moved:
            moved = False
            for region in loop.regions:
                for block in region.blocks:
                    for op in block:
                        if not _invariant(op, loop):
                            continue
                        if Pure in op.traits:
                            op.move_before(loop)
                            moved = True
                        elif loads_allowed and isinstance(op, tt.LoadOp):
                            self._hoist_load(op, loop)
                            moved = True

    @staticmethod
    def _hoist_load(load: tt.LoadOp, loop: scf.ForOp) -> None:
        """Move `load` before `loop`, masked off when the loop would not run at all."""
        load.move_before(loop)
        predicate = "ult" if "unsignedCmp" in loop.attributes else "slt"
        runs = arith.CmpIOp(predicate, loop.lowerBound, loop.upperBound, location=load.location)
        loop.parent.insert_before(runs, load)
        condition = runs.result
        if isinstance(load.ptr.type, RankedTensorType):
            # In the pointers' shape and layout (TTGIR: their encoding, as the mask's).
            mask_type = load.ptr.type.clone(element_type=condition.type)
            splat = tt.SplatOp(condition, result=mask_type, location=load.location)
            loop.parent.insert_before(splat, load)
            condition = splat.result
        if load.mask is not None:
            both = arith.AndIOp(load.mask, condition, location=load.location)
            loop.parent.insert_before(both, load)
            condition = both.result
        if load.mask is not None:
            load.set_operand(1, condition)
        else:
            _add_mask(load, condition)


def hoist_nest_invariants(loop: Operation) -> None:
    """Move in front of `loop` the pure ops anywhere in it (its nested loops' bodies too) that
    compute the same value on every iteration of `loop` itself; an op invariant only in an
    inner loop stays there. Before a nest is fused (fuse-nested-loops), as Triton's fusion
    sees it: what the inner loop computes from the outer iteration's values is computed in
    the fused loop's body again, not hoisted into the prologue and carried. Ops under a
    branch stay (a division its condition guards would run unguarded)."""
    if "tt.disable_licm" in loop.attributes:
        return
    moved = True
    while moved:
        moved = False
        for op in list(loop.walk()):
            if op is loop or Pure not in op.traits or not _invariant(op, loop):
                continue
            if _in_loops_only(op, loop):
                op.move_before(loop)
                moved = True


def _in_loops_only(op: Operation, loop: Operation) -> bool:
    """Whether every op between `op` and `loop` is an `scf.for`."""
    parent = op.parent_op()
    while parent is not loop:
        if not isinstance(parent, scf.ForOp):
            return False
        parent = parent.parent_op()
    return True


def _add_mask(load: tt.LoadOp, mask: Value) -> None:
    """Give a mask-less load `mask` (a new op: the operand list changes length)."""
    masked = tt.LoadOp(
        load.ptr,
        mask,
        load.other,
        attributes={k: v for k, v in load.attributes.items() if k != "operandSegmentSizes"},
        location=load.location,
        result=load.result.type,
    )
    load.parent.insert_before(masked, load)
    load.result.replace_all_uses_with(masked.result)
    load.erase()
