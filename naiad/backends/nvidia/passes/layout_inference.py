"""How a layout flows through an op: the encoding of its result given its operand's (forward),
and the encoding its operands need for a given result encoding (backward).

The TTGIR passes share these rules: convert-to-ttgir gives the results of shape ops the
layouts their operands imply, and remove-layout-conversions propagates the layouts of loads
forward and rematerializes producers backward. An op whose rule is unknown answers None: the
layout does not flow through it and a `ttg.convert_layout` stays where it meets it.

    reduce along axis a:   src E            -> result #ttg.slice<{dim = a, parent = E}>
    expand_dims axis a:    src slice(a, E)  -> result E
    trans order p:         src blocked      -> result blocked with every field permuted by p
    elementwise, broadcast, convert_layout: the same encoding
"""

from __future__ import annotations

from naiad.dialects import arith, math, scf, tt, ttg
from naiad.dialects.ttg_attributes import BlockedEncodingAttr, SliceEncodingAttr
from naiad.ir import (
    DenseElementsAttr,
    Elementwise,
    Operation,
    RankedTensorType,
    SameOperandsAndResultEncoding,
    Value,
)


def tensor_type(value: Value) -> RankedTensorType | None:
    """`value`'s type when it is a ranked tensor with at least one dimension, else None."""
    t = value.type
    return t if isinstance(t, RankedTensorType) and t.shape else None


def with_encoding(t: RankedTensorType, encoding) -> RankedTensorType:
    return t if t.encoding is encoding else t.clone(encoding=encoding)


def set_constant_type(op: arith.ConstantOp, t: RankedTensorType) -> None:
    """Give a dense tensor constant the type `t` (the same shape in another layout): its value
    attribute carries the type too."""
    attr = op.value
    op.attributes["value"] = DenseElementsAttr(t, attr.values)
    op.result.type = t


def permute_blocked(encoding, order) -> BlockedEncodingAttr | None:
    """The blocked layout of `tt.trans` with permutation `order` of a tensor in `encoding`:
    result dimension i is source dimension order[i], so every field is permuted and the
    fastest-first order renamed."""
    if not isinstance(encoding, BlockedEncodingAttr):
        return None
    inverse = _inverse(order)
    return BlockedEncodingAttr(
        [encoding.size_per_thread[d] for d in order],
        [encoding.threads_per_warp[d] for d in order],
        [encoding.warps_per_cta[d] for d in order],
        [inverse[d] for d in encoding.order],
    )


def _inverse(order) -> list[int]:
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return inverse


def keeps_encoding(op: Operation) -> bool:
    """Ops whose tensor results have the layout of their tensor operands."""
    traits = op.traits
    return (
        Elementwise in traits
        or SameOperandsAndResultEncoding in traits
        or isinstance(op, ttg.ConvertLayoutOp)
    )


def infer_dst_encoding(op: Operation, encoding):
    """The encoding of `op`'s results when its tensor operands have `encoding` (None: the
    layout does not flow through `op`)."""
    if isinstance(op, tt.ReduceOp):
        return SliceEncodingAttr(op.axis.value, encoding)
    if isinstance(op, tt.ExpandDimsOp):
        if isinstance(encoding, SliceEncodingAttr) and encoding.dim == op.axis.value:
            return encoding.parent
        return None
    if isinstance(op, tt.TransOp):
        return permute_blocked(encoding, list(op.order.values))
    if keeps_encoding(op):
        return encoding
    return None


def infer_src_encoding(op: Operation, encoding):
    """The encoding `op`'s tensor operands need for its results to have `encoding` (None: no
    such encoding is known)."""
    if isinstance(op, tt.ReduceOp):
        if isinstance(encoding, SliceEncodingAttr) and encoding.dim == op.axis.value:
            return encoding.parent
        return None
    if isinstance(op, tt.ExpandDimsOp):
        return SliceEncodingAttr(op.axis.value, encoding)
    if isinstance(op, tt.TransOp):
        return permute_blocked(encoding, _inverse(list(op.order.values)))
    if isinstance(op, tt.LoadOp) or keeps_encoding(op):
        return encoding
    return None


# Ops that take several instructions or the special-function unit: rematerializing them costs
# more than an add (remove-layout-conversions weighs them 8x).
_EXPENSIVE = (arith.DivFOp, arith.RemFOp, math.FloatUnaryOp, math.FloatBinaryOp, math.IPowIOp)


def is_expensive_math(op: Operation) -> bool:
    return isinstance(op, _EXPENSIVE) and not isinstance(op, (math.AbsFOp, math.CopySignOp))


def loop_parts(op: Operation):
    """(init operands, region arguments, results, yield) of the values an `scf.for` carries."""
    assert isinstance(op, scf.ForOp)
    body = op.body
    return op.operands[3:], body.arguments[1:], op.results, body.terminator
