"""`combine`: Triton's `triton-combine` and `triton-reorder-broadcast` — fuse ops into the ones
the back ends lower well, then compute elementwise ops before broadcasts.

First phase (Combine.cpp / Combine.td), each legal as stated:

- `dot(a, b, 0) + c -> dot(a, b, c)` (addf or addi, either order): the dot has no other use;
  for addf, `maxNumImpreciseAcc` is 0. The dot moves to the add. (Triton also fuses an addf
  into `dot_scaled`; not here until the evaluator can check it.)
- `sum(x[:, :, None] * y[None, :, :], 1) -> dot(x, y)` with `inputPrecision = ieee`: the reduce
  has one 3-D operand and reduces axis 1 with a body that is one `addf` of at most 32 bits;
  its operand is a `mulf` of `broadcast(expand_dims(x, 2))`, stretching only axis 2
  (M x K x 1), and `broadcast(expand_dims(y, 0))`, stretching only axis 0 (1 x K x N); and
  N >= 16 and M >= 16 (what Combine.cpp checks: the sizes of the dot's result, not K).
- `select(c, load(p, splat(c)), o) -> load(p, splat(c), o)`: the load's mask is a splat of the
  select's (scalar) condition; volatile loads are left alone.
- `addptr(addptr(p, a), b) -> addptr(p, a + b)` (tt_canonicalize.py: when combinable).
- A reshape to 1-D read only by reductions and histograms may reorder its elements.

Second phase (ReorderBroadcast.cpp, combine_broadcast.py): an elementwise op on splats becomes
the scalar op and a splat; one on broadcasts of one shape (and splats) is computed on that
shape and broadcast; with broadcast and expand_dims canonicalizations.

    %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
    %d = tt.dot %a, %b, %z : tensor<32x16xf32> * tensor<16x32xf32> -> tensor<32x32xf32>
    %s = arith.addf %d, %c : tensor<32x32xf32>
    ==>
    %s = tt.dot %a, %b, %c : tensor<32x16xf32> * tensor<16x32xf32> -> tensor<32x32xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dialects import arith, tt
from ..ir import (
    DenseElementsAttr,
    FloatAttr,
    IntegerAttr,
    Operation,
    PatternRewriter,
    RewritePattern,
    UnitAttr,
    Value,
    apply_patterns_greedily,
    constant_value,
    register_pass,
)
from ..ir.passes import Pass
from .combine_broadcast import reorder_broadcast_patterns
from .tt_canonicalize import FoldAddPtrChain, kept_attributes


def is_zero(value: Value) -> bool:
    """A constant zero: integer, or float of either sign; scalar or splat (Triton's isZero)."""
    attr = constant_value(value)
    if isinstance(attr, DenseElementsAttr):
        if not attr.is_splat:
            return False
        number = attr.splat_value
    elif isinstance(attr, IntegerAttr | FloatAttr):
        number = attr.value
    else:
        return False
    return not isinstance(number, bool) and number == 0


class FuseAddIntoDot(RewritePattern):
    """dot(a, b, 0) + c -> dot(a, b, c) (Triton's CombineDotAdd*Pattern). As Triton, the right
    operand is tried first, and if it is a dot the left one is not tried."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        dot, addend = op.rhs.defining_op, op.lhs
        if not isinstance(dot, tt.DotOp):
            dot, addend = op.lhs.defining_op, op.rhs
            if not isinstance(dot, tt.DotOp):
                return False
        if not dot.d.has_one_use or not is_zero(dot.c):
            return False
        if isinstance(op, arith.AddFOp) and not self._exact_accumulation(dot):
            return False
        dot.set_operand(2, addend)
        dot.move_before(op)
        rewriter.notify_modified(dot)
        rewriter.replace_op(op, [dot.d])
        return True

    @staticmethod
    def _exact_accumulation(dot: Operation) -> bool:
        limit = dot.maxNumImpreciseAcc
        return limit is None or limit.value == 0


class FuseAddFIntoDot(FuseAddIntoDot):
    root = arith.AddFOp


class FuseAddIIntoDot(FuseAddIntoDot):
    root = arith.AddIOp


class FuseSelectIntoMaskedLoad(RewritePattern):
    """select(c, load(p, splat(c), _), o) -> load(p, splat(c), o) (Triton's
    CombineSelectMaskedLoadPattern)."""

    root = arith.SelectOp
    benefit = 3  # as Triton's

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        load = op.true_value.defining_op
        if not isinstance(load, tt.LoadOp) or load.mask is None:
            return False
        splat = load.mask.defining_op
        if not isinstance(splat, tt.SplatOp) or splat.src is not op.condition:
            return False
        volatile = load.attributes.get("isVolatile")
        if volatile is not None and volatile.value:
            return False  # a second volatile read is not the same program
        fused = tt.LoadOp(
            load.ptr,
            load.mask,
            op.false_value,
            attributes=kept_attributes(load),
            location=op.location,
            result=load.result.type,
        )
        rewriter.replace_op(op, rewriter.insert(fused))
        return True


def _broadcasts_only_along(op: Operation, axis: int) -> bool:
    """Triton's isBroadcastAlongAxis: only dimension `axis` is stretched."""
    src, dst = op.src.type.shape, op.result.type.shape
    return all((a != b) == (i == axis) for i, (a, b) in enumerate(zip(src, dst)))


def _single_addf_body(reduce: Operation) -> bool:
    """The combine region is `addf(arg0, arg1)` (either order) of at most 32 bits, returned."""
    block = reduce.combineOp.block
    ops = list(block)
    if len(ops) != 2 or not isinstance(ops[0], arith.AddFOp):
        return False
    add, ret = ops
    if add.result.type.width > 32 or list(ret.operands) != [add.result]:
        return False
    return {add.lhs, add.rhs} == set(block.arguments) and add.lhs is not add.rhs


class RewriteBroadcastMulReduceAsDot(RewritePattern):
    """sum(x[:, :, None] * y[None, :, :], 1) -> dot(x, y) (Triton's
    CombineBroadcastMulReducePattern, in the form Triton 3.8 applies: the dot takes x and y,
    the sources of the expand_dims)."""

    root = tt.ReduceOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if len(op.srcs) != 1 or op.srcs[0].type.rank != 3 or op.axis.value != 1:
            return False
        if not _single_addf_body(op):
            return False
        mul = op.srcs[0].defining_op
        if not isinstance(mul, arith.MulFOp):
            return False
        x = _expanded_source(mul.lhs, axis=2)
        y = _expanded_source(mul.rhs, axis=0)
        if x is None or y is None:
            return False
        m, n = x.type.shape[0], y.type.shape[1]
        if n < 16 or m < 16:
            return False
        zero = rewriter.create(arith.ConstantOp, FloatAttr(0.0, x.type.element_type)).result
        acc = rewriter.create(tt.SplatOp, zero, shape=[m, n]).result
        rewriter.replace_op(op, rewriter.create(tt.DotOp, x, y, acc, inputPrecision="ieee"))
        return True


def _expanded_source(value: Value, axis: int) -> Value | None:
    """x when `value` is broadcast(expand_dims(x, axis)) stretching only dimension `axis`."""
    broadcast = value.defining_op
    if not isinstance(broadcast, tt.BroadcastOp) or not _broadcasts_only_along(broadcast, axis):
        return None
    expand = broadcast.src.defining_op
    if not isinstance(expand, tt.ExpandDimsOp) or expand.axis.value != axis:
        return None
    return expand.src


class AllowReorderBeforeReduce(RewritePattern):
    """A reshape to 1-D read only by reductions and histograms may reorder its elements
    (Triton's CombineReshapeReducePatterns)."""

    root = tt.ReshapeOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if op.allow_reorder is not None or op.result.type.rank != 1:
            return False
        if not all(isinstance(u, tt.ReduceOp | tt.HistogramOp) for u in op.result.users):
            return False
        with rewriter.modify_op_in_place(op):
            op.attributes["allow_reorder"] = UnitAttr()
        return True


def combine_patterns() -> list[RewritePattern]:
    """The first phase's patterns, Triton's triton-combine."""
    return [
        FuseAddFIntoDot(),
        FuseAddIIntoDot(),
        FuseSelectIntoMaskedLoad(),
        FoldAddPtrChain(),
        RewriteBroadcastMulReduceAsDot(),
        AllowReorderBeforeReduce(),
    ]


@register_pass("combine")
@dataclass(frozen=True)
class Combine(Pass):
    """Triton's combine patterns, then its broadcast reordering, each to a fixed point."""

    max_iterations: int = 10

    def run(self, module: Operation) -> None:
        for patterns in (combine_patterns(), reorder_broadcast_patterns()):
            apply_patterns_greedily(module, patterns, max_iterations=self.max_iterations)
