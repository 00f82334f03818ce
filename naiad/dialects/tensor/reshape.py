"""The reshapes of `tensor` (TensorOps.td): collapse_shape, expand_shape, reshape.

    %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<4x8x2xf32> into tensor<32x2xf32>
    %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [4, 8, 2]
           : tensor<32x2xf32> into tensor<4x8x2xf32>
    %r = tensor.reshape %t(%shape) : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<32xf32>

A reassociation names, for each dimension of the collapsed type, the consecutive dimensions of
the expanded type it merges; its rules are those of the memref reshapes (memref/reshape.py).
`expand_shape` prints its output shape with `custom<DynamicIndexList>` (tensor/syntax.py).
"""

from __future__ import annotations

from ...ir import (
    DYNAMIC,
    Constraint,
    IndexType,
    IntegerType,
    Operation,
    Pure,
    RankedTensorType,
    attribute,
    irdl_op,
    operand,
    result,
    var_operand,
)
from ..base import Index, fail
from ..memref.reshape import reassociation_attr, reassociation_groups, verify_reassociation
from ..memref.views import IndexListArrayAttr
from ..view_like import DenseI64ArrayAttr, mixed, split_mixed
from .ops import AnyRankedTensor

ShapeTensor = Constraint(
    "1D tensor of signless integer or index values",
    lambda t: (
        isinstance(t, RankedTensorType)
        and t.rank == 1
        and isinstance(t.element_type, IntegerType | IndexType)
    ),
)


def collapsed_shape(shape, groups) -> list[int]:
    """Each group's sizes multiplied (DYNAMIC if one is): CollapseShapeOp::inferCollapsedType."""
    result = []
    for g in groups:
        size = 1
        for d in g:
            size = DYNAMIC if DYNAMIC in (size, shape[d]) else size * shape[d]
        result.append(size)
    return result


def _verify_types(op, collapsed: RankedTensorType, expanded: RankedTensorType) -> None:
    if collapsed.rank > expanded.rank:
        fail(
            op,
            f"expected the expanded type, '{expanded}' to have a higher (or same) rank than the "
            f"collapsed type, '{collapsed}'.",
        )
    if collapsed.element_type is not expanded.element_type:
        fail(op, "expected the same element type for the collapsed and the expanded type")
    verify_reassociation(
        op, collapsed.shape, expanded.shape, reassociation_groups(op.reassociation)
    )


@irdl_op
class CollapseShapeOp(Operation):
    """`src` with each group of `reassociation` merged into one dimension."""

    name = "tensor.collapse_shape"
    traits = frozenset({Pure})
    src = operand(AnyRankedTensor)
    reassociation = attribute(IndexListArrayAttr)
    result = result(AnyRankedTensor)
    assembly_format = "$src $reassociation attr-dict `:` type($src) `into` type($result)"

    def __init__(self, src, reassociation, result_type=None, **fields):
        """`reassociation`: lists of source dimensions; the result type is inferred."""
        reassociation = reassociation_attr(reassociation)
        if result_type is None:
            shape = collapsed_shape(src.type.shape, reassociation_groups(reassociation))
            result_type = src.type.clone(shape=shape)
        super().__init__(src, reassociation=reassociation, result=result_type, **fields)

    def verify_(self) -> None:
        _verify_types(self, self.result.type, self.src.type)


@irdl_op
class ExpandShapeOp(Operation):
    """`src` with each dimension split into the group of `reassociation` that names it;
    `output_shape` gives the result's sizes (mixed: the dynamic ones as index values)."""

    name = "tensor.expand_shape"
    traits = frozenset({Pure})
    src = operand(AnyRankedTensor)
    reassociation = attribute(IndexListArrayAttr)
    output_shape = var_operand(Index)
    static_output_shape = attribute(DenseI64ArrayAttr)
    result = result(AnyRankedTensor)
    custom_syntax = True

    def __init__(self, src, reassociation, output_shape, result_type=None, **fields):
        """`output_shape`: the result's sizes, ints and index values; the result type is
        `src`'s element type in that shape unless given."""
        static, dynamic = split_mixed(output_shape)
        if result_type is None:
            result_type = src.type.clone(shape=static.values)
        super().__init__(
            src,
            reassociation=reassociation_attr(reassociation),
            output_shape=dynamic,
            static_output_shape=static,
            result=result_type,
            **fields,
        )

    @property
    def mixed_output_shape(self) -> list:
        return mixed(self.static_output_shape, self.output_shape)

    def verify_(self) -> None:
        result_type = self.result.type
        static = self.static_output_shape
        if len(static) != result_type.rank:
            fail(
                self,
                "expected number of static shape dims to be equal to the output rank "
                f"({result_type.rank}) but found {len(static)} inputs instead",
            )
        dynamic = sum(1 for s in static if s == DYNAMIC)
        if len(self.output_shape) != dynamic:
            fail(
                self,
                "mismatch in dynamic dims in output_shape and static_output_shape: "
                f"static_output_shape has {dynamic} dynamic dims while output_shape has "
                f"{len(self.output_shape)} values",
            )
        for pos, (size, given) in enumerate(zip(result_type.shape, static)):
            if size != DYNAMIC and size != given:
                fail(self, f"invalid output shape provided at pos {pos}")
        _verify_types(self, self.src.type, result_type)


@irdl_op
class ReshapeOp(Operation):
    """`source`'s elements, row-major, in the shape that the 1-D tensor `shape` holds."""

    name = "tensor.reshape"
    traits = frozenset({Pure})
    source = operand(AnyRankedTensor)
    shape = operand(ShapeTensor)
    result = result(AnyRankedTensor)
    assembly_format = "$source `(` $shape `)` attr-dict `:` functional-type(operands, results)"

    def __init__(self, source, shape, result_type, **fields):
        super().__init__(source, shape, result=result_type, **fields)

    def verify_(self) -> None:
        source, t = self.source.type, self.result.type
        if source.element_type is not t.element_type:
            fail(self, "element types of source and destination tensor types should be the same")
        if source.has_static_shape and t.has_static_shape and source.numel != t.numel:
            fail(self, "source and destination tensor should have the same number of elements")
        length = self.shape.type.shape[0]
        if length == DYNAMIC:
            fail(
                self,
                "cannot use shape operand with dynamic length to reshape to statically-ranked "
                "tensor type",
            )
        if length != t.rank:
            fail(self, "length of shape operand differs from the result's tensor rank")
