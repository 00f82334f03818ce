"""Mixed static and dynamic index lists, as the view-like ops hold them (`memref.subview`,
`memref.reinterpret_cast`, `memref.expand_shape`; the slices of `tensor` too): MLIR's
OffsetSizeAndStrideOpInterface and its `custom<DynamicIndexList>` syntax ([0, %n, 4]).

An op keeps each list twice: a `DenseI64ArrayAttr` with one entry per position (`static_sizes =
array<i64: 0, -9223372036854775808>`: a constant, or DYNAMIC) and an operand group holding, in
order, the SSA values of the DYNAMIC positions. Builders take one list of ints and values
(MLIR's OpFoldResult) and split it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ir import DYNAMIC, Constraint, DenseArrayAttr, IndexType, Value, i64
from .base import fail

DenseI64ArrayAttr = Constraint(
    "i64 dense array attribute", lambda a: isinstance(a, DenseArrayAttr) and a.element_type is i64
)


def i64_array(values) -> DenseArrayAttr:
    return values if isinstance(values, DenseArrayAttr) else DenseArrayAttr(i64, values)


def split_mixed(items: Iterable) -> tuple[DenseArrayAttr, list[Value]]:
    """A list of ints and SSA values (MLIR's dispatchIndexOpFoldResults): the static array,
    DYNAMIC where a value stands, and the values in order."""
    static, dynamic = [], []
    for item in items:
        if isinstance(item, Value):
            static.append(DYNAMIC)
            dynamic.append(item)
        else:
            static.append(int(item))
    return i64_array(static), dynamic


def mixed(static: DenseArrayAttr, dynamic) -> list:
    """The list of ints and SSA values that `static` and `dynamic` hold (MLIR's
    getMixedValues)."""
    values = iter(dynamic)
    return [next(values) if s == DYNAMIC else s for s in static]


def verify_index_list(op, what: str, static: DenseArrayAttr, dynamic, rank: int | None) -> None:
    """The interface's rules for one list: `rank` entries (unless None), one SSA value (of
    type index) per DYNAMIC entry, and, for offsets and sizes, no negative constant."""
    if rank is not None and len(static) != rank:
        fail(op, f"expected {rank} {what} values")
    expected = sum(1 for s in static if s == DYNAMIC)
    if len(dynamic) != expected:
        fail(op, f"expected {expected} dynamic {what} values")
    if what in ("offset", "size"):
        for s in static:
            if s < 0 and s != DYNAMIC:
                fail(op, f"expected {what}s to be non-negative, but got {s}")
    for v in dynamic:
        if not isinstance(v.type, IndexType):
            fail(op, f"expected {what} values of type index, but got {v.type}")


def dim_text(value: int) -> str:
    """A static entry in a message: the number, or `?`."""
    return "?" if value == DYNAMIC else str(value)


def kept_dimensions(full, reduced) -> list[int] | None:
    """The dimensions of shape `full` that shape `reduced` keeps, matched greedily from the
    front and dropping only unit dimensions (MLIR's computeRankReductionMask); None when
    `reduced` is no such rank reduction. Every rank-reducing slice and subview uses this rule."""
    kept = []
    for d, size in enumerate(full):
        if len(kept) < len(reduced) and reduced[len(kept)] == size:
            kept.append(d)
        elif size != 1:
            return None
    return kept if len(kept) == len(reduced) else None
