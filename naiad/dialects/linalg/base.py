"""What the `linalg` ops share (LinalgBase.td, LinalgInterfaces.cpp): iterator types, the
shaped-operand constraints, and the rules of structured ops in destination-passing style.

A structured op is a loop nest: `iterator_types` says whether each loop is parallel or a
reduction, and one affine map per operand (inputs, then outputs) says which element of that
operand an iteration touches. Outputs are the destinations: on tensors the op returns their
new values (one result per output), on memrefs it writes them in place (no results).

    IteratorTypeAttr("parallel")     # #linalg.iterator_type<parallel>
    iterator_types_attr(["parallel", "reduction"]), indexing_maps_attr([AffineMap.identity(2)])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from ...ir import (
    DYNAMIC,
    ArrayAttr,
    Constraint,
    DialectAttribute,
    MemoryRead,
    MemoryWrite,
    MemRefType,
    Pure,
    RankedTensorType,
    Trait,
    Type,
)
from ...ir.affine import AffineDimExpr, AffineMap, AffineMapAttr
from ..base import fail


class IteratorTypeAttr(DialectAttribute):
    """`#linalg.iterator_type<parallel>`: the kind of one loop of a structured op."""

    __slots__ = ("value",)
    value: str
    dialect = "linalg"
    mnemonic = "iterator_type"
    kinds: ClassVar[tuple[str, ...]] = ("parallel", "reduction")

    def __new__(cls, value: str):
        if value not in cls.kinds:
            raise ValueError(f"unknown iterator type {value!r}; known: {', '.join(cls.kinds)}")
        return cls._intern(value)

    def print_body(self) -> str:
        return f"<{self.value}>"


PARALLEL = IteratorTypeAttr("parallel")
REDUCTION = IteratorTypeAttr("reduction")


LinalgOp = Trait("LinalgOp")
"""Marks the structured ops (LinalgStructuredInterface), which rewrites and back ends read
through the same methods: `inputs`, `inits` (the outputs), `num_loops`, `maps()` (one
AffineMap per operand, inputs first); those with a body also `body` and `yield_types()` (what
`linalg.yield` must yield)."""


def iterator_types_attr(kinds: Iterable) -> ArrayAttr:
    """An array of iterator types from names (`"parallel"`) or attributes."""
    if isinstance(kinds, ArrayAttr):
        return kinds
    return ArrayAttr(k if isinstance(k, IteratorTypeAttr) else IteratorTypeAttr(k) for k in kinds)


def indexing_maps_attr(maps: Iterable) -> ArrayAttr:
    """An array of affine map attributes from maps or attributes."""
    if isinstance(maps, ArrayAttr):
        return maps
    return ArrayAttr(m if isinstance(m, AffineMapAttr) else AffineMapAttr(m) for m in maps)


def is_shaped(t: Type) -> bool:
    """A ranked tensor or a ranked memref: what a structured op iterates over."""
    return isinstance(t, RankedTensorType | MemRefType)


def element_or_self(t: Type) -> Type:
    """The element type of a shaped type, or a scalar type itself (as a block argument)."""
    return t.element_type if is_shaped(t) else t


def shape_or_scalar(t: Type) -> tuple[int, ...]:
    return t.shape if is_shaped(t) else ()


TensorOrMemRef = Constraint("ranked tensor or memref", is_shaped)
AnyRankedTensor = Constraint("ranked tensor", lambda t: isinstance(t, RankedTensorType))
AffineMapArrayAttr = Constraint(
    "AffineMap array attribute",
    lambda a: isinstance(a, ArrayAttr) and all(isinstance(m, AffineMapAttr) for m in a),
)
IteratorTypeArrayAttr = Constraint(
    "Iterator type array attribute",
    lambda a: isinstance(a, ArrayAttr) and all(isinstance(k, IteratorTypeAttr) for k in a),
)


def tensor_types(values) -> list[Type]:
    """The types of the ranked-tensor values among `values`: a structured op's results."""
    return [v.type for v in values if isinstance(v.type, RankedTensorType)]


def buffer_effects(op) -> frozenset:
    """The effects of a destination-style op: on memrefs it reads and writes memory; on
    tensors it has none (a region op adds those of its body, RecursiveMemoryEffects)."""
    if any(isinstance(v.type, MemRefType) for v in op.operands):
        return frozenset({MemoryRead, MemoryWrite})
    return frozenset() if op.regions else frozenset({Pure})


def verify_destination_style(op, outputs: Sequence) -> None:
    """Pure tensor or pure buffer semantics, and one result per tensor output, of its type."""
    operand_kinds = {isinstance(v.type, RankedTensorType) for v in op.operands if is_shaped(v.type)}
    if len(operand_kinds) > 1:
        fail(op, "expected to have pure tensor or buffer semantics")
    start = len(op.operands) - len(outputs)
    tensors = [
        (start + i, v) for i, v in enumerate(outputs) if isinstance(v.type, RankedTensorType)
    ]
    if len(tensors) != len(op.results):
        fail(
            op,
            f"expected the number of tensor results ({len(op.results)}) to be equal to the "
            f"number of output tensors ({len(tensors)})",
        )
    for (number, value), result in zip(tensors, op.results):
        if value.type is not result.type:
            fail(
                op,
                f"expected type of operand #{number} ('{value.type}') to match type of "
                f"corresponding result ('{result.type}')",
            )


def verify_indexing(op, maps: Sequence[AffineMap], num_loops: int) -> None:
    """LinalgStructuredInterface's rules: one map per operand, as many dims as loops, as many
    results as the operand's rank, and static shapes that agree with the loop ranges."""
    operands = op.operands
    if len(maps) != len(operands):
        fail(
            op,
            f"expected the number of indexing_map ({len(maps)}) to be equal to the number of "
            f"input/output operands ({len(operands)})",
        )
    for i, (m, value) in enumerate(zip(maps, operands)):
        if m.num_symbols:
            fail(op, f"unexpected symbols in indexing_map #{i}")
        if m.num_dims != num_loops:
            fail(
                op,
                f"expected indexing_map #{i} to have {num_loops} dim(s) to match the number "
                "of loops",
            )
        rank = len(shape_or_scalar(value.type))
        if m.num_results != rank:
            fail(
                op,
                f"expected operand rank ({rank}) to match the result rank of indexing_map "
                f"#{i} ({m.num_results})",
            )
    _verify_static_shapes(op, maps, num_loops)


def static_loop_ranges(maps: Sequence[AffineMap], shapes: Sequence, num_loops: int) -> list:
    """The size of each loop: the first operand dimension indexed by it alone (DYNAMIC if
    that dimension is, or if none is)."""
    ranges = [None] * num_loops
    for m, shape in zip(maps, shapes):
        for e, size in zip(m.results, shape):
            if isinstance(e, AffineDimExpr) and ranges[e.position] is None:
                ranges[e.position] = size
    return [DYNAMIC if r is None else r for r in ranges]


def _verify_static_shapes(op, maps, num_loops: int) -> None:
    """Upstream's check: with static loop ranges, every static dimension that a map result
    indexes holds the range that result spans (exactly, for a lone dimension)."""
    shapes = [shape_or_scalar(v.type) for v in op.operands]
    ranges = static_loop_ranges(maps, shapes, num_loops)
    if DYNAMIC in ranges:
        return
    first = [0] * num_loops
    last = [r - 1 for r in ranges]
    for number, (m, shape) in enumerate(zip(maps, shapes)):
        starts, ends = m.evaluate(first), m.evaluate(last)
        for d, size in enumerate(shape):
            if size == DYNAMIC or size == 0:
                continue
            if min(starts[d], ends[d]) < 0:
                fail(op, f"unexpected result less than 0 at expression #{d} in {m}")
            inferred = max(starts[d], ends[d]) + 1
            exact = isinstance(m.results[d], AffineDimExpr)
            if (exact and inferred != size) or inferred > size:
                bound = "" if exact else "greater than or equal to "
                fail(
                    op,
                    f"inferred input/output operand #{number} has shape's dimension #{d} to "
                    f"be {bound}{inferred}, but found {size}",
                )


def verify_body(op, block, operand_types: Sequence[Type], what: str = "input/output") -> None:
    """The block takes one argument per operand, of its element type (a scalar's own)."""
    if block is None or len(block.arguments) != len(operand_types):
        fail(
            op,
            "expected as many non-induction variable region arguments as the number of "
            f"{what} operands",
        )
    for i, (arg, t) in enumerate(zip(block.arguments, operand_types)):
        expected = element_or_self(t)
        if arg.type is not expected:
            fail(
                op,
                f"expected type of bb argument #{i} ('{arg.type}') to match element or self "
                f"type of the corresponding operand ('{expected}')",
            )
    last = block.last_op
    if last is None or last.name != "linalg.yield":
        found = "nothing" if last is None else f"'{last.name}'"
        fail(op, f"expects regions to end with 'linalg.yield', found {found}")
