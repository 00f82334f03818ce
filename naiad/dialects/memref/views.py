"""The view ops of `memref` (MemRefOps.td): new memref descriptors over the same memory.

    %view = memref.reinterpret_cast %x to offset: [%off], sizes: [1024], strides: [1]
              : memref<*xf32> to memref<1024xf32, strided<[1], offset: ?>>
    %sub = memref.subview %view[0] [%len] [1]
              : memref<1024xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
    %e = memref.expand_shape %m [[0, 1]] output_shape [4, 8] : memref<32xf32> into memref<4x8xf32>
    %c = memref.collapse_shape %e [[0, 1]] : memref<4x8xf32> into memref<32xf32>
    %view = memref.view %bytes[%shift][%n] : memref<?xi8> to memref<?xf32>

Offsets, sizes and strides are mixed lists of ints and index values (view_like.py). The result
types follow upstream's inference, which the verifiers check: a subview's strides multiply the
source's and its offset adds `offset . strides` (DYNAMIC as soon as an operand is); a
reassociation reshape keeps an identity layout and otherwise computes strides per group.
"""

from __future__ import annotations

from ...ir import (
    DYNAMIC,
    ArrayAttr,
    Constraint,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Operation,
    Pure,
    StridedLayoutAttr,
    attribute,
    i64,
    irdl_op,
    is_memref,
    operand,
    result,
    var_operand,
)
from ..base import Index, fail
from ..view_like import (
    DenseI64ArrayAttr,
    dim_text,
    kept_dimensions,
    mixed,
    split_mixed,
    verify_index_list,
)

AnyMemRef = Constraint("memref of any type values", lambda t: isinstance(t, MemRefType))
AnyRankedOrUnrankedMemRef = Constraint("ranked or unranked memref of any type values", is_memref)
AnyStridedMemRef = Constraint(
    "strided memref of any type values",
    lambda t: isinstance(t, MemRefType) and t.strides_and_offset() is not None,
)
IndexListArrayAttr = Constraint(
    "Array of 64-bit integer array attributes",
    lambda a: (
        isinstance(a, ArrayAttr)
        and all(
            isinstance(g, ArrayAttr)
            and all(isinstance(i, IntegerAttr) and i.type is i64 for i in g)
            for g in a
        )
    ),
)


def _mul(a: int, b: int) -> int:
    return DYNAMIC if DYNAMIC in (a, b) else a * b


def _add(a: int, b: int) -> int:
    return DYNAMIC if DYNAMIC in (a, b) else a + b


def subview_type(source: MemRefType, offsets, sizes, strides) -> MemRefType:
    """The full-rank result type of a subview (static entries, DYNAMIC where dynamic):
    upstream's SubViewOp::inferResultType, always with a strided layout."""
    src_strides, offset = _strided(source)
    for o, s in zip(offsets, src_strides):
        offset = _add(offset, _mul(o, s))
    result_strides = [_mul(s, t) for s, t in zip(src_strides, strides)]
    layout = StridedLayoutAttr(result_strides, offset)
    return MemRefType(sizes, source.element_type, layout, source.memory_space)


def _strided(t: MemRefType) -> tuple[tuple[int, ...], int]:
    found = t.strides_and_offset()
    if found is None:
        raise ValueError(f"{t} has no strided layout")
    return found


def _offset_size_stride(op, rank: int, offset_rank: int) -> None:
    verify_index_list(op, "offset", op.static_offsets, op.offsets, offset_rank)
    verify_index_list(op, "size", op.static_sizes, op.sizes, rank)
    verify_index_list(op, "stride", op.static_strides, op.strides, rank)


class _OffsetSizeStrideOp(Operation):
    """A view op with mixed offsets, sizes and strides, and their static arrays (declared by
    each op, after its source)."""

    custom_syntax = True

    def _build(self, source, result_type, offsets, sizes, strides, fields) -> None:
        static_offsets, dynamic_offsets = split_mixed(offsets)
        static_sizes, dynamic_sizes = split_mixed(sizes)
        static_strides, dynamic_strides = split_mixed(strides)
        if result_type is None:
            result_type = self.infer_type(
                source.type, static_offsets.values, static_sizes.values, static_strides.values
            )
        Operation.__init__(
            self,
            source,
            offsets=dynamic_offsets,
            sizes=dynamic_sizes,
            strides=dynamic_strides,
            static_offsets=static_offsets,
            static_sizes=static_sizes,
            static_strides=static_strides,
            result=result_type,
            **fields,
        )

    @property
    def mixed_offsets(self) -> list:
        return mixed(self.static_offsets, self.offsets)

    @property
    def mixed_sizes(self) -> list:
        return mixed(self.static_sizes, self.sizes)

    @property
    def mixed_strides(self) -> list:
        return mixed(self.static_strides, self.strides)


@irdl_op
class SubViewOp(_OffsetSizeStrideOp):
    """A strided window of `source`: offsets, sizes and strides relative to its own layout;
    the result may drop unit dimensions (a rank-reducing subview)."""

    name = "memref.subview"
    traits = frozenset({Pure})
    source = operand(AnyMemRef)
    offsets = var_operand(Index)
    sizes = var_operand(Index)
    strides = var_operand(Index)
    static_offsets = attribute(DenseI64ArrayAttr)
    static_sizes = attribute(DenseI64ArrayAttr)
    static_strides = attribute(DenseI64ArrayAttr)
    result = result(AnyMemRef)

    def __init__(self, source, offsets, sizes, strides, result_type=None, **fields):
        """Mixed lists of ints and index values; `result_type` is inferred when None."""
        self._build(source, result_type, offsets, sizes, strides, fields)

    @staticmethod
    def infer_type(source_type, offsets, sizes, strides) -> MemRefType:
        """The full-rank result type for these entries (ints, or values: DYNAMIC)."""
        return subview_type(
            source_type, *(split_mixed(x)[0].values for x in (offsets, sizes, strides))
        )

    def verify_(self) -> None:
        source, result_type = self.source.type, self.result.type
        _offset_size_stride(self, source.rank, source.rank)
        if source.strides_and_offset() is None:
            fail(self, f"expected a strided source, got {source}")
        expected = subview_type(
            source, self.static_offsets.values, self.static_sizes.values, self.static_strides.values
        )
        if result_type.element_type is not source.element_type:
            fail(self, f"expected result element type to be {source.element_type}")
        if result_type.memory_space is not source.memory_space:
            fail(self, "expected result and source memory spaces to match.")
        if result_type.rank > source.rank:
            fail(self, "expected result rank to be smaller or equal to the source rank.")
        kept = kept_dimensions(expected.shape, result_type.shape)
        if kept is None:
            fail(self, _subview_mismatch(expected, "sizes"))
        found = result_type.strides_and_offset()
        expected_strides, expected_offset = _strided(expected)
        if found is None or found[1] != expected_offset:
            fail(self, _subview_mismatch(expected, "layout"))
        if tuple(found[0]) != tuple(expected_strides[d] for d in kept):
            fail(self, _subview_mismatch(expected, "layout"))


def _subview_mismatch(expected: MemRefType, what: str) -> str:
    return (
        f"expected result type to be {expected} or a rank-reduced version. (mismatch of result "
        f"{what})"
    )


@irdl_op
class ReinterpretCastOp(_OffsetSizeStrideOp):
    """A new descriptor over the memory of `source` (ranked or unranked): offset, sizes and
    strides relative to its base, not to its layout."""

    name = "memref.reinterpret_cast"
    traits = frozenset({Pure})
    source = operand(AnyRankedOrUnrankedMemRef)
    offsets = var_operand(Index)
    sizes = var_operand(Index)
    strides = var_operand(Index)
    static_offsets = attribute(DenseI64ArrayAttr)
    static_sizes = attribute(DenseI64ArrayAttr)
    static_strides = attribute(DenseI64ArrayAttr)
    result = result(AnyStridedMemRef)

    def __init__(self, source, result_type, offsets, sizes, strides, **fields):
        """`offsets` (one entry, or a list of one), `sizes` and `strides`: mixed lists of ints
        and index values; `result_type` is inferred when None."""
        if not isinstance(offsets, list | tuple):
            offsets = [offsets]
        self._build(source, result_type, offsets, sizes, strides, fields)

    @staticmethod
    def infer_type(source_type, offsets, sizes, strides) -> MemRefType:
        (offset,) = split_mixed(offsets)[0].values
        layout = StridedLayoutAttr(split_mixed(strides)[0].values, offset)
        shape = split_mixed(sizes)[0].values
        return MemRefType(shape, source_type.element_type, layout, source_type.memory_space)

    def verify_(self) -> None:
        source, result_type = self.source.type, self.result.type
        _offset_size_stride(self, result_type.rank, 1)
        for what, a, b in (
            ("memory spaces", source.memory_space, result_type.memory_space),
            ("element types", source.element_type, result_type.element_type),
        ):
            if a is not b:
                fail(
                    self,
                    f"different {what} specified for source type {source} and result type "
                    f"{result_type}",
                )
        for d, (actual, wanted) in enumerate(zip(result_type.shape, self.static_sizes)):
            if actual != DYNAMIC and actual != wanted:
                fail(
                    self,
                    f"expected result type with size = {dim_text(wanted)} instead of {actual} in "
                    f"dim = {d}",
                )
        strides, offset = _strided(result_type)
        (wanted,) = self.static_offsets.values
        if offset != DYNAMIC and offset != wanted:
            fail(self, f"expected result type with offset = {dim_text(wanted)} instead of {offset}")
        for d, (actual, wanted) in enumerate(zip(strides, self.static_strides)):
            if actual != DYNAMIC and actual != wanted:
                fail(
                    self,
                    f"expected result type with stride = {dim_text(wanted)} instead of {actual} "
                    f"in dim = {d}",
                )


ByteBuffer = Constraint(
    "1D memref of 8-bit signless integer values",
    lambda t: isinstance(t, MemRefType) and t.rank == 1 and t.element_type is IntegerType(8),
)


@irdl_op
class ViewOp(Operation):
    """A memref of any element type over the bytes of `source` from `byte_shift` on: the one
    upstream op that changes the element type of memory (the shift may be any index, so the
    view may lie anywhere; its dynamic sizes are given in order)."""

    name = "memref.view"
    traits = frozenset({Pure})
    source = operand(ByteBuffer)
    byte_shift = operand(Index)
    sizes = var_operand(Index)
    result = result(AnyMemRef)
    assembly_format = (
        "$source `[` $byte_shift `]` `` `[` $sizes `]` attr-dict `:` type($source) `to` "
        "type(results)"
    )

    def __init__(self, source, byte_shift, sizes, result_type, **fields):
        super().__init__(source, byte_shift, list(sizes), result=result_type, **fields)

    def verify_(self) -> None:
        source, result_type = self.source.type, self.result.type
        if source.layout is not None:
            fail(self, f"unsupported map for base memref type {source}")
        if result_type.layout is not None:
            fail(self, f"unsupported map for result memref type {result_type}")
        if source.memory_space is not result_type.memory_space:
            fail(
                self,
                f"different memory spaces specified for base memref type {source} and view "
                f"memref type {result_type}",
            )
        if len(self.sizes) != sum(1 for d in result_type.shape if d == DYNAMIC):
            fail(self, "incorrect number of size operands for type")
