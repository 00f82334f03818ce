"""`memref.collapse_shape` and `memref.expand_shape` (MemRefOps.td): views that merge or split
groups of consecutive dimensions, named by a reassociation (`[[0, 1], [2]]`).

    %c = memref.collapse_shape %m [[0, 1], [2]] : memref<4x8x2xf32> into memref<32x2xf32>
    %e = memref.expand_shape %c [[0, 1], [2]] output_shape [4, 8, 2]
           : memref<32x2xf32> into memref<4x8x2xf32>

The result layout follows upstream's computeCollapsedType / computeExpandedType: an identity
layout stays the identity; a strided one gets per-group strides (the innermost stride of a
collapsed group; an expanded group's strides grow by the sizes within it).
"""

from __future__ import annotations

from ...ir import (
    DYNAMIC,
    ArrayAttr,
    IntegerAttr,
    MemRefType,
    Operation,
    Pure,
    StridedLayoutAttr,
    attribute,
    i64,
    irdl_op,
    operand,
    result,
    var_operand,
)
from ..base import Index, fail
from ..view_like import DenseI64ArrayAttr, mixed, split_mixed, verify_index_list
from .views import AnyStridedMemRef, IndexListArrayAttr


def reassociation_attr(groups) -> ArrayAttr:
    """`[[0, 1], [2]]` from lists of ints."""
    if isinstance(groups, ArrayAttr):
        return groups
    return ArrayAttr(ArrayAttr(IntegerAttr(d, i64) for d in g) for g in groups)


def reassociation_groups(attr: ArrayAttr) -> list[list[int]]:
    return [[d.value for d in g] for g in attr]


def _product(sizes) -> int:
    total = 1
    for s in sizes:
        if s == DYNAMIC:
            return DYNAMIC
        total *= s
    return total


def _is_identity(t: MemRefType) -> bool:
    """MLIR's `layout.isIdentity()`: no layout, or a strided one whose map is the identity
    (rank 1, stride 1, offset 0)."""
    layout = t.layout
    return layout is None or (
        isinstance(layout, StridedLayoutAttr) and layout.strides == (1,) and layout.offset == 0
    )


def collapsed_type(source: MemRefType, groups: list[list[int]]) -> MemRefType | None:
    """The result of collapsing `source` by `groups`; None where its strides show a group is
    not contiguous."""
    shape = [_product(source.shape[d] for d in g) for g in groups]
    if _is_identity(source):
        return MemRefType(shape, source.element_type, None, source.memory_space)
    layout = _collapsed_layout(source, groups)
    if layout is None:
        return None
    return MemRefType(shape, source.element_type, layout, source.memory_space)


def _collapsed_layout(source: MemRefType, groups) -> StridedLayoutAttr | None:
    strides, offset = source.strides_and_offset()
    shape = source.shape
    result_strides = []
    for g in groups:
        inner = list(g)
        while len(inner) > 1 and shape[inner[-1]] == 1:
            inner.pop()  # a unit dimension's stride says nothing
        last = inner[-1]
        result_strides.append(
            strides[last] if shape[last] != DYNAMIC or len(inner) == 1 else DYNAMIC
        )
    for g, stride in zip(groups, result_strides):
        for idx in reversed(g[1:]):
            stride = DYNAMIC if DYNAMIC in (stride, shape[idx]) else stride * shape[idx]
            outer = strides[idx - 1]
            if shape[idx - 1] == 1 or DYNAMIC in (stride, outer):
                continue
            if stride != outer:
                return None
    return StridedLayoutAttr(result_strides, offset)


def expanded_type(source: MemRefType, shape, groups: list[list[int]]) -> MemRefType:
    """The result of expanding `source` to `shape` by `groups`."""
    if _is_identity(source):
        return MemRefType(shape, source.element_type, None, source.memory_space)
    strides, offset = source.strides_and_offset()
    result_strides = [1] * len(shape)
    for g, stride in zip(groups, strides):
        for d in reversed(g):
            result_strides[d] = stride
            stride = DYNAMIC if DYNAMIC in (stride, shape[d]) else stride * shape[d]
    layout = StridedLayoutAttr(result_strides, offset)
    return MemRefType(shape, source.element_type, layout, source.memory_space)


def verify_reassociation(op, collapsed: tuple, expanded: tuple, groups) -> None:
    """Upstream's verifyCollapsedShape: `groups` cover the expanded dimensions in order, one
    group per collapsed dimension, each collapsed size the product of its group's (dynamic
    if one of them is)."""
    if len(groups) != len(collapsed):
        fail(
            op,
            f"expected collapsed rank ({len(collapsed)}) to equal the number of reassociation "
            f"maps ({len(groups)})",
        )
    following = 0
    for i, g in enumerate(groups):
        if not g or g != list(range(following, following + len(g))):
            fail(op, f"expected reassociation map #{i} to be valid and contiguous")
        following += len(g)
    if following != len(expanded):
        fail(
            op,
            f"expected reassociation map #{len(groups) - 1} to cover the {len(expanded)} "
            f"dimensions of the expanded type",
        )
    for i, g in enumerate(groups):
        size = _product(expanded[d] for d in g)
        if size == DYNAMIC and collapsed[i] != DYNAMIC:
            fail(
                op,
                f"expected dimension {i} of collapsed type to be dynamic since one or more of "
                f"the corresponding dimensions in the expanded type is dynamic",
            )
        if size != DYNAMIC and collapsed[i] != size:
            fail(op, f"expected dimension {i} of collapsed type to be static value of {size}")


@irdl_op
class CollapseShapeOp(Operation):
    """`src` with each group of `reassociation` merged into one dimension."""

    name = "memref.collapse_shape"
    traits = frozenset({Pure})
    src = operand(AnyStridedMemRef)
    reassociation = attribute(IndexListArrayAttr)
    result = result(AnyStridedMemRef)
    assembly_format = "$src $reassociation attr-dict `:` type($src) `into` type($result)"

    def __init__(self, src, reassociation, result_type=None, **fields):
        """`reassociation`: lists of source dimensions; `result_type` is inferred when None."""
        reassociation = reassociation_attr(reassociation)
        if result_type is None:
            result_type = collapsed_type(src.type, reassociation_groups(reassociation))
            if result_type is None:
                raise ValueError(f"cannot collapse {src.type} by {reassociation}")
        super().__init__(src, reassociation=reassociation, result=result_type, **fields)

    def verify_(self) -> None:
        source, result_type = self.src.type, self.result.type
        groups = reassociation_groups(self.reassociation)
        verify_reassociation(self, result_type.shape, source.shape, groups)
        if _is_identity(source):
            layout = None
        else:
            layout = _collapsed_layout(source, groups)
            if layout is None:
                fail(self, "invalid source layout map or collapsing non-contiguous dims")
        expected = MemRefType(result_type.shape, source.element_type, layout, source.memory_space)
        if expected is not result_type:
            fail(self, f"expected collapsed type to be {expected} but found {result_type}")


@irdl_op
class ExpandShapeOp(Operation):
    """`src` with each dimension split into the group of `reassociation` that names it;
    `output_shape` gives the result's sizes (mixed: the dynamic ones as values)."""

    name = "memref.expand_shape"
    traits = frozenset({Pure})
    src = operand(AnyStridedMemRef)
    reassociation = attribute(IndexListArrayAttr)
    output_shape = var_operand(Index)
    static_output_shape = attribute(DenseI64ArrayAttr)
    result = result(AnyStridedMemRef)
    custom_syntax = True

    def __init__(self, src, reassociation, output_shape, result_type=None, **fields):
        """`output_shape`: the result's sizes, ints and index values; `result_type` is
        inferred when None."""
        reassociation = reassociation_attr(reassociation)
        static, dynamic = split_mixed(output_shape)
        if result_type is None:
            groups = reassociation_groups(reassociation)
            result_type = expanded_type(src.type, static.values, groups)
        super().__init__(
            src,
            reassociation=reassociation,
            output_shape=dynamic,
            static_output_shape=static,
            result=result_type,
            **fields,
        )

    @property
    def mixed_output_shape(self) -> list:
        return mixed(self.static_output_shape, self.output_shape)

    def verify_(self) -> None:
        source, result_type = self.src.type, self.result.type
        groups = reassociation_groups(self.reassociation)
        verify_reassociation(self, source.shape, result_type.shape, groups)
        expected = expanded_type(source, result_type.shape, groups)
        if expected is not result_type:
            fail(self, f"expected expanded type to be {expected} but found {result_type}")
        static = self.static_output_shape
        if len(static) != result_type.rank:
            fail(
                self,
                f"expected number of static shape bounds to be equal to the output rank "
                f"({result_type.rank}) but found {len(static)} inputs instead",
            )
        verify_index_list(self, "output_shape", static, self.output_shape, None)
        for d, (size, wanted) in enumerate(zip(result_type.shape, static)):
            if size != DYNAMIC and size != wanted:
                fail(self, f"invalid output shape provided at pos {d}")
