"""`tt` ops that move data between tensor shapes: splat, broadcast, expand_dims, reshape, trans,
join, split, cat, gather, histogram (TritonOps.td).

Constructors infer the result where Triton does (`ExpandDimsOp(x, 0)`, `TransOp(x, [1, 0])`,
`JoinOp(a, b)`, `SplitOp(x)`); `SplatOp`, `BroadcastOp` and `ReshapeOp` take the result type
(`result=`) or just its `shape=`. Splat constants fold through every one of them.
"""

from __future__ import annotations

from ...ir import (
    Operation,
    Pure,
    RankedTensorType,
    SameOperandsAndResultElementType,
    SameOperandsAndResultEncoding,
    UnitAttr,
    attribute,
    irdl_op,
    operand,
    opt_attribute,
    opt_operand,
    result,
)
from ...ir.rewriter import constant_value
from ..base import (
    DenseI32ArrayAttr,
    I32Attr,
    SameTypeOperands,
    UnitAttrC,
    check_inferred,
    fail,
    i1_like,
    i32_array,
    i32_attr,
    splat_of,
)
from .types import TT, TT_BoolLike, TT_IntTensor, TT_Tensor, TT_Type

_TO = "$src attr-dict `:` type($src) `->` type($result)"


def _with_shape(fields: dict, like, shape) -> None:
    """Let a constructor take `shape=` instead of `result=`: `like`'s element type and
    encoding with that shape."""
    if shape is not None and "result" not in fields:
        t = like.type
        if isinstance(t, RankedTensorType):
            fields["result"] = t.clone(shape=shape)
        else:
            fields["result"] = RankedTensorType(shape, t)


def _fold_splat(op):
    """A splat constant operand becomes a splat constant of the result type."""
    folded = splat_of(constant_value(op.src), op.result.type)
    return None if folded is None else (folded,)


@irdl_op
class SplatOp(Operation):
    """A scalar copied into every element of a tensor."""

    name = "tt.splat"
    traits = TT | {Pure, SameOperandsAndResultElementType, SameOperandsAndResultEncoding}
    src = operand(TT_Type)
    result = result(TT_Tensor)
    assembly_format = _TO

    def __init__(self, src, *, shape=None, **kwargs):
        _with_shape(kwargs, src, shape)
        super().__init__(src, **kwargs)

    fold = _fold_splat


@irdl_op
class UnsplatOp(Operation):
    """The only element of a one-element tensor, as a scalar."""

    name = "tt.unsplat"
    traits = TT | {Pure}
    src = operand(TT_Tensor)
    result = result(TT_Type)
    assembly_format = "$src attr-dict `:` type($src)"
    type_inference = (("result", "src", lambda t: t.element_type),)

    def __init__(self, src, **kwargs):
        kwargs.setdefault("result", src.type.element_type)
        super().__init__(src, **kwargs)

    def verify_(self) -> None:
        if self.src.type.numel != 1:
            fail(self, "source tensor must have exactly one element")
        check_inferred(self, [self.src.type.element_type])


@irdl_op
class ExpandDimsOp(Operation):
    """A new dimension of size 1 at `axis`."""

    name = "tt.expand_dims"
    traits = TT | {Pure, SameOperandsAndResultElementType}
    src = operand(TT_Tensor)
    axis = attribute(I32Attr)
    result = result(TT_Tensor)
    assembly_format = _TO

    def __init__(self, src, axis, **kwargs):
        kwargs.setdefault("result", self.infer(src.type, int(getattr(axis, "value", axis))))
        super().__init__(src, axis=i32_attr(axis), **kwargs)

    @staticmethod
    def infer(t: RankedTensorType, axis: int) -> RankedTensorType:
        shape = list(t.shape)
        shape.insert(axis, 1)
        return t.clone(shape=shape)

    def verify_(self) -> None:
        axis = self.axis.value
        if not 0 <= axis <= self.src.type.rank:
            fail(self, f"invalid axis {axis} for a tensor of rank {self.src.type.rank}")
        inferred = self.infer(self.src.type, axis)
        check_inferred(self, [inferred.clone(encoding=self.result.type.encoding)])

    fold = _fold_splat


@irdl_op
class ReshapeOp(Operation):
    """The same elements in another shape; `allow_reorder` lets the compiler permute them."""

    name = "tt.reshape"
    traits = TT | {Pure, SameOperandsAndResultElementType}
    src = operand(TT_Tensor)
    allow_reorder = opt_attribute(UnitAttrC)
    efficient_layout = opt_attribute(UnitAttrC)
    result = result(TT_Tensor)
    assembly_format = (
        "$src (`allow_reorder` $allow_reorder^)? (`efficient_layout` $efficient_layout^)? "
        "attr-dict `:` type($src) `->` type($result)"
    )

    def __init__(self, src, *, shape=None, allow_reorder=False, **kwargs):
        _with_shape(kwargs, src, shape)
        super().__init__(src, allow_reorder=UnitAttr() if allow_reorder else None, **kwargs)

    def verify_(self) -> None:
        if self.src.type.numel != self.result.type.numel:
            fail(self, "number of src and dst elements of reshape must be the same")

    def fold(self):
        if self.src.type is self.result.type:
            return (self.src,)
        return _fold_splat(self)


@irdl_op
class BroadcastOp(Operation):
    """Dimensions of size 1 stretched to the result's size."""

    name = "tt.broadcast"
    traits = TT | {Pure, SameOperandsAndResultElementType, SameOperandsAndResultEncoding}
    src = operand(TT_Tensor)
    result = result(TT_Tensor)
    assembly_format = _TO

    def __init__(self, src, *, shape=None, **kwargs):
        _with_shape(kwargs, src, shape)
        super().__init__(src, **kwargs)

    def verify_(self) -> None:
        src, dst = self.src.type.shape, self.result.type.shape
        if len(src) != len(dst):
            fail(self, "rank of source must be same as rank of result")
        for i, (a, b) in enumerate(zip(src, dst)):
            if a != 1 and a != b:
                fail(
                    self,
                    f"Different dimensions at index {i} between source and result.  "
                    "Broadcast requires the source dimension to be 1.",
                )

    def fold(self):
        if self.src.type is self.result.type:
            return (self.src,)
        return _fold_splat(self)


@irdl_op
class CatOp(Operation):
    """Two tensors concatenated, in an unspecified element order (Triton's `tl.cat`).
    Upstream it has no memory effect but is not speculatable; Pure here means the former."""

    name = "tt.cat"
    traits = TT | {Pure, SameTypeOperands, SameOperandsAndResultElementType}
    lhs = operand(TT_Tensor)
    rhs = operand(TT_Tensor)
    result = result(TT_Tensor)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"
    type_inference = (("rhs", "lhs", None),)


@irdl_op
class JoinOp(Operation):
    """Two tensors of one type stacked along a new minor dimension of size 2."""

    name = "tt.join"
    traits = TT | {Pure, SameTypeOperands}
    lhs = operand(TT_Tensor)
    rhs = operand(TT_Tensor)
    result = result(TT_Tensor)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"
    type_inference = (("rhs", "lhs", None),)

    def __init__(self, lhs, rhs, **kwargs):
        kwargs.setdefault("result", lhs.type.clone(shape=(*lhs.type.shape, 2), encoding=None))
        super().__init__(lhs, rhs, **kwargs)

    def verify_(self) -> None:
        t = self.result.type
        lhs = self.lhs.type
        if t.shape != (*lhs.shape, 2) or t.element_type is not lhs.element_type:
            check_inferred(self, [lhs.clone(shape=(*lhs.shape, 2), encoding=t.encoding)])


@irdl_op
class SplitOp(Operation):
    """A tensor whose minor dimension has size 2, as its two halves."""

    name = "tt.split"
    traits = TT | {Pure}
    src = operand(TT_Tensor)
    outLHS = result(TT_Tensor)  # the ODS name
    outRHS = result(TT_Tensor)  # the ODS name
    assembly_format = "$src attr-dict `:` type($src) `->` type($outLHS)"
    type_inference = (("outRHS", "outLHS", None),)

    def __init__(self, src, **kwargs):
        half = src.type.clone(shape=src.type.shape[:-1], encoding=None)
        kwargs.setdefault("outLHS", half)
        kwargs.setdefault("outRHS", half)
        super().__init__(src, **kwargs)

    def verify_(self) -> None:
        src = self.src.type
        if not src.shape or src.shape[-1] != 2:
            fail(
                self,
                f"Split op requires input tensor's last dimension to be 2, but got {src}",
            )
        if self.outLHS.type is not self.outRHS.type:
            fail(self, "failed to verify that outLHS and outRHS types match")
        if self.outLHS.type.shape != src.shape[:-1]:
            check_inferred(self, [src.clone(shape=src.shape[:-1])] * 2)


@irdl_op
class TransOp(Operation):
    """Dimensions permuted: result dimension i is source dimension `order[i]` (`tl.trans`,
    `tl.permute`)."""

    name = "tt.trans"
    traits = TT | {Pure, SameOperandsAndResultElementType}
    src = operand(TT_Tensor)
    order = attribute(DenseI32ArrayAttr)
    result = result(TT_Tensor)
    assembly_format = _TO

    def __init__(self, src, order, **kwargs):
        order = i32_array(order)
        shape = [src.type.shape[i] for i in order]
        kwargs.setdefault("result", src.type.clone(shape=shape, encoding=None))
        super().__init__(src, order=order, **kwargs)

    def verify_(self) -> None:
        order = list(self.order)
        rank = self.src.type.rank
        if len(order) != rank:
            fail(self, "order must have the same size as the rank of the operand and result")
        if sorted(order) != list(range(rank)):
            fail(self, "order must be a permutation of 0..(rank-1)")
        shape = [self.src.type.shape[i] for i in order]
        if list(self.result.type.shape) != shape:
            check_inferred(self, [self.src.type.clone(shape=shape)])

    def fold(self):
        if list(self.order) == list(range(len(self.order))):
            return (self.src,)
        return _fold_splat(self)


@irdl_op
class HistogramOp(Operation):
    """Counts of the values of `src` in bins [0, n) (n = the result's size); masked-off lanes
    are not counted."""

    name = "tt.histogram"
    traits = TT | {Pure}
    src = operand(TT_IntTensor)
    mask = opt_operand(TT_BoolLike)
    result = result(TT_IntTensor)
    assembly_format = "$src (`,` $mask^)? attr-dict `:` type($src) `->` type($result)"
    type_inference = (("mask", "src", i1_like),)

    def verify_(self) -> None:
        if self.mask is not None and self.mask.type is not i1_like(self.src.type):
            fail(self, "failed to verify that mask type matches src type")


@irdl_op
class GatherOp(Operation):
    """`result[i][j] = src[indices[i][j]][j]` along `axis` (`tl.gather`)."""

    name = "tt.gather"
    traits = TT | {Pure}
    src = operand(TT_Tensor)
    indices = operand(TT_IntTensor)
    axis = attribute(I32Attr)
    efficient_layout = opt_attribute(UnitAttrC)
    result = result(TT_Tensor)
    assembly_format = "$src `[` $indices `]` attr-dict `:` functional-type(operands, results)"

    def __init__(self, src, indices, axis, **kwargs):
        kwargs.setdefault(
            "result", indices.type.clone(element_type=src.type.element_type, encoding=None)
        )
        super().__init__(src, indices, axis=i32_attr(axis), **kwargs)

    def verify_(self) -> None:
        src, indices, res = self.src.type, self.indices.type, self.result.type
        axis = self.axis.value
        if indices.shape != res.shape:
            fail(self, "indices and output shapes must match")
        if src.element_type is not res.element_type:
            fail(self, "input and output element types must match")
        if src.rank != indices.rank:
            fail(self, "input and indices ranks must match")
        if not 0 <= axis < src.rank:
            fail(self, "gather dimension must be less than the input rank")
        for dim in range(indices.rank):
            if dim != axis and indices.shape[dim] != src.shape[dim]:
                fail(self, f"indices dimension {dim} must match the corresponding input dimension")
