"""Triton's canonicalization patterns for `tt` ops (and the `arith` ones Triton relies on) that
the ops' own folds do not cover; the `canonicalize` pass runs them with every op's patterns.

What the folds already do (naiad/dialects): constants through arithmetic, `x * 1`, `x + 0`,
integer `x * 0`, `-(-x)` for floats, selects on a constant condition and `select(c, x, x)`,
`addptr(p, 0)`, splats and broadcasts of splat constants, `broadcast` to its own type, identity
`trans`/`reshape`. What is here, each a small pattern (Triton's Ops.cpp, Canonicalize.td and
Combine.td say the rewrites; MLIR's arith canonicalizations the integer one):

    addptr(addptr(p, a), b)      -> addptr(p, a + b)      offsets of one type, no overflow
    subi(c0, subi(c1, x))        -> addi(x, c0 - c1)      so -(-x) -> x for integers
    arith.bitcast %x : T to T    -> %x                    (any arith cast to its own type)
    load(p, true, o) / store     -> unmasked              a false mask: store erased,
                                                           load -> `other` (kept without it)
    broadcast(splat(x))          -> splat(x)              also through expand_dims, reshape,
    broadcast(broadcast(x))      -> broadcast(x)          trans; reshape and trans chains merge
    expand_dims(broadcast(x))    -> broadcast(expand_dims(x))
    expand_dims / reshape of a dense constant -> the constant, reshaped
    cmpi(make_range(0, 128), splat(128)) slt  -> dense<true>   (decided for every element)
    ptr_to_int(int_to_ptr(x))    -> x                     through a select of two such too
                                                           (Naiad's own: address_round_trip.py)

    %a = tt.addptr %p, %x : tensor<8x!tt.ptr<f32>>, tensor<8xi64>
    %b = tt.addptr %a, %y : tensor<8x!tt.ptr<f32>>, tensor<8xi64>
    ==>
    %s = arith.addi %x, %y : tensor<8xi64>
    %b = tt.addptr %p, %s : tensor<8x!tt.ptr<f32>>, tensor<8xi64>
"""

from __future__ import annotations

from ..dialects import arith, tt
from ..dialects.arith.folding import make_attr, width_of
from ..ir import (
    BoolAttr,
    DenseElementsAttr,
    IntegerAttr,
    Operation,
    PatternRewriter,
    RankedTensorType,
    RewritePattern,
    Value,
    constant_value,
)
from .address_round_trip import FoldAddressRoundTrip

# Hints the frontend attaches to an addptr; the merged addptr keeps the outer op's (Triton's
# CopyDiscardableAttrs).
_POINTER_HINTS = ("tt.divisibility", "tt.contiguity", "tt.constancy")


def splat_int(value: Value) -> int | None:
    """The integer every element of `value` equals: a constant, or a splat of one."""
    op = value.defining_op
    if isinstance(op, tt.SplatOp):
        value = op.src
    attr = constant_value(value)
    if isinstance(attr, DenseElementsAttr) and attr.is_splat:
        attr = attr.splat_value
    elif isinstance(attr, IntegerAttr):
        attr = attr.value
    if isinstance(attr, bool) or not isinstance(attr, int):
        return None
    return attr


def offsets_combinable(first: Value, second: Value) -> bool:
    """Triton's isAddPtrOffsetCombinable: one type, and either 64-bit (as wide as the pointer)
    or two constants whose sum does not overflow (`a + b` in a narrower type could wrap where
    two separate pointer increments would not)."""
    if first.type is not second.type:
        return False
    width = width_of(first.type)
    if width == 64:
        return True
    a, b = splat_int(first), splat_int(second)
    if a is None or b is None:
        return False
    return -(1 << (width - 1)) <= a + b < (1 << (width - 1))


class FoldAddPtrChain(RewritePattern):
    """addptr(addptr(p, a), b) -> addptr(p, a + b) (Triton's CombineAddPtrPattern)."""

    root = tt.AddPtrOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        inner = op.ptr.defining_op
        if not isinstance(inner, tt.AddPtrOp) or not offsets_combinable(inner.offset, op.offset):
            return False
        total = rewriter.create(arith.AddIOp, inner.offset, op.offset).result
        merged = rewriter.create(tt.AddPtrOp, inner.ptr, total, result=op.result.type)
        for name in _POINTER_HINTS:
            if name in op.attributes:
                merged.attributes[name] = op.attributes[name]
        rewriter.replace_op(op, merged)
        return True


class FoldSubOfConstantMinus(RewritePattern):
    """subi(c0, subi(c1, x)) -> addi(x, c0 - c1) (MLIR's SubIRHSSubConstantLHS); with
    c0 = c1 = 0 this is -(-x) -> x once `x + 0` folds."""

    root = arith.SubIOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        inner = op.rhs.defining_op
        if not isinstance(inner, arith.SubIOp):
            return False
        if constant_value(op.lhs) is None or constant_value(inner.lhs) is None:
            return False
        difference = rewriter.create(arith.SubIOp, op.lhs, inner.lhs).result  # folds
        rewriter.replace_op(op, rewriter.create(arith.AddIOp, inner.rhs, difference))
        return True


def constant_mask(mask: Value | None) -> bool | None:
    """True or False when every lane of `mask` is that constant; None otherwise."""
    if mask is None:
        return None
    attr = constant_value(mask)
    if isinstance(attr, DenseElementsAttr) and attr.is_splat:
        return bool(attr.splat_value)
    if isinstance(attr, BoolAttr):
        return attr.value
    return None


def kept_attributes(op: Operation) -> dict:
    """`op`'s attributes for a copy with other operands (segment sizes are recomputed)."""
    return {k: v for k, v in op.attributes.items() if k != "operandSegmentSizes"}


class DropConstantLoadMask(RewritePattern):
    """load(p, true, o) -> load(p); load(p, false, o) -> o. Without `other`, a load whose mask
    is false reads undefined lanes and stays (as Triton)."""

    root = tt.LoadOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        taken = constant_mask(op.mask)
        if taken is None:
            return False
        if not taken:
            if op.other is None:
                return False
            rewriter.replace_op(op, [op.other])
            return True
        unmasked = tt.LoadOp(
            op.ptr, attributes=kept_attributes(op), location=op.location, result=op.result.type
        )
        rewriter.replace_op(op, rewriter.insert(unmasked))
        return True


class DropConstantStoreMask(RewritePattern):
    """store(p, v, true) -> store(p, v); store(p, v, false) is erased."""

    root = tt.StoreOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        taken = constant_mask(op.mask)
        if taken is None:
            return False
        if taken:
            rewriter.insert(
                tt.StoreOp(op.ptr, op.value, attributes=kept_attributes(op), location=op.location)
            )
        rewriter.erase_op(op)
        return True


class FoldIdentityCast(RewritePattern):
    """An arith cast to its own type is its operand (MLIR's CastOpInterface fold:
    `arith.bitcast %x : i32 to i32`, which Triton's frontend emits for loop bounds)."""

    root = arith.CastOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if op.operands[0].type is not op.results[0].type:
            return False
        rewriter.replace_op(op, [op.operands[0]])
        return True


class ReplaceViewOfSplat(RewritePattern):
    """broadcast / expand_dims / reshape / trans of splat(x) -> splat(x) of the result type.
    (Triton has the first three; a transposed splat is the same splat too.)"""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        splat = op.src.defining_op
        if not isinstance(splat, tt.SplatOp):
            return False
        if getattr(op, "efficient_layout", None) is not None:
            return False
        rewriter.replace_op(op, rewriter.create(tt.SplatOp, splat.src, result=op.result.type))
        return True


class ReplaceBroadcastOfSplat(ReplaceViewOfSplat):
    root = tt.BroadcastOp


class ReplaceExpandDimsOfSplat(ReplaceViewOfSplat):
    root = tt.ExpandDimsOp


class ReplaceReshapeOfSplat(ReplaceViewOfSplat):
    root = tt.ReshapeOp


class ReplaceTransOfSplat(ReplaceViewOfSplat):
    root = tt.TransOp


class MergeBroadcasts(RewritePattern):
    """broadcast(broadcast(x)) -> broadcast(x)."""

    root = tt.BroadcastOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        inner = op.src.defining_op
        if not isinstance(inner, tt.BroadcastOp):
            return False
        merged = rewriter.create(tt.BroadcastOp, inner.src, result=op.result.type)
        rewriter.replace_op(op, merged)
        return True


class SwapExpandDimsAndBroadcast(RewritePattern):
    """expand_dims(broadcast(x)) -> broadcast(expand_dims(x)): the broadcasts can then merge."""

    root = tt.ExpandDimsOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        broadcast = op.src.defining_op
        if not isinstance(broadcast, tt.BroadcastOp):
            return False
        expanded = rewriter.create(tt.ExpandDimsOp, broadcast.src, op.axis).result
        with rewriter.at_location(broadcast.location):
            widened = rewriter.create(tt.BroadcastOp, expanded, result=op.result.type)
        rewriter.replace_op(op, widened)
        return True


class MergeReshapes(RewritePattern):
    """reshape(reshape(x)) -> reshape(x), reordering allowed if either allowed it."""

    root = tt.ReshapeOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        inner = op.src.defining_op
        if not isinstance(inner, tt.ReshapeOp) or op.efficient_layout is not None:
            return False
        reorder = op.allow_reorder is not None or inner.allow_reorder is not None
        merged = tt.ReshapeOp(
            inner.src, allow_reorder=reorder, result=op.result.type, location=op.location
        )
        rewriter.replace_op(op, rewriter.insert(merged))
        return True


class MergeTranspositions(RewritePattern):
    """trans(trans(x, inner), outer) -> trans(x, inner[outer[i]] for each i)."""

    root = tt.TransOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        inner = op.src.defining_op
        if not isinstance(inner, tt.TransOp):
            return False
        inner_order = list(inner.order)
        order = [inner_order[i] for i in op.order]
        merged = rewriter.create(tt.TransOp, inner.src, order, result=op.result.type)
        rewriter.replace_op(op, merged)
        return True


class FoldViewOfDenseConstant(RewritePattern):
    """expand_dims / reshape of a non-splat dense constant -> that constant in the result's
    shape (the elements keep their row-major order; splats already fold)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        attr = constant_value(op.src)
        if not isinstance(attr, DenseElementsAttr) or attr.is_splat:
            return False
        reshaped = DenseElementsAttr(op.result.type, attr.values)
        rewriter.replace_op(op, rewriter.create(arith.ConstantOp, reshaped))
        return True


class FoldExpandDimsOfDenseConstant(FoldViewOfDenseConstant):
    root = tt.ExpandDimsOp


class FoldReshapeOfDenseConstant(FoldViewOfDenseConstant):
    root = tt.ReshapeOp


# -- comparisons decided by the ranges of their operands


_VIEWS = (tt.SplatOp, tt.BroadcastOp, tt.ExpandDimsOp, tt.ReshapeOp, tt.TransOp, arith.ExtSIOp)


def value_range(value: Value) -> tuple[int, int] | None:
    """The least and greatest (signed) element of `value` when known: a make_range, constants,
    and what shape ops and sign extension make of them (they keep the set of values)."""
    if width_of(value.type) == 1:
        return None  # i1 is -1 or 0 signed: not worth the care
    op = value.defining_op
    if isinstance(op, tt.MakeRangeOp):
        return op.start.value, op.end.value - 1
    if isinstance(op, _VIEWS):
        return value_range(op.operands[0])
    attr = constant_value(value)
    if isinstance(attr, IntegerAttr) and not isinstance(attr, BoolAttr):
        return attr.value, attr.value
    if isinstance(attr, DenseElementsAttr) and isinstance(attr.values[0], int):
        return min(attr.values), max(attr.values)
    return None


def _always(predicate: str, a: tuple[int, int], b: tuple[int, int]) -> bool | None:
    """Whether `x <predicate> y` holds for every x in range a and y in range b (True), for
    none (False), or depends (None)."""
    (alo, ahi), (blo, bhi) = a, b
    if predicate.startswith("u"):
        if alo < 0 or blo < 0:  # unsigned order is the signed one only for non-negatives
            return None
        predicate = "s" + predicate[1:]
    if predicate in ("sgt", "sge"):  # x > y is y < x
        (alo, ahi), (blo, bhi) = b, a
        predicate = "slt" if predicate == "sgt" else "sle"
    if predicate == "slt":
        return True if ahi < blo else False if alo >= bhi else None
    if predicate == "sle":
        return True if ahi <= blo else False if alo > bhi else None
    disjoint = ahi < blo or bhi < alo
    single = alo == ahi == blo == bhi
    if predicate == "eq":
        return True if single else False if disjoint else None
    return True if disjoint else False if single else None  # ne


class FoldRangeComparison(RewritePattern):
    """cmpi of a make_range (through shape ops) against constants, true or false on every lane
    -> that constant: `arange(0, 128) < 128` is `dense<true>`."""

    root = arith.CmpIOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if not isinstance(op.result.type, RankedTensorType):
            return False  # scalars: only constants, which fold
        a, b = value_range(op.lhs), value_range(op.rhs)
        if a is None or b is None:
            return False
        verdict = _always(op.predicate_name, a, b)
        if verdict is None:
            return False
        constant = rewriter.create(arith.ConstantOp, make_attr(op.result.type, [verdict]))
        rewriter.replace_op(op, constant)
        return True


def tt_canonicalization_patterns() -> list[RewritePattern]:
    """The patterns `canonicalize` adds to every op's own."""
    return [
        FoldAddPtrChain(),
        FoldSubOfConstantMinus(),
        FoldIdentityCast(),
        DropConstantLoadMask(),
        DropConstantStoreMask(),
        ReplaceBroadcastOfSplat(),
        ReplaceExpandDimsOfSplat(),
        ReplaceReshapeOfSplat(),
        ReplaceTransOfSplat(),
        MergeBroadcasts(),
        SwapExpandDimsAndBroadcast(),
        MergeReshapes(),
        MergeTranspositions(),
        FoldExpandDimsOfDenseConstant(),
        FoldReshapeOfDenseConstant(),
        FoldRangeComparison(),
        FoldAddressRoundTrip(),
    ]
