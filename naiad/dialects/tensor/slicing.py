"""`tensor.extract_slice` and `tensor.insert_slice` (TensorOps.td): a strided box of a tensor,
read out or written in.

    %s = tensor.extract_slice %t[0, %o] [4, %n] [1, 1] : tensor<8x16xf32> to tensor<4x?xf32>
    %u = tensor.insert_slice %s into %t[0, %o] [4, %n] [1, 1]
           : tensor<4x?xf32> into tensor<8x16xf32>

Offsets, sizes and strides are mixed lists of ints and index values (view_like.py). The slice's
type is the sizes' shape (DYNAMIC where a size is a value) and may drop unit dimensions
(rank-reducing: `[0, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<16xf32>`).
"""

from __future__ import annotations

from ...ir import (
    DYNAMIC,
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
from ..view_like import DenseI64ArrayAttr, kept_dimensions, mixed, split_mixed, verify_index_list
from .ops import AnyRankedTensor


def rank_reduction_mask(original, reduced) -> set[int] | None:
    """The dimensions of `original` to drop to get `reduced` (unit dimensions, matched
    greedily from the front), or None if there are none such: computeRankReductionMask."""
    kept = kept_dimensions(original, reduced)
    return None if kept is None else set(range(len(original))) - set(kept)


def slice_type(source: RankedTensorType, sizes) -> RankedTensorType:
    """The full-rank type of a slice of `source` with these static sizes (DYNAMIC for a
    value): ExtractSliceOp::inferResultType."""
    return RankedTensorType(sizes, source.element_type, source.encoding)


def _check_slice(op, expected: RankedTensorType, actual: RankedTensorType) -> None:
    """produceSliceErrorMsg for isRankReducedType(expected, actual)."""
    if actual.rank > expected.rank:
        fail(op, "expected rank to be smaller or equal to the other rank. ")
    if actual.element_type is not expected.element_type:
        fail(op, f"expected element type to be '{expected.element_type}'")
    if rank_reduction_mask(expected.shape, actual.shape) is None:
        fail(op, f"expected type to be '{expected}' or a rank-reduced version. (size mismatch) ")


def _check_in_bounds(op, shape, offsets, sizes, strides) -> None:
    """verifyInBoundsSlice: static offsets and last positions inside static dimensions."""
    for i, dim in enumerate(shape):
        offset = offsets[i]
        if dim == DYNAMIC or offset == DYNAMIC:
            continue
        if offset >= dim:
            fail(op, f"offset {i} is out-of-bounds: {offset} >= {dim}")
        if DYNAMIC in (sizes[i], strides[i]):
            continue
        last = offset + (sizes[i] - 1) * strides[i]
        if last >= dim:
            fail(op, f"slice along dimension {i} runs out-of-bounds: {last} >= {dim}")


class _SliceOp(Operation):
    """What both slice ops do with their offsets, sizes and strides (each declares the
    fields itself: the sliced operands come first)."""

    @staticmethod
    def _lists(offsets, sizes, strides) -> dict:
        fields = {}
        for name, items in (("offsets", offsets), ("sizes", sizes), ("strides", strides)):
            static, dynamic = split_mixed(items)
            fields[name] = dynamic
            fields["static_" + name] = static
        return fields

    @property
    def mixed_offsets(self) -> list:
        return mixed(self.static_offsets, self.offsets)

    @property
    def mixed_sizes(self) -> list:
        return mixed(self.static_sizes, self.sizes)

    @property
    def mixed_strides(self) -> list:
        return mixed(self.static_strides, self.strides)

    def _verify_slice(self, full: RankedTensorType, part: RankedTensorType) -> None:
        """`part` is the slice of `full` that the lists describe."""
        rank = full.rank
        verify_index_list(self, "offset", self.static_offsets, self.offsets, rank)
        verify_index_list(self, "size", self.static_sizes, self.sizes, rank)
        verify_index_list(self, "stride", self.static_strides, self.strides, rank)
        _check_slice(self, slice_type(full, self.static_sizes.values), part)
        _check_in_bounds(
            self,
            full.shape,
            self.static_offsets.values,
            self.static_sizes.values,
            self.static_strides.values,
        )


@irdl_op
class ExtractSliceOp(_SliceOp):
    """The slice of `source` at `offsets`, of `sizes`, stepping by `strides`."""

    name = "tensor.extract_slice"
    traits = frozenset({Pure})
    source = operand(AnyRankedTensor)
    offsets = var_operand(Index)
    sizes = var_operand(Index)
    strides = var_operand(Index)
    static_offsets = attribute(DenseI64ArrayAttr)
    static_sizes = attribute(DenseI64ArrayAttr)
    static_strides = attribute(DenseI64ArrayAttr)
    result = result(AnyRankedTensor)
    custom_syntax = True

    def __init__(self, source, offsets, sizes, strides, result_type=None, **fields):
        """Lists of ints and index values; the result type is the full-rank slice type
        unless given (a rank-reduced one, say)."""
        lists = self._lists(offsets, sizes, strides)
        if result_type is None:
            result_type = slice_type(source.type, lists["static_sizes"].values)
        super().__init__(source, result=result_type, **lists, **fields)

    def verify_(self) -> None:
        self._verify_slice(self.source.type, self.result.type)


@irdl_op
class InsertSliceOp(_SliceOp):
    """`dest` with the slice at `offsets`, of `sizes`, stepping by `strides`, replaced by
    `source`."""

    name = "tensor.insert_slice"
    traits = frozenset({Pure})
    source = operand(AnyRankedTensor)
    dest = operand(AnyRankedTensor)
    offsets = var_operand(Index)
    sizes = var_operand(Index)
    strides = var_operand(Index)
    static_offsets = attribute(DenseI64ArrayAttr)
    static_sizes = attribute(DenseI64ArrayAttr)
    static_strides = attribute(DenseI64ArrayAttr)
    result = result(AnyRankedTensor)
    custom_syntax = True

    def __init__(self, source, dest, offsets, sizes, strides, **fields):
        fields.setdefault("result", dest.type)
        super().__init__(source, dest, **self._lists(offsets, sizes, strides), **fields)

    def verify_(self) -> None:
        if self.result.type is not self.dest.type:
            fail(self, "failed to verify that expected result type to match dest type")
        self._verify_slice(self.dest.type, self.source.type)
