"""Bounds checks: every access is checked against its argument's extent.

Every pointer argument of a kernel brings two hidden `i64` arguments, its *extent*: the bytes
`[low, high)` around the pointer that the array's underlying storage allows (`low <= 0`: a view
into a larger buffer, or one walked by negative strides, may reach before its first element).
They follow the kernel's own arguments, in the order of the pointers, before the program ids:

    func.func @k(%x: memref<*xf32>, %n: i32, %x_low: i64, %x_high: i64, <six program ids>)

The CPU back end converts every kernel so (the `bounds` option of `tt-to-linalg`), debug mode or
not: on a GPU an access far outside its array faults the context and the user's Python goes on,
and on a CPU the same bug would kill the process or quietly overwrite its neighbour. An access
is legal when every byte of every active element lies in the extent:

- a strided view (a structured load or store, one run of wrapped rows, a descriptor's box) is one
  check of its lowest and highest element, known from its start, strides and sizes: the storage
  is one interval, so the two extremes stand for every element between. An empty window checks
  nothing.
- an access element by element (a gather, a scatter, an atomic, a scalar pointer) checks every
  element whose mask is on before the access, so a failing store or atomic writes nothing, as in
  the interpreter: a `linalg.generic` flags the lanes outside (a byte each), and a loop
  or-reduces the flags (both vectorize). The offsets keep only generics as readers in the hot
  path (the failing branch makes them again), so the CPU back end computes them inside the
  check and inside the access alike, never into a buffer of their own.

A failed check is a `cf.assert` at the access's location, carrying the unit attribute
`naiad.bounds_check`, so that a back end reports it as an out-of-bounds access (an IndexError)
rather than a failed assertion. Only when it fails, the failing lanes are counted and the first
`SHOWN_OFFSETS` offsets kept, and handed to the back end just before the assert; the assert's
message is a `str.format` template over them (`{0}`: the count, `{1}`: the storage's size in
elements, `{offsets}`: the offsets the back end lists), worded as the interpreter's
(naiad/runtime/interpreter/memory.py). An access element by element counts them in a loop over
its lanes and calls the runtime function `naiad_bounds_info_<n>(count, storage elements,
offsets...)`; a strided view calls `naiad_bounds_view_<n>(start, first, last, storage elements,
origin, sizes..., strides...)` instead, its lanes' offsets described, for the back end to count
out of line: the view's loop nest, made for every view of the kernel, cost more of the
compiler's time than anything else in the failing branches (a sixth of LLVM's time on tutorial
06's attention), in code that runs only when a check fails.

A pointer made from one integer is checked against the argument whose storage holds that address
when it is made (`bind_address_extent`), and its reports name that argument. Not checked: a
descriptor argument (it has no extent), a pointer made from an integer that no argument's storage
holds, and one made from a block of integers (convert_addresses.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import cf, func, memref
from ...dialects.base import bit_width
from ...dialects.tt.types import TensorDescType
from ...ir import NameLoc, RankedTensorType, UnitAttr, Value, i1, i8, i64, is_pointer_like
from .emit import (
    as_index,
    compare,
    elementwise,
    extract_element,
    if_else,
    index_op,
    loop_nest,
    op,
    scalar_constant,
    to_i64,
)

BOUNDS_ATTRIBUTE = "naiad.bounds_check"
RECOMPUTED_ATTRIBUTE = "naiad.report"  # offsets made again in a failing check's report
INFO_FUNCTION = "naiad_bounds_info"  # (count, storage elements, offsets...): the report's values
# (start, first, last, storage elements, origin, sizes..., strides...): a view's report to count,
# its lanes `start + Σ_d i_d · strides[d]`, `0 <= i_d < sizes[d]`, row-major, failing outside
# `[first, last]`, shown counted from `origin`
VIEW_FUNCTION = "naiad_bounds_view"
SHOWN_OFFSETS = 8  # offending offsets a report lists, as the interpreter's (after 2 values)


@dataclass(frozen=True)
class Extent:
    """The bytes `[low, high)` (i64 values, relative to the pointer) argument `name` allows.

    A pointer made from an integer (`bind_address_extent`) points into memory, whose pointer is
    address 0: its extent is that of the argument its address fell in, chosen at run time among
    `homes` ((i1 "it is this one", name) per argument), and `start` is that argument's address,
    from which its report counts offsets."""

    name: str
    low: Value
    high: Value
    homes: tuple = ()
    start: Value | None = None


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


@dataclass(frozen=True)
class _Limits:
    """The element offsets `[first, last]` (i64) an extent allows elements of `size` bytes:
    compared in elements, an offset never overflows the way `offset * size` would."""

    extent: Extent
    size: int
    first: Value
    last: Value
    elements: Value  # the storage's size in elements, for the report
    origin: Value | None  # the element offset the report counts from (None: 0)

    def inside(self, c, offset: Value) -> Value:
        """`i1`: element `offset` (i64) lies inside the extent."""
        above = compare(c, "sge", offset, self.first)
        below = compare(c, "sle", offset, self.last)
        return op(c, "arith.andi", [above, below], i1)


def _limits(c, base: Value) -> _Limits | None:
    """The limits of `base`'s extent for its element size, made once per function at its entry
    (the extent of an argument is made of arguments), None when `base` is unchecked."""
    extent = _extent(c, base)
    if extent is None:
        return None
    key = (extent, _element_bytes(base))
    if key not in c.extent_limits:
        with c.builder.at_start(c.entry_block):
            _make_limits(c, extent, key[1])
    return c.extent_limits[key]


def _make_limits(c, extent: Extent, size: int) -> None:
    """The limits of `extent` for elements of `size` bytes, made here."""
    bytes_ = scalar_constant(c, size, i64)
    first = op(c, "arith.ceildivsi", [extent.low, bytes_], i64)
    last = op(c, "arith.floordivsi", [op(c, "arith.subi", [extent.high, bytes_], i64), bytes_], i64)
    span = op(c, "arith.subi", [extent.high, extent.low], i64)
    elements = op(c, "arith.divsi", [span, bytes_], i64)
    origin = None if extent.start is None else op(c, "arith.divsi", [extent.start, bytes_], i64)
    limits = _Limits(extent, size, first, last, elements, origin)
    c.extent_limits[(extent, size)] = limits


def bind_address_extent(c, base: Value, address: Value, element_bytes: int) -> None:
    """Check the accesses through `base`, a pointer made from the integer `address` (bytes,
    i64) into memory (convert_addresses.py), against the argument whose storage holds that
    address when it is made: its storage is the allocation the pointer points into. An
    address in no argument (memory the kernel was not given, as Triton's grouped GEMM reads
    through its tables) is not checked: its extent is every i64 byte."""
    arguments = [(a, e) for a, e in c.extents.items() if a.defining_op is None]
    if not arguments:
        return
    low = scalar_constant(c, -(2**63), i64)
    high = scalar_constant(c, 2**63 - 1, i64)
    start = scalar_constant(c, 0, i64)
    homes = []
    for argument, extent in arguments:
        data, lo, hi = _absolute(c, argument, extent)
        above = compare(c, "sge", address, lo)
        inside = op(c, "arith.andi", [above, compare(c, "slt", address, hi)], i1)
        homes.append((inside, extent.name))
        start = op(c, "arith.select", [inside, data, start], i64)
        low = op(c, "arith.select", [inside, lo, low], i64)
        high = op(c, "arith.select", [inside, hi, high], i64)
    extent = Extent("", low, high, tuple(homes), start)
    c.extents[base] = extent
    _make_limits(c, extent, element_bytes)


def _absolute(c, argument: Value, extent: Extent) -> tuple[Value, Value, Value]:
    """The address of `argument`'s data and the bytes `[low, high)` of its extent, as
    addresses (i64)."""
    from .emit_memory import flat_view  # emit_memory checks its accesses with this module

    flat = flat_view(c, argument, argument.type.element_type)
    data = to_i64(c, c.emit(memref.ExtractAlignedPointerAsIndexOp(flat)).results[0])
    low = op(c, "arith.addi", [data, extent.low], i64)
    return data, low, op(c, "arith.addi", [data, extent.high], i64)


def _not(c, condition: Value) -> Value:
    return op(c, "arith.xori", [condition, scalar_constant(c, 1, i1)], i1)


def _report(c, ok: Value, limits: _Limits, what: str, tally) -> None:
    """Fail unless `ok`; on failure, `tally()` first hands the back end the report's values."""

    def failing():
        tally()
        return []

    if_else(c, _not(c, ok), [], failing, None)
    homes = limits.extent.homes
    if not homes:
        _fail_unless(c, ok, what, f"argument `{limits.extent.name}`")
    for inside, name in homes:  # the argument it pointed into when it was made is blamed
        _fail_unless(c, op(c, "arith.ori", [ok, _not(c, inside)], i1), what, f"argument `{name}`")


def _tally_lanes(c, limits: _Limits, shape, lanes) -> None:
    """The report of the lanes of `shape` (ints or index values) whose
    `element_at(indices) -> (offset, on)` is active and outside, counted in a loop, and the
    first of their offsets (`lanes()`, called in the failing branch, gives `element_at`)."""
    zero = scalar_constant(c, 0, i64)
    element_at = lanes()

    def body(indices, carried):
        offset, on = element_at(indices)
        bad = _not(c, limits.inside(c, offset))
        if on is not None:
            bad = op(c, "arith.andi", [bad, on], i1)
        count, shown = carried[0], carried[1:]
        kept = []
        for k, value in enumerate(shown):
            here = compare(c, "eq", count, scalar_constant(c, k, i64))
            take = op(c, "arith.andi", [bad, here], i1)
            kept.append(op(c, "arith.select", [take, offset, value], i64))
        step = op(c, "arith.extui", [bad], i64)
        return [op(c, "arith.addi", [count, step], i64), *kept]

    count, *shown = loop_nest(c, list(shape), [zero] * (1 + SHOWN_OFFSETS), body)
    if limits.origin is not None:  # counted from the argument's start, as the interpreter
        shown = [op(c, "arith.subi", [v, limits.origin], i64) for v in shown]
    symbol = c.runtime.declare(INFO_FUNCTION, [i64] * (2 + SHOWN_OFFSETS))
    c.emit(func.CallOp(symbol, [count, limits.elements, *shown], []))


def _tally_view(c, limits: _Limits, start, sizes, strides) -> None:
    """The report of a view, described for the back end to count (`VIEW_FUNCTION`)."""
    origin = scalar_constant(c, 0, i64) if limits.origin is None else limits.origin
    described = [
        scalar_constant(c, v, i64) if isinstance(v, int) else to_i64(c, v)
        for v in (start, *sizes, *strides)
    ]
    values = [described[0], limits.first, limits.last, limits.elements, origin, *described[1:]]
    symbol = c.runtime.declare(VIEW_FUNCTION, [i64] * len(values))
    c.emit(func.CallOp(symbol, values, []))


def _fail_unless(c, ok: Value, what: str, through: str) -> None:
    message = (
        f"out-of-bounds {what} through {through}: {{0}} active lane(s) address element "
        "offset(s) [{offsets}] outside its storage of {1} element(s)"
    )
    c.emit(cf.AssertOp(ok, message, attributes={BOUNDS_ATTRIBUTE: UnitAttr()}))


def check_view(c, base: Value, start, strides, lows, sizes, what: str) -> None:
    """Check a strided piece of `base`: the elements `start + Σ_d (lows[d] + i_d) · strides[d]`,
    `0 <= i_d < sizes[d]` (ints or index values)."""
    limits = _limits(c, base)
    if limits is None:
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
    ok = op(c, "arith.andi", [limits.inside(c, lowest), limits.inside(c, highest)], i1)
    if empty is not None:
        ok = op(c, "arith.ori", [ok, empty], i1)

    _report(c, ok, limits, what, lambda: _tally_view(c, limits, first, sizes, strides))


def check_elements(c, pointer, mask, what: str) -> None:
    """Check every element of `pointer` (a scalar or a block of offsets) whose `mask` (None:
    all) is on, before the access. A block's lanes are flagged by a `linalg.generic` (a byte
    each: an i1 buffer is read back one element at a time) and the flags or-reduced: a
    generic, unlike a loop extracting them, leaves the offsets to be computed again inside
    each reader, so a gather keeps them fused into itself (made into a buffer of their own for
    the check, they cost a gather from a table in the cache a third of its time)."""
    limits = _limits(c, pointer.base)
    if limits is None:
        return
    offsets = pointer.offset
    if not isinstance(offsets.type, RankedTensorType):
        ok = limits.inside(c, offsets)
        ok = ok if mask is None else op(c, "arith.ori", [ok, _not(c, mask)], i1)

        def scalar():
            return lambda indices: (offsets, mask)

        _report(c, ok, limits, what, lambda: _tally_lanes(c, limits, [], scalar))
        return
    shape = list(offsets.type.shape)
    lanes = isinstance(getattr(mask, "type", None), RankedTensorType)

    def flag(xs):
        outside = _not(c, limits.inside(c, xs[0]))
        on = xs[1] if lanes else mask
        if on is not None:
            outside = op(c, "arith.andi", [outside, on], i1)
        return [op(c, "arith.extui", [outside], i8)]

    inputs = [offsets, mask] if lanes else [offsets]
    (flags,) = elementwise(c, inputs, [RankedTensorType(shape, i8)], flag)

    def body(indices, carried):
        return [op(c, "arith.ori", [carried[0], extract_element(c, flags, indices)], i8)]

    (any_outside,) = loop_nest(c, shape, [scalar_constant(c, 0, i8)], body)
    ok = compare(c, "eq", any_outside, scalar_constant(c, 0, i8))
    lanes = _recomputed(c, offsets, mask)
    _report(c, ok, limits, what, lambda: _tally_lanes(c, limits, shape, lanes))


def _recomputed(c, offsets: Value, mask: Value | None):
    """The `lanes` of a report (see `_report`) that makes `offsets` and `mask` again in the
    failing branch, so that only generics read them in the hot path."""

    def lanes():
        copies: dict = {}
        cold_offsets = _recompute(c, offsets, copies)
        cold_mask = None if mask is None else _recompute(c, mask, copies)

        def element_at(indices):
            on = cold_mask
            if cold_mask is not None and isinstance(cold_mask.type, RankedTensorType):
                on = extract_element(c, cold_mask, indices)
            return extract_element(c, cold_offsets, indices), on

        return element_at

    return lanes


def _recompute(c, value: Value, copies: dict) -> Value:
    """`value` made again here when it is a chain of `linalg.generic`s, else `value` itself
    (the copies write the originals' `tensor.empty` outputs: the failing program ends after
    its report). The copies are marked, so that CSE does not merge them back into the
    originals, which would then have a reader that is not a generic."""
    made = value.defining_op
    if made is None or made.name != "linalg.generic":
        return value
    if value not in copies:
        for operand in made.inputs:
            _recompute(c, operand, copies)
        copy = made.clone(copies)
        copy.attributes[RECOMPUTED_ATTRIBUTE] = UnitAttr()
        c.emit(copy)
    return copies[value]


__all__ = [
    "BOUNDS_ATTRIBUTE",
    "INFO_FUNCTION",
    "SHOWN_OFFSETS",
    "VIEW_FUNCTION",
    "Extent",
    "bind_address_extent",
    "bind_extents",
    "check_elements",
    "check_view",
    "extent_types",
]
