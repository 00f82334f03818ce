"""Building atomics: `memref.atomic_rmw` per element (a loop nest over a block, in row-major
order), compare-and-swap as a `memref.generic_atomic_rmw` comparing bits; each gives the old
value, 0 where the mask is off.
"""

from __future__ import annotations

from ...dialects import memref
from ...dialects.base import bit_width
from ...ir import FloatType, IntegerType, RankedTensorType, Value, element_type
from .bounds_checks import check_elements
from .emit import (
    compare,
    empty,
    extract_element,
    if_else,
    insert_element,
    loop_nest,
    op,
    select,
    to_index,
    zero_of,
)
from .emit_memory import flat_view

_RMW_KINDS = {
    "and": "andi",
    "or": "ori",
    "xor": "xori",
    "umax": "maxu",
    "umin": "minu",
    "exch": "assign",
}


def _rmw_kind(kind: str, element) -> str:
    floating = isinstance(element, FloatType)
    if kind in ("add", "fadd"):
        return "addf" if floating else "addi"
    if kind == "max":
        return "maximumf" if floating else "maxs"
    if kind == "min":
        return "minimumf" if floating else "mins"
    return _RMW_KINDS[kind]


def atomic(c, pointer, kind: str, operands, mask, t) -> Value:
    """An atomic read-modify-write (or compare-and-swap, kind "cas") per element; each gives
    the old value (0 where masked off)."""
    check_elements(c, pointer, mask, "atomic")
    element = element_type(t)
    flat = flat_view(c, pointer.base, element)

    def one(position, values, on):
        def update():
            if kind == "cas":
                return [_compare_and_swap(c, flat, position, *values)]
            rmw = memref.AtomicRMWOp(_rmw_kind(kind, element), values[0], flat, [position])
            return [c.emit(rmw).results[0]]

        if on is None:
            return update()[0]
        return if_else(c, on, [element], update, lambda: [zero_of(c, element)])[0]

    if not isinstance(t, RankedTensorType):
        return one(to_index(c, pointer.offset), operands, mask)

    def body(indices, carried):
        position = to_index(c, extract_element(c, pointer.offset, indices))
        values = [extract_element(c, v, indices) for v in operands]
        on = None if mask is None else extract_element(c, mask, indices)
        old = one(position, values, on)
        return [insert_element(c, old, carried[0], indices)]

    return loop_nest(c, list(t.shape), [empty(c, t)], body)[0]


def _compare_and_swap(c, flat, position, expected, desired) -> Value:
    """`memref.generic_atomic_rmw`: store `desired` if the element's bits equal `expected`'s."""
    created = c.emit(memref.GenericAtomicRMWOp(flat, [position]))
    block = created.atomic_body.entry_block
    with c.builder.at_end(block):
        current = block.arguments[0]
        same = _same_bits(c, current, expected)
        c.emit(memref.AtomicYieldOp(select(c, same, desired, current)))
    return created.results[0]


def _same_bits(c, a: Value, b: Value) -> Value:
    t = a.type
    if isinstance(t, FloatType):
        width = IntegerType(bit_width(t))
        a = op(c, "arith.bitcast", [a], width)
        b = op(c, "arith.bitcast", [b], width)
    return compare(c, "eq", a, b)
