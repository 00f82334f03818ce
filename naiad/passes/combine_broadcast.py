"""The second phase of `combine` (Triton's `triton-reorder-broadcast`): elementwise ops computed
before broadcasts and splats, on the small shape, so the wide shape is materialized once.

Legal for ops that are Elementwise and Pure (no memory effect), have no regions, and take only
values defined by splats, splat constants or broadcasts; for the broadcast rewrite, every
broadcast operand comes from the same source shape. Inline asm working on several elements at
a time (`packed_element > 1`) is left alone: its groups of elements would change.

    %a = tt.splat %x : f32 -> tensor<128xf32>          %s = arith.addf %x, %c1 : f32
    %c = arith.constant dense<1.0> : tensor<128xf32> ==> %a = tt.splat %s : f32 -> tensor<128xf32>
    %s = arith.addf %a, %c : tensor<128xf32>

    %b = tt.broadcast %x : tensor<1x64xf32> -> tensor<32x64xf32>
    %e = math.exp %b : tensor<32x64xf32>
    ==>
    %e0 = math.exp %x : tensor<1x64xf32>
    %e = tt.broadcast %e0 : tensor<1x64xf32> -> tensor<32x64xf32>
"""

from __future__ import annotations

from ..dialects import arith, tt
from ..dialects.arith.folding import make_attr
from ..ir import (
    DenseElementsAttr,
    Elementwise,
    Operation,
    PatternRewriter,
    Pure,
    RankedTensorType,
    RewritePattern,
    Value,
    constant_value,
    create_operation,
)
from .tt_canonicalize import (
    MergeBroadcasts,
    ReplaceBroadcastOfSplat,
    ReplaceExpandDimsOfSplat,
    SwapExpandDimsAndBroadcast,
)


def _splat_constant(value: Value) -> DenseElementsAttr | None:
    """The splat dense attribute of the constant defining `value`, else None."""
    attr = constant_value(value)
    if isinstance(attr, DenseElementsAttr) and attr.is_splat:
        return attr
    return None


def _is_splat(value: Value) -> bool:
    return isinstance(value.defining_op, tt.SplatOp) or _splat_constant(value) is not None


def _reorderable(op: Operation) -> bool:
    traits = op.traits
    if Elementwise not in traits or Pure not in traits or op.regions or not op.operands:
        return False
    packed = op.attributes.get("packed_element")
    if packed is not None and packed.value != 1:
        return False
    return all(isinstance(r.type, RankedTensorType) for r in op.results)


def _rebuilt(op: Operation, operands: list, result_types: list, rewriter) -> Operation:
    """`op` with other operands and result types, its attributes kept, inserted."""
    copy = create_operation(
        op.name, operands, result_types, dict(op.attributes), location=op.location
    )
    return rewriter.insert(copy)


class MoveSplatAfterElementwise(RewritePattern):
    """elementwise(splat(a), splat(b), ...) -> splat(elementwise(a, b, ...))."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if not _reorderable(op) or not all(_is_splat(v) for v in op.operands):
            return False
        scalars = []
        for value in op.operands:
            splat = value.defining_op
            if isinstance(splat, tt.SplatOp):
                scalars.append(splat.src)
                continue
            attr = _splat_constant(value)
            scalar = make_attr(attr.type.element_type, [attr.splat_value])
            scalars.append(rewriter.create(arith.ConstantOp, scalar).result)
        types = [r.type.element_type for r in op.results]
        scalar_op = _rebuilt(op, scalars, types, rewriter)
        splats = [
            rewriter.create(tt.SplatOp, new, result=old.type).result
            for new, old in zip(scalar_op.results, op.results)
        ]
        rewriter.replace_op(op, splats)
        return True


def _broadcast_source_type(op: Operation) -> RankedTensorType | None:
    """The source type of the broadcasts among `op`'s operands, when all the others are splats
    and every broadcast has a source of the same shape; None otherwise."""
    source = None
    for value in op.operands:
        producer = value.defining_op
        if isinstance(producer, tt.BroadcastOp):
            if source is None:
                source = producer.src.type
            elif producer.src.type.shape != source.shape:
                return None
        elif not _is_splat(value):
            return None
    return source


class MoveBroadcastAfterElementwise(RewritePattern):
    """elementwise(broadcast(a), splat(b), ...) -> broadcast(elementwise(a, splat'(b), ...))
    with splat' of a's shape."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if not _reorderable(op):
            return False
        source = _broadcast_source_type(op)
        if source is None:
            return False
        operands = [self._narrowed(v, source, rewriter) for v in op.operands]
        types = [source.clone(element_type=r.type.element_type) for r in op.results]
        narrow_op = _rebuilt(op, operands, types, rewriter)
        widened = [
            rewriter.create(tt.BroadcastOp, new, result=old.type).result
            for new, old in zip(narrow_op.results, op.results)
        ]
        rewriter.replace_op(op, widened)
        return True

    @staticmethod
    def _narrowed(value: Value, source: RankedTensorType, rewriter) -> Value:
        producer = value.defining_op
        if isinstance(producer, tt.BroadcastOp):
            return producer.src
        narrow = source.clone(element_type=value.type.element_type)
        if isinstance(producer, tt.SplatOp):
            return rewriter.create(tt.SplatOp, producer.src, result=narrow).result
        attr = _splat_constant(value)
        return rewriter.create(arith.ConstantOp, DenseElementsAttr(narrow, attr.splat_value)).result


def reorder_broadcast_patterns() -> list[RewritePattern]:
    """Triton's reorder-broadcast set: broadcast and expand_dims canonicalizations and the two
    moves."""
    return [
        ReplaceBroadcastOfSplat(),
        MergeBroadcasts(),
        ReplaceExpandDimsOfSplat(),
        SwapExpandDimsAndBroadcast(),
        MoveBroadcastAfterElementwise(),
        MoveSplatAfterElementwise(),
    ]
