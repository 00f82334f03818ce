"""Which loop nests `fuse-nested-loops` can fuse, and what it needs to know of them: the code
before and after the inner loop, how the inner bounds are computed, whether the inner loop is
assumed to run, the values carried from the prologue, and how a carried slot is first filled.

A nest is fusable when the outer loop's body holds exactly one `scf.for` (which holds none, as
Triton fuses nests of two loops), neither compares unsigned, the inner bounds come from values
outside the nest and the outer induction variable through pure scalar ops (never from a carried
value), and every value the fused loop carries has a placeholder of its type before it.

Nests whose inner loop carries a pointer (`ptrs += BLOCK`) are left alone: fused, that pointer
would reach each iteration through the prologue's condition, a value the CPU back end's pointer
analysis cannot follow, so its loads become gathers (a row-sum nest ran 7-10 times slower, one
thread). Pointers the inner body computes from the carried offsets keep their shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dialects import arith, llvm, scf, tt
from ..ir import (
    ConstantLike,
    Elementwise,
    FloatType,
    IntegerType,
    Operation,
    Pure,
    RankedTensorType,
    SameOperandsAndResultElementType,
    Value,
)

_DIVISIONS = (
    arith.DivSIOp,
    arith.DivUIOp,
    arith.CeilDivSIOp,
    arith.CeilDivUIOp,
    arith.FloorDivSIOp,
    arith.RemSIOp,
    arith.RemUIOp,
)
# Ops that only place values: computed again, they cost no arithmetic.
_MOVES = (tt.SplatOp, tt.BroadcastOp, tt.ExpandDimsOp, tt.ReshapeOp, tt.MakeRangeOp)


@dataclass
class Nest:
    """A fusable nest: the loops, the ops around the inner one, and how its bounds are made."""

    outer: scf.ForOp
    inner: scf.ForOp
    prologue: list[Operation]
    epilogue: list[Operation]
    bound_ops: list[Operation]  # the prologue ops the inner bounds are computed by, in order
    dependent: bool  # the inner bounds read the outer induction variable
    must_run: bool  # the inner loop is assumed to run at least once
    outputs: list[Value]  # prologue results read after the prologue, carried
    recomputed: list[Operation]  # prologue ops computed again after the prologue, in order
    counter: IntegerType  # the type of the fused loop's count of inner iterations

    @staticmethod
    def of(outer: scf.ForOp) -> Nest | None:
        """The nest `outer` heads, or None where it cannot be fused."""
        ops = list(outer.body)[:-1]
        loops = [op for op in ops if isinstance(op, scf.ForOp)]
        if len(loops) != 1:
            return None
        inner = loops[0]
        if any(isinstance(op, scf.ForOp) for op in inner.body):
            return None
        for loop in (outer, inner):
            if "unsignedCmp" in loop.attributes or not isinstance(loop.step.type, IntegerType):
                return None
        if any(_is_pointer(arg.type) for arg in inner.region_iter_args):
            return None  # see the module docstring
        at = ops.index(inner)
        prologue, epilogue = ops[:at], ops[at + 1 :]
        bounds = _bound_slice(outer, inner, prologue)
        if bounds is None:
            return None
        recomputed, outputs = _split(outer, prologue, [*epilogue, outer.body.terminator])
        nest = Nest(
            outer, inner, prologue, epilogue, *bounds, _assumed_to_run(inner), outputs,
            recomputed, counter_type(inner),
        )  # fmt: skip
        carried = [inner.induction_var, *inner.region_iter_args, *outputs]
        if any(placeholder_source(v, outer) is None for v in carried):
            return None
        return nest


def _split(outer, prologue, epilogue) -> tuple[list[Operation], list[Value]]:
    """The prologue ops computed again after the prologue, and the values carried from it
    (each in prologue order): what the loop reads after the prologue, traced back through the
    recomputed ops (`_free` ones, and the `_cheap` ones the epilogue reads)."""
    members = set(prologue)
    recomputed = {op for op in prologue if _free(op)}
    pending = [v for op in epilogue for inner in op.walk() for v in inner.operands]
    seen = set()
    while pending:
        op = pending.pop().defining_op
        if op not in members or op in seen:
            continue
        seen.add(op)
        if op in recomputed or _cheap(op):
            recomputed.add(op)
            pending.extend(op.operands)
    needed, carried = set(), set()
    pending = [
        r
        for op in prologue
        for r in op.results
        if any(_top(user, outer) not in members for user in r.users)
    ]
    while pending:
        value = pending.pop()
        op = value.defining_op
        if op not in recomputed:
            carried.add(value)
        elif op not in needed:
            needed.add(op)
            pending.extend(v for v in op.operands if v.defining_op in members)
    outputs = [r for op in prologue for r in op.results if r in carried]
    return [op for op in prologue if op in needed], outputs


def _free(op: Operation) -> bool:
    """A prologue op computed again where its value is read, not carried: one that costs no
    arithmetic (a constant, a range, a splat, a broadcast, a reshape) or makes a pointer (a
    pointer block so computed stays a base plus offsets that the CPU back end's pointer
    analysis reads, where a carried one is only a value, and takes no 64-bit registers).
    Anything else the prologue computes and the K steps read is carried, as Triton carries it:
    tutorial 09's persistent matmul carries its tile's row and column offsets (4 and 8 values a
    thread) instead of computing them again, masks and all, in every K step."""
    if Pure not in op.traits or op.regions:
        return False
    if any(_is_pointer(r.type) for r in op.results):
        return True
    return not op.operands or isinstance(op, _MOVES) or ConstantLike in op.traits


def _cheap(op: Operation) -> bool:
    """A pure elementwise op but a division: computed again where the epilogue reads its
    value. Carried, a value that the K steps and the epilogue both read would be needed in
    two layouts (the loads' and the store's), and the K steps converted it through shared
    memory (a persistent matmul whose store reuses the rows of its A loads: 98 spills at
    128x256x64 on sm_90a). A GPU has no instruction for a division: carried."""
    if Pure not in op.traits or op.regions or isinstance(op, _DIVISIONS):
        return False
    cheap = (Elementwise, ConstantLike, SameOperandsAndResultElementType)
    return not op.operands or any(trait in op.traits for trait in cheap)


def counter_type(inner: scf.ForOp) -> IntegerType:
    """The inner induction variable's type where the inner trip count surely fits in it (a
    constant lower bound of at least 0 and a constant positive step: the count is at most the
    upper bound), as Triton counts; i64 otherwise. A fused loop's count of inner iterations
    compares and steps every iteration: tutorial 09's persistent matmul in i64 took 2 to 3
    SASS instructions for each such i32 one on sm_90a."""
    lower, step = (_constant(v) for v in (inner.lowerBound, inner.step))
    fits = lower is not None and step is not None and lower >= 0 and step > 0
    return inner.induction_var.type if fits else IntegerType(64)


def _constant(value: Value) -> int | None:
    op = value.defining_op
    return op.value.value if isinstance(op, arith.ConstantOp) else None


def _top(op: Operation, outer: scf.ForOp) -> Operation:
    """The op of `outer`'s body that is or holds `op`."""
    while op.parent is not outer.body:
        op = op.parent_op()
    return op


def _inside(value: Value, loop: scf.ForOp) -> bool:
    owner = value.defining_op
    if owner is None:
        block_owner = value.parent_block.parent_op()
        return block_owner is not None and loop.is_ancestor(block_owner)
    return loop.is_ancestor(owner)


def _is_pointer(t) -> bool:
    element = t.element_type if isinstance(t, RankedTensorType) else t
    return isinstance(element, tt.PointerType)


def _is_scalar(t) -> bool:
    return isinstance(t, IntegerType | FloatType) or (
        isinstance(t, tt.PointerType) and not isinstance(t.pointee_type, RankedTensorType)
    )


def _bound_slice(outer, inner, prologue) -> tuple[list[Operation], bool] | None:
    """The prologue ops the inner bounds are made by, and whether they read the outer
    induction variable; None when they read a carried value or an op with effects."""
    members, needed, dependent = set(prologue), set(), False
    stack = [inner.lowerBound, inner.upperBound, inner.step]
    while stack:
        value = stack.pop()
        if value is outer.induction_var:
            dependent = True
            continue
        if not _inside(value, outer):
            continue
        owner = value.defining_op
        if owner is None or owner not in members:
            return None
        if owner in needed:
            continue
        types = [v.type for v in (*owner.operands, *owner.results)]
        if Pure not in owner.traits or owner.regions or not all(map(_is_scalar, types)):
            return None
        needed.add(owner)
        stack.extend(owner.operands)
    return [op for op in prologue if op in needed], dependent


def _assumed_to_run(inner: scf.ForOp) -> bool:
    """`llvm.intr.assume(ub > lb)` (or `lb < ub`) on the inner loop's own bounds."""
    for user in inner.upperBound.users:
        if not isinstance(user, arith.CmpIOp):
            continue
        if not any(isinstance(u, llvm.AssumeOp) for u in user.result.users):
            continue
        operands = (user.lhs, user.rhs)
        if (user.predicate_name, operands) in (
            ("sgt", (inner.upperBound, inner.lowerBound)),
            ("slt", (inner.lowerBound, inner.upperBound)),
        ):
            return True
    return False


def placeholder_source(value: Value, outer: scf.ForOp):
    """What the initial value of a slot carrying `value` is made from: zero for numbers, the
    scalar pointer outside the nest that a pointer is derived from (so the slot points into the
    same argument); None when there is none."""
    t = value.type
    element = t.element_type if isinstance(t, RankedTensorType) else t
    if isinstance(element, IntegerType | FloatType):
        return 0
    if not isinstance(element, tt.PointerType) or isinstance(
        element.pointee_type, RankedTensorType
    ):
        return None
    seen = set()
    while value.type is not element or _inside(value, outer):
        if value in seen:
            return None
        seen.add(value)
        owner = value.defining_op
        if isinstance(owner, tt.AddPtrOp):
            value = owner.ptr
        elif isinstance(owner, tt.SplatOp | tt.BroadcastOp | tt.ExpandDimsOp | tt.ReshapeOp):
            value = owner.src
        elif owner is None and isinstance(value.parent_block.parent_op(), scf.ForOp):
            loop = value.parent_block.parent_op()
            if value not in loop.region_iter_args:
                return None
            value = loop.initArgs[loop.region_iter_args.index(value)]
        else:
            return None
    return value
