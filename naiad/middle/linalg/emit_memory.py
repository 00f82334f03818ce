"""Building loads and stores: strided views of an argument (copied window by window), and the
element-by-element gather and scatter every other access takes.

A structured access reads or writes a *window* of its block: per dimension, the indices
`[low, low + size)` (a prefix box of a mask has low 0; a descriptor's box may start later).
The window is one view of the argument, or, for offsets that wrap (strided.py), one view per
*run* of consecutive rows between two wrap points: an `scf.while` over the wrapped dimension,
each run a `memref.reinterpret_cast` at the run's first row, as long as the rows stay in order
(`(s + p) mod m` grows by one per row until it reaches m). Where the modulus is not positive
or the row is negative, a run is one row, which is exact whatever the remainder gives.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import bufferization, linalg, memref, tensor
from ...ir import (
    DYNAMIC,
    MemRefType,
    RankedTensorType,
    UnrankedMemRefType,
    Value,
    create_operation,
    i1,
    index,
)
from .bounds_checks import check_elements, check_view
from .emit import (
    as_index,
    compare,
    elementwise,
    extract_element,
    if_else,
    index_constant,
    index_op,
    loop_nest,
    materialize,
    op,
    remainder,
    scalar_constant,
    static_or_value,
    to_index,
    while_loop,
    zero_of,
)
from .strided import Strided


@dataclass(frozen=True)
class Window:
    """Per dimension, the first index kept and how many are kept (ints when static)."""

    lows: tuple
    sizes: tuple

    @staticmethod
    def full(shape) -> Window:
        return Window((0,) * len(shape), tuple(shape))

    def is_full(self, shape) -> bool:
        return all(low == 0 for low in self.lows) and tuple(self.sizes) == tuple(shape)


# -- scalars ---------------------------------------------------------------------------------


def flat_view(c, base: Value, element) -> Value:
    """The argument `base` as `memref<?xT>` (elements from its start), made once per function
    at its entry so that every access in any region can use it."""
    key = (base, element)
    cached = c.flat_views.get(key)
    if cached is None:
        with _at_entry(c, base):
            cached = c.emit(memref.CastOp(base, MemRefType([DYNAMIC], element))).results[0]
        c.flat_views[key] = cached
    return cached


def _at_entry(c, base: Value):
    """The insertion point of what is made once per argument: the function's entry, after
    `base` when it is made there (an argument seen with another element type)."""
    made = base.defining_op
    return c.builder.at_start(c.entry_block) if made is None else c.builder.after(made)


def _element(c, pointer, element):
    return flat_view(c, pointer.base, element), to_index(c, pointer.offset)


def load_scalar(c, pointer, t, mask, other) -> Value:
    check_elements(c, pointer, mask, "load")
    flat, position = _element(c, pointer, t)

    def load():
        return [c.emit(memref.LoadOp(flat, [position])).results[0]]

    if mask is None:
        return load()[0]
    otherwise = [other] if other is not None else [zero_of(c, t)]
    return if_else(c, mask, [t], load, lambda: otherwise)[0]


def store_scalar(c, pointer, value: Value, mask) -> None:
    check_elements(c, pointer, mask, "store")
    flat, position = _element(c, pointer, value.type)

    def store():
        c.emit(memref.StoreOp(value, flat, [position]))
        return []

    if mask is None:
        store()
    else:
        if_else(c, mask, [], store, None)


# -- views -----------------------------------------------------------------------------------


def view(c, base: Value, start, shape, strides) -> Value:
    """`memref.reinterpret_cast` of `base` at `start` (an index value or int) with `strides`
    (ints or index values)."""
    cast = memref.ReinterpretCastOp(base, None, [start], list(shape), list(strides))
    return c.emit(cast).results[0]


@dataclass(frozen=True)
class RowWrap:
    """A wrap (strided.py) as index values or ints: row p of dimension `dim` starts at
    `start + p · row_step + ((first + p) mod modulus) · scale`."""

    dim: int
    first: int | Value
    modulus: int | Value
    row_step: int | Value
    scale: int | Value


@dataclass(frozen=True)
class Layout:
    """Where a block lies in its argument: `start` (an index value or int) and `strides`
    (ints or index values) of the view of `shape`, and how its rows wrap, if they do."""

    start: int | Value
    shape: tuple
    strides: tuple
    wrap: RowWrap | None = None


def layout(c, offsets: Strided) -> Layout:
    """The layout of a structured state, its expressions materialized."""
    strides = [static_or_value(c, s) for s in offsets.strides]
    start = static_or_value(c, offsets.start)
    wrap = offsets.wrap
    if wrap is None:
        return Layout(start, offsets.shape, tuple(strides))
    w = wrap.dim
    strides[w] = static_or_value(c, offsets.strides[w] + wrap.scale)
    parts = (wrap.start, wrap.modulus, offsets.strides[w], wrap.scale)
    rows = RowWrap(w, *(static_or_value(c, e) for e in parts))
    return Layout(start, offsets.shape, tuple(strides), rows)


def _each_run(c, base: Value, where: Layout, window: Window, action, what: str) -> None:
    """Call `action(view, memory_at, block_at, sizes)` for each piece of `window`: the view's
    indices `memory_at` hold the block's indices `block_at`, `sizes` of them (each piece
    bounds-checked first in debug mode, as a `what` access)."""
    wrap = where.wrap
    if wrap is None:
        check_view(c, base, where.start, where.strides, window.lows, window.sizes, what)
        whole = view(c, base, where.start, where.shape, where.strides)
        action(whole, list(window.lows), list(window.lows), list(window.sizes))
        return
    w = wrap.dim
    end = as_index(c, index_op(c, "arith.addi", window.lows[w], window.sizes[w]))
    zero = index_constant(c, 0)

    def more(values):
        return compare(c, "slt", values[0], end)

    def one_run(values):
        (p,) = values
        row = as_index(c, index_op(c, "arith.addi", wrap.first, p))
        modulus = as_index(c, wrap.modulus)
        wrapped = remainder(c, row, modulus)
        positive = compare(c, "sgt", modulus, zero)
        in_order = op(c, "arith.andi", [positive, compare(c, "sge", row, zero)], i1)
        left = op(c, "arith.subi", [end, p], index)
        room = op(c, "arith.minsi", [left, op(c, "arith.subi", [modulus, wrapped], index)], index)
        run = op(c, "arith.select", [in_order, room, index_constant(c, 1)], index)
        at = index_op(c, "arith.addi", where.start, index_op(c, "arith.muli", p, wrap.row_step))
        at = index_op(c, "arith.addi", at, index_op(c, "arith.muli", wrapped, wrap.scale))
        piece = view(c, base, at, where.shape, where.strides)
        memory_at, block_at, sizes = list(window.lows), list(window.lows), list(window.sizes)
        memory_at[w], block_at[w], sizes[w] = 0, p, run
        check_view(c, base, at, where.strides, memory_at, sizes, what)
        action(piece, memory_at, block_at, sizes)
        return [op(c, "arith.addi", [p, run], index)]

    while_loop(c, [as_index(c, window.lows[w])], more, one_run)


def box_window(c, box, shape) -> Window:
    """The window a box mask (mask_analysis.py) keeps: per dimension from the largest of 0 and
    its lower limits to the smallest of n and its upper limits (nothing when they cross); a
    false scalar condition keeps nothing."""
    lows, sizes = [], []
    for uppers, lowers, n in zip(box.limits, box.lows, shape):
        high, low = n, 0
        for limit in uppers:
            high = index_op(c, "arith.minsi", high, _limit(c, limit))
        for limit in lowers:
            low = index_op(c, "arith.maxsi", low, _limit(c, limit))
        low = index_op(c, "arith.minsi", low, n)
        lows.append(low)
        sizes.append(index_op(c, "arith.maxsi", index_op(c, "arith.subi", high, low), 0))
    if box.conditions and sizes:
        on = _all_conditions(c, box.conditions)
        sizes[0] = op(c, "arith.select", [on, as_index(c, sizes[0]), index_constant(c, 0)], index)
    return Window(tuple(lows), tuple(sizes))


def _limit(c, limit) -> Value:
    """`ceil(bound / divisor)` as an index value."""
    bound = materialize(c, limit.bound)
    if limit.divisor == 1:
        return bound
    return op(c, "arith.ceildivsi", [bound, index_constant(c, limit.divisor)], index)


def _all_conditions(c, conditions) -> Value:
    result = None
    for condition in conditions:
        if condition.value is not None:
            value = c.value(condition.value)
        else:
            lhs, rhs = materialize(c, condition.lhs), materialize(c, condition.rhs)
            value = compare(c, condition.predicate, lhs, rhs)
        result = value if result is None else op(c, "arith.andi", [result, value], i1)
    return result


def load_window(c, base: Value, where: Layout, window: Window, padding, t) -> Value:
    """A structured load: the window of the view copied into a fresh buffer, the rest of it
    `padding` (a scalar), as a tensor."""
    element, shape = t.element_type, list(t.shape)
    buffer = c.emit(memref.AllocOp(MemRefType(shape, element))).results[0]
    partial = _short(c, window, shape)
    if partial is not None:

        def fill_buffer():
            c.emit(linalg.FillOp([padding], [buffer]))
            return []

        if_else(c, partial, [], fill_buffer, None)
    ones = [1] * len(shape)

    def copy(source, memory_at, block_at, sizes):
        if where.wrap is None and window.is_full(shape):
            c.emit(memref.CopyOp(source, buffer))
            return
        piece = c.emit(memref.SubViewOp(source, memory_at, sizes, ones)).results[0]
        target = c.emit(memref.SubViewOp(buffer, block_at, sizes, ones)).results[0]
        c.emit(memref.CopyOp(piece, target))

    _each_run(c, base, where, window, copy, "load")
    return c.emit(bufferization.ToTensorOp(buffer, restrict=True, writable=True)).results[0]


def _short(c, window: Window, shape) -> Value | None:
    """`i1` true when the window leaves some element of the block out (None: never)."""
    result = None
    for low, size, n in zip(window.lows, window.sizes, shape):
        if isinstance(low, int) and isinstance(size, int):
            if low == 0 and size == n:
                continue
            return scalar_constant(c, 1, i1)
        short = compare(c, "slt", as_index(c, size), index_constant(c, n))
        result = short if result is None else op(c, "arith.ori", [result, short], i1)
    return result


def store_window(
    c, base: Value, where: Layout, window: Window, value: Value, attributes=None
) -> None:
    """A structured store: the window of `value` written into the view (each write carrying
    `attributes`: the store's hints, convert_memory.py)."""
    t = value.type
    shape = list(t.shape)
    ones = [1] * len(shape)

    def write(target, memory_at, block_at, sizes):
        part = value
        if where.wrap is not None or not window.is_full(shape):
            part = c.emit(tensor.ExtractSliceOp(value, block_at, sizes, ones)).results[0]
            target = c.emit(memref.SubViewOp(target, memory_at, sizes, ones)).results[0]
        c.emit(bufferization.MaterializeInDestinationOp(part, target, attributes=attributes))

    _each_run(c, base, where, window, write, "store")


# -- element by element ---------------------------------------------------------------------------


def gather(c, pointer, mask, other, t: RankedTensorType) -> Value:
    """A load element by element: `linalg.generic` over the offsets (and mask, other)."""
    check_elements(c, pointer, mask, "load")
    element = t.element_type
    flat = flat_view(c, pointer.base, element)
    inputs = [pointer.offset] + [v for v in (mask, other) if v is not None]

    def body(xs):
        position = to_index(c, xs[0])

        def load():
            return [c.emit(memref.LoadOp(flat, [position])).results[0]]

        if mask is None:
            return load()
        otherwise = xs[2] if other is not None else zero_of(c, element)
        return if_else(c, xs[1], [element], load, lambda: [otherwise])

    return elementwise(c, inputs, [t], body)[0]


def scatter(c, pointer, value: Value, mask) -> None:
    """A store element by element, in row-major order (the later lane wins a collision)."""
    check_elements(c, pointer, mask, "store")
    flat = flat_view(c, pointer.base, value.type.element_type)

    def body(indices, carried):
        position = to_index(c, extract_element(c, pointer.offset, indices))
        element = extract_element(c, value, indices)

        def store():
            c.emit(memref.StoreOp(element, flat, [position]))
            return []

        if mask is None:
            store()
        else:
            if_else(c, extract_element(c, mask, indices), [], store, None)
        return []

    loop_nest(c, list(value.type.shape), [], body)


def retype_base(c, base: Value, element) -> Value:
    """The same argument seen with another element type of the same size, made once at the
    function's entry (so that every region may use it)."""
    key = (base, element)
    cached = c.retyped.get(key)
    if cached is None:
        cast = create_operation(
            "builtin.unrealized_conversion_cast",
            [base],
            [UnrankedMemRefType(element)],
            location=c.builder.location,
        )
        with _at_entry(c, base):
            cached = c.emit(cast).results[0]
        c.retyped[key] = cached
    return cached
