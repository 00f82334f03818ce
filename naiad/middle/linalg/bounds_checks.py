"""Debug mode's bounds checks: every access is checked against its argument's extent.

With `debug` (the conversion's option: `NAIAD_DEBUG=1` or `debug=True` at launch) every pointer
argument of a kernel brings two hidden `i64` arguments, its *extent*: the bytes `[low, high)`
around the pointer that the array's underlying storage allows (`low <= 0`: a view into a larger
buffer, or one walked by negative strides, may reach before its first element). They follow the
kernel's own arguments, in the order of the pointers, before the program ids:

    func.func @k(%x: memref<*xf32>, %n: i32, %x_low: i64, %x_high: i64, <six program ids>)

An access is legal when every byte of every active element lies in the extent. A failed check is
a `cf.assert` at the access's location whose message is the interpreter's
(naiad/runtime/interpreter/memory.py) without the offsets, which are runtime values, and which
carries the unit attribute `naiad.bounds_check`, so that a back end reports it as an out-of-bounds
access (an IndexError) rather than a failed assertion:

- a strided view (a structured load or store, one run of wrapped rows, a descriptor's box) is one
  check of its lowest and highest element, known from its start, strides and sizes: the storage
  is one interval, so the two extremes stand for every element between. An empty window checks
  nothing.
- an access element by element (a gather, a scatter, an atomic, a scalar pointer) checks every
  element whose mask is on, in a loop of its own before the access, so a failing store or atomic
  writes nothing, as in the interpreter.

A base that is not a kernel argument is not checked: a descriptor argument (it has no extent) and
the whole memory a pointer made from an integer indexes (convert_addresses.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import cf
from ...dialects.base import bit_width
from ...dialects.tt_types import TensorDescType
from ...ir import NameLoc, RankedTensorType, UnitAttr, Value, i1, i64, is_pointer_like
from .emit import (
    as_index,
    compare,
    extract_element,
    index_op,
    loop_nest,
    op,
    scalar_constant,
    to_i64,
)

BOUNDS_ATTRIBUTE = "naiad.bounds_check"


@dataclass(frozen=True)
class Extent:
    """The bytes `[low, high)` (i64 values, relative to the pointer) argument `name` allows."""

    name: str
    low: Value
    high: Value


def extent_types(function) -> list:
    """The types of the hidden extent arguments of TTIR `function`: two i64 per pointer."""
    return [i64, i64] * len(_pointer_arguments(function))


def bind_extents(c, function, arguments, hidden) -> None:
    """Record the extent of each converted pointer argument (`arguments`, in the order of
    `function`'s) from the `hidden` arguments of the converted function (none: no checks)."""
    if not hidden:
        return
    for k, i in enumerate(_pointer_arguments(function)):
        c.extents[arguments[i]] = Extent(_name(function, i), hidden[2 * k], hidden[2 * k + 1])


def _pointer_arguments(function) -> list[int]:
    return [
        i
        for i, arg in enumerate(function.arguments)
        if is_pointer_like(arg.type) and not isinstance(arg.type, TensorDescType)
    ]


def _name(function, i: int) -> str:
    """The argument's name (its name location, as the launcher names it), else `arg<i>`."""
    location = function.arguments[i].location
    return location.name if isinstance(location, NameLoc) else f"arg{i}"


def _extent(c, base: Value) -> Extent | None:
    """The extent of the argument `base` is (or is a retyped view of), None when unchecked."""
    while base not in c.extents:
        made = base.defining_op
        if made is None or made.name != "builtin.unrealized_conversion_cast":
            return None
        base = made.operands[0]
    return c.extents[base]


def _element_bytes(base: Value) -> int:
    return (bit_width(base.type.element_type) + 7) // 8


def _fail_unless(c, ok: Value, extent: Extent, what: str) -> None:
    message = (
        f"out-of-bounds {what} through argument `{extent.name}`: active lane(s) address "
        "element offset(s) outside its storage"
    )
    c.emit(cf.AssertOp(ok, message, attributes={BOUNDS_ATTRIBUTE: UnitAttr()}))


def _inside(c, extent: Extent, first: Value, last: Value, element_bytes: int) -> Value:
    """`i1`: elements `first` .. `last` (i64, in elements) lie inside `extent`."""
    size = scalar_constant(c, element_bytes, i64)
    low = op(c, "arith.muli", [first, size], i64)
    high = op(c, "arith.addi", [op(c, "arith.muli", [last, size], i64), size], i64)
    above = compare(c, "sge", low, extent.low)
    below = compare(c, "sle", high, extent.high)
    return op(c, "arith.andi", [above, below], i1)


def _or_not(c, ok: Value, condition: Value) -> Value:
    """`ok or not condition`."""
    off = op(c, "arith.xori", [condition, scalar_constant(c, 1, i1)], i1)
    return op(c, "arith.ori", [ok, off], i1)


def check_view(c, base: Value, start, strides, lows, sizes, what: str) -> None:
    """Check a strided piece of `base`: the elements `start + Σ_d (lows[d] + i_d) · strides[d]`,
    `0 <= i_d < sizes[d]` (ints or index values)."""
    extent = _extent(c, base)
    if extent is None:
        return
    first = start
    for low, stride in zip(lows, strides):
        first = index_op(c, "arith.addi", first, index_op(c, "arith.muli", low, stride))
    lowest = highest = first
    empty = None
    for size, stride in zip(sizes, strides):
        reach = index_op(c, "arith.muli", index_op(c, "arith.subi", size, 1), stride)
        lowest = index_op(c, "arith.addi", lowest, index_op(c, "arith.minsi", reach, 0))
        highest = index_op(c, "arith.addi", highest, index_op(c, "arith.maxsi", reach, 0))
        if isinstance(size, int) and size > 0:
            continue
        none = compare(c, "sle", as_index(c, size), as_index(c, 0))
        empty = none if empty is None else op(c, "arith.ori", [empty, none], i1)
    lowest, highest = (to_i64(c, as_index(c, v)) for v in (lowest, highest))
    ok = _inside(c, extent, lowest, highest, _element_bytes(base))
    if empty is not None:
        ok = op(c, "arith.ori", [ok, empty], i1)
    _fail_unless(c, ok, extent, what)


def check_elements(c, pointer, mask, what: str) -> None:
    """Check every element of `pointer` (a scalar or a block of offsets) whose `mask` (None:
    all) is on, before the access."""
    extent = _extent(c, pointer.base)
    if extent is None:
        return
    element_bytes = _element_bytes(pointer.base)

    def check(offset, on):
        ok = _inside(c, extent, offset, offset, element_bytes)
        _fail_unless(c, ok if on is None else _or_not(c, ok, on), extent, what)

    offsets = pointer.offset
    if not isinstance(offsets.type, RankedTensorType):
        check(offsets, mask)
        return

    def body(indices, carried):
        on = mask
        if mask is not None and isinstance(mask.type, RankedTensorType):
            on = extract_element(c, mask, indices)
        check(extract_element(c, offsets, indices), on)
        return []

    loop_nest(c, list(offsets.type.shape), [], body)


__all__ = [
    "BOUNDS_ATTRIBUTE",
    "Extent",
    "bind_extents",
    "check_elements",
    "check_view",
    "extent_types",
]
