"""The `memref` dialect (MemRefOps.td): buffers, element access, copies, casts and metadata;
the view ops (memref/views.py, memref/reshape.py) and atomics (memref/atomics.py) are gathered
here in one namespace.

    %buf = memref.alloc() : memref<1024xf32>
    %x = memref.load %buf[%i] : memref<1024xf32>
    memref.store %x, %buf[%i] : memref<1024xf32>
    memref.copy %sub, %dst : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32>

Syntax not declarative upstream (`custom<DynamicIndexList>`, generic_atomic_rmw's region,
extract_strided_metadata's results) is in memref/syntax.py, with the result names upstream
gives (`%alloc`, `%subview`, `%base_buffer`, ...).
"""

from __future__ import annotations

from typing import ClassVar

from ...ir import (
    DYNAMIC,
    BoolAttr,
    Constraint,
    IntegerAttr,
    MemoryRead,
    MemoryWrite,
    MemRefType,
    Operation,
    Pure,
    StridedLayoutAttr,
    UnrankedMemRefType,
    i64,
    index,
    irdl_op,
    operand,
    opt_attribute,
    result,
    var_operand,
    var_result,
)
from ...ir.affine import AffineMapAttr
from ..base import BoolAttrC, I64Attr, Index, check_inferred, check_type, fail
from .atomics import *  # noqa: F403
from .reshape import *  # noqa: F403
from .views import *  # noqa: F403
from .views import AnyMemRef, AnyRankedOrUnrankedMemRef, AnyStridedMemRef

NonNegativeI64Attr = Constraint(
    "64-bit signless integer attribute whose minimum value is 0",
    lambda a: I64Attr(a) and a.value >= 0,
)
AlignmentAttr = Constraint(
    "64-bit signless integer attribute whose value is positive and whose value is a power of two",
    lambda a: I64Attr(a) and a.value > 0 and a.value & (a.value - 1) == 0,
)
Non0RankedOrUnrankedMemRef = Constraint(
    "non-0-ranked or unranked memref of any type values",
    lambda t: isinstance(t, UnrankedMemRefType) or (isinstance(t, MemRefType) and t.rank > 0),
)


def _alignment(value) -> IntegerAttr | None:
    return None if value is None or isinstance(value, IntegerAttr) else IntegerAttr(value, i64)


def element_of(t):
    return t.element_type


class _AllocLikeOp(Operation):
    """`alloc` and `alloca`: a buffer of `memref`'s type, its dynamic sizes given in order."""

    dynamicSizes = var_operand(Index)  # the ODS names
    symbolOperands = var_operand(Index)
    alignment = opt_attribute(NonNegativeI64Attr)
    memref = result(AnyMemRef)
    assembly_format = (
        "`(`$dynamicSizes`)` (`` `[` $symbolOperands^ `]`)? attr-dict `:` type($memref)"
    )

    def __init__(self, memref_type, dynamic_sizes=(), symbol_operands=(), alignment=None, **f):
        super().__init__(
            list(dynamic_sizes),
            list(symbol_operands),
            alignment=_alignment(alignment),
            memref=memref_type,
            **f,
        )

    def verify_(self) -> None:
        t = self.memref.type
        if len(self.dynamicSizes) != sum(1 for d in t.shape if d == DYNAMIC):
            fail(self, "dimension operand count does not equal memref dynamic dimension count")
        symbols = _layout_symbols(t)
        if len(self.symbolOperands) != symbols:
            fail(
                self,
                f"symbol operand count does not equal memref symbol count: expected {symbols}, "
                f"got {len(self.symbolOperands)}",
            )


def _layout_symbols(t: MemRefType) -> int:
    """The symbols of the layout's affine map: one per dynamic stride and offset of a strided
    layout (MLIR's makeStridedLinearLayoutMap)."""
    if isinstance(t.layout, StridedLayoutAttr):
        return sum(1 for s in (*t.layout.strides, t.layout.offset) if s == DYNAMIC)
    if isinstance(t.layout, AffineMapAttr):
        return t.layout.value.num_symbols
    return 0


@irdl_op
class AllocOp(_AllocLikeOp):
    """A heap buffer (freed by `memref.dealloc`)."""

    name = "memref.alloc"
    traits = frozenset({MemoryWrite})


@irdl_op
class AllocaOp(_AllocLikeOp):
    """A stack buffer, freed when the enclosing function returns."""

    name = "memref.alloca"
    traits = frozenset({MemoryWrite})


@irdl_op
class DeallocOp(Operation):
    """Free a buffer made by `memref.alloc`."""

    name = "memref.dealloc"
    traits = frozenset({MemoryWrite})
    memref = operand(AnyRankedOrUnrankedMemRef)
    assembly_format = "$memref attr-dict `:` type($memref)"


def _compatible_shapes(a, b) -> bool:
    """MLIR's verifyCompatibleShape: unranked, or equal ranks with each pair of dimensions
    equal or one of them dynamic."""
    if not (isinstance(a, MemRefType) and isinstance(b, MemRefType)):
        return True
    return a.rank == b.rank and all(x == y or DYNAMIC in (x, y) for x, y in zip(a.shape, b.shape))


@irdl_op
class CopyOp(Operation):
    """Copy every element of `source` to `target` (same element type and shape; the layouts
    may differ)."""

    name = "memref.copy"
    traits = frozenset({MemoryRead, MemoryWrite})
    source = operand(AnyRankedOrUnrankedMemRef)
    target = operand(AnyRankedOrUnrankedMemRef)
    assembly_format = "$source `,` $target attr-dict `:` type($source) `to` type($target)"

    def verify_(self) -> None:
        a, b = self.source.type, self.target.type
        if a.element_type is not b.element_type:
            fail(self, "requires the same element type for all operands")
        if not _compatible_shapes(a, b):
            fail(self, "requires the same shape for all operands")


class _AccessOp(Operation):
    """`load` and `store`: one element at `indices`, one per dimension."""

    attribute_defaults: ClassVar[dict] = {"nontemporal": BoolAttr(False)}

    def _access_fields(self, nontemporal, alignment, fields) -> dict:
        fields["nontemporal"] = BoolAttr(True) if nontemporal else None
        fields["alignment"] = _alignment(alignment)
        return fields


@irdl_op
class LoadOp(_AccessOp):
    """The element of `memref` at `indices`."""

    name = "memref.load"
    traits = frozenset({MemoryRead})
    memref = operand(AnyMemRef)
    indices = var_operand(Index)
    nontemporal = opt_attribute(BoolAttrC)
    alignment = opt_attribute(AlignmentAttr)
    result = result()
    assembly_format = "$memref `[` $indices `]` attr-dict `:` type($memref)"
    type_inference = (("result", "memref", element_of),)

    def __init__(self, memref, indices=(), *, nontemporal=False, alignment=None, **fields):
        fields.setdefault("result", memref.type.element_type)
        self._access_fields(nontemporal, alignment, fields)
        super().__init__(memref, list(indices), **fields)

    def verify_(self) -> None:
        t = self.memref.type
        check_type(
            self, self.result.type, t.element_type, "result type matches element type of 'memref'"
        )
        if len(self.indices) != t.rank:
            fail(
                self,
                f"incorrect number of indices for load, expected {t.rank} but got "
                f"{len(self.indices)}",
            )


@irdl_op
class StoreOp(_AccessOp):
    """Write `value` to the element of `memref` at `indices`."""

    name = "memref.store"
    traits = frozenset({MemoryWrite})
    value = operand()
    memref = operand(AnyMemRef)
    indices = var_operand(Index)
    nontemporal = opt_attribute(BoolAttrC)
    alignment = opt_attribute(AlignmentAttr)
    assembly_format = "$value `,` $memref `[` $indices `]` attr-dict `:` type($memref)"

    def __init__(self, value, memref, indices=(), *, nontemporal=False, alignment=None, **fields):
        self._access_fields(nontemporal, alignment, fields)
        super().__init__(value, memref, list(indices), **fields)

    def verify_(self) -> None:
        t = self.memref.type
        check_type(
            self,
            self.value.type,
            t.element_type,
            "type of 'value' matches element type of 'memref'",
        )
        if len(self.indices) != t.rank:
            fail(self, "store index operand count not equal to memref rank")


def cast_compatible(a, b) -> bool:
    """Whether `memref.cast` may turn `a` into `b` (MLIR's CastOp::areCastCompatible): same
    element type and memory space; ranked to ranked with the same rank and each size, stride
    and the offset equal or dynamic on one side; or ranked to unranked and back."""
    if isinstance(a, MemRefType) and isinstance(b, MemRefType):
        if a.element_type is not b.element_type or a.memory_space is not b.memory_space:
            return False
        if a.layout is not b.layout:
            sa, sb = a.strides_and_offset(), b.strides_and_offset()
            if sa is None or sb is None or len(sa[0]) != len(sb[0]):
                return False
            pairs = [(sa[1], sb[1]), *zip(sa[0], sb[0])]
            if any(x != y and DYNAMIC not in (x, y) for x, y in pairs):
                return False
        return _compatible_shapes(a, b)
    if isinstance(a, UnrankedMemRefType) and isinstance(b, UnrankedMemRefType):
        return False
    return a.element_type is b.element_type and a.memory_space is b.memory_space


@irdl_op
class CastOp(Operation):
    """The same memref under a compatible type: static sizes, strides or offset made dynamic
    or asserted, or the rank erased (`memref<*xf32>`) or recovered."""

    name = "memref.cast"
    traits = frozenset({Pure})
    source = operand(AnyRankedOrUnrankedMemRef)
    dest = result(AnyRankedOrUnrankedMemRef)
    assembly_format = "$source attr-dict `:` type($source) `to` type($dest)"

    def __init__(self, source, dest_type, **fields):
        super().__init__(source, dest=dest_type, **fields)

    def verify_(self) -> None:
        a, b = self.source.type, self.dest.type
        if not cast_compatible(a, b):
            fail(self, f"operand type {a} and result type {b} are cast incompatible")


@irdl_op
class DimOp(Operation):
    """The size of dimension `index` of `source` (undefined when out of bounds)."""

    name = "memref.dim"
    traits = frozenset({Pure})
    source = operand(Non0RankedOrUnrankedMemRef)
    index = operand(Index)
    result = result(Index)
    assembly_format = "attr-dict $source `,` $index `:` type($source)"
    type_inference = (("result", "source", lambda _: index),)

    def __init__(self, source, dim, **fields):
        super().__init__(source, dim, result=index, **fields)


def strided_metadata_types(t: MemRefType) -> list:
    """What extract_strided_metadata returns for `t`: a rank-0 base buffer, the offset, then
    one size and one stride per dimension (all index)."""
    base = MemRefType((), t.element_type, None, t.memory_space)
    return [base, index, *([index] * (2 * t.rank))]


@irdl_op
class ExtractStridedMetadataOp(Operation):
    """The base buffer, offset, sizes and strides of a strided memref. ODS declares `sizes`
    and `strides` as two groups of the same size; here they are one group, split in half
    (the text and the generic form are the same)."""

    name = "memref.extract_strided_metadata"
    traits = frozenset({Pure})
    source = operand(AnyStridedMemRef)
    base_buffer = result(MemRefType)
    offset = result(Index)
    sizes_and_strides = var_result(Index)
    custom_syntax = True

    def __init__(self, source, **fields):
        base, offset, *rest = strided_metadata_types(source.type)
        super().__init__(source, base_buffer=base, offset=offset, sizes_and_strides=rest, **fields)

    @property
    def sizes(self) -> tuple:
        values = self.sizes_and_strides
        return values[: len(values) // 2]

    @property
    def strides(self) -> tuple:
        values = self.sizes_and_strides
        return values[len(values) // 2 :]

    def verify_(self) -> None:
        check_inferred(self, strided_metadata_types(self.source.type))


@irdl_op
class ExtractAlignedPointerAsIndexOp(Operation):
    """The address of `source`'s aligned base (its element 0 before the layout's offset), as an
    index: how the converted code spells the address a pointer holds (`tt.ptr_to_int`)."""

    name = "memref.extract_aligned_pointer_as_index"
    traits = frozenset({Pure})
    source = operand(AnyMemRef)  # ranked: the converted code asks only of flat views
    aligned_pointer = result(Index)
    assembly_format = "$source `:` type($source) `->` type(results) attr-dict"

    def __init__(self, source, **fields):
        super().__init__(source, aligned_pointer=index, **fields)
