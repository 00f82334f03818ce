"""Building blocks of the conversion: index arithmetic, `linalg.generic` nests and the other
upstream ops, each built at the conversion's insertion point with the op's location.

Converters say *what* to build (`emit.fill(c, value, type)`); this module knows *how* upstream
spells it. Integer offsets are `i64` (pointer offsets) or `index` (view positions and sizes);
`materialize` turns an `IndexExpr` of the pointer analysis into `index` arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...dialects import bufferization, linalg, memref, scf, tensor
from ...dialects.base import bit_width
from ...ir import (
    DYNAMIC,
    FloatAttr,
    FloatType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    RankedTensorType,
    Value,
    create_operation,
    element_type,
    i1,
    i64,
    index,
)
from ...ir.affine import AffineMap
from .index_expr import IndexExpr

# -- scalars ---------------------------------------------------------------------------------


def op(c, name: str, operands: Sequence[Value], result_type, attributes=None) -> Value:
    """One single-result op by name (arith, math: ops whose parts are only operands)."""
    created = create_operation(
        name, list(operands), [result_type], attributes or {}, location=c.builder.location
    )
    return c.emit(created).results[0]


def scalar_constant(c, value, t) -> Value:
    """`arith.constant value : t` for an integer, index or float scalar type."""
    if isinstance(t, FloatType):
        attr = FloatAttr(float(value), t)
    else:
        attr = IntegerAttr(int(value), t)
    return op(c, "arith.constant", [], t, {"value": attr})


def index_constant(c, value: int) -> Value:
    """`arith.constant value : index`, where it is asked for (CSE merges repeats)."""
    return scalar_constant(c, value, index)


def to_index(c, value: Value) -> Value:
    """An integer scalar as `index` (sign-extended, as offsets are signed)."""
    if isinstance(value.type, IndexType):
        return value
    return op(c, "arith.index_cast", [value], index)


def to_i64(c, value: Value) -> Value:
    """An integer scalar or block as i64, sign-extended (offsets are signed)."""
    t = value.type
    e = element_type(t)
    if isinstance(e, IndexType):
        return op(c, "arith.index_cast", [value], i64)
    if e.width == 64:
        return value
    target = RankedTensorType(t.shape, i64) if isinstance(t, RankedTensorType) else i64
    if isinstance(t, RankedTensorType):
        return elementwise(c, [value], [target], lambda xs: [op(c, "arith.extsi", xs, i64)])[0]
    return op(c, "arith.extsi", [value], i64)


def materialize(c, expr: IndexExpr) -> Value:
    """`expr` as `index` arithmetic over the converted leaves."""
    total = None
    for monomial, coefficient in expr.terms:
        term = None
        for leaf in monomial:
            value = _leaf_index(c, leaf)
            term = value if term is None else op(c, "arith.muli", [term, value], index)
        if term is None:
            term = index_constant(c, coefficient)
        elif coefficient != 1:
            term = op(c, "arith.muli", [term, index_constant(c, coefficient)], index)
        total = term if total is None else op(c, "arith.addi", [total, term], index)
    return index_constant(c, 0) if total is None else total


def _leaf_index(c, leaf: Value) -> Value:
    """A leaf of an offset expression: an integer scalar, or a loop-carried scalar pointer
    (its offset)."""
    from .conversion import is_pointer

    value = c.pointer(leaf).offset if is_pointer(leaf) else c.value(leaf)
    return to_index(c, value)


def static_or_value(c, expr: IndexExpr) -> int | Value:
    """An int when `expr` is constant (a static size or stride), else its index value."""
    constant = expr.constant_value
    return constant if constant is not None else materialize(c, expr)


def select(c, condition: Value, a: Value, b: Value) -> Value:
    if isinstance(a.type, RankedTensorType):
        if not isinstance(condition.type, RankedTensorType):
            return elementwise(c, [a, b], [a.type], lambda xs: [_select(c, condition, *xs)])[0]
        return elementwise(c, [condition, a, b], [a.type], lambda xs: [_select(c, *xs)])[0]
    return _select(c, condition, a, b)


def _select(c, condition, a, b) -> Value:
    return op(c, "arith.select", [condition, a, b], a.type)


def add_offsets(c, offset: Value, delta: Value) -> Value:
    """`offset + sext(delta)`, scalars or blocks (a scalar offset is splat first)."""
    if isinstance(delta.type, RankedTensorType) and not isinstance(offset.type, RankedTensorType):
        offset = fill(c, offset, RankedTensorType(delta.type.shape, i64))
    if not isinstance(offset.type, RankedTensorType):
        return op(c, "arith.addi", [offset, to_i64(c, delta)], i64)

    def body(xs):
        base, step = xs
        if step.type is not i64:
            step = op(c, "arith.extsi", [step], i64)
        return [op(c, "arith.addi", [base, step], i64)]

    return elementwise(c, [offset, delta], [offset.type], body)[0]


# -- linalg.generic ----------------------------------------------------------------------------


def generic(
    c,
    inputs: Sequence[Value],
    maps: Sequence[AffineMap],
    result_types: Sequence[RankedTensorType],
    iterators: Sequence[str],
    body: Callable[[list[Value]], list[Value]],
) -> list[Value]:
    """A `linalg.generic` on fresh `tensor.empty` outputs of `result_types`; `maps` index the
    inputs (the outputs use the identity over the loops, or the last maps given for them);
    `body(input elements)` builds the body and returns the yielded values."""
    outputs = [empty(c, t) for t in result_types]
    rank = len(iterators)
    all_maps = list(maps) + [AffineMap.identity(rank)] * (len(outputs) + len(inputs) - len(maps))
    created = c.emit(linalg.GenericOp(list(inputs), outputs, all_maps, list(iterators)))
    block = created.body
    with c.builder.at_end(block):
        yielded = body(list(block.arguments[: len(inputs)]))
        c.emit(linalg.YieldOp(yielded))
    return list(created.results)


def elementwise(c, inputs, result_types, body) -> list[Value]:
    """A parallel `linalg.generic` over the shape of `result_types`, identity maps."""
    rank = result_types[0].rank
    maps = [AffineMap.identity(rank)] * len(inputs)
    return generic(c, inputs, maps, result_types, ["parallel"] * rank, body)


def loop_index(c, dim: int) -> Value:
    """`linalg.index dim` inside a generic body."""
    return c.emit(linalg.IndexOp(dim)).results[0]


def make_range(c, start: int, t: RankedTensorType) -> Value:
    """`[start, start + n)` as a 1-D block of `t`."""

    def body(_):
        i = op(c, "arith.index_cast", [loop_index(c, 0)], t.element_type)
        if start:
            i = op(c, "arith.addi", [i, scalar_constant(c, start, t.element_type)], t.element_type)
        return [i]

    return generic(c, [], [], [t], ["parallel"], body)[0]


def broadcast(c, value: Value, t: RankedTensorType) -> Value:
    """Size-1 dimensions of `value` widened to `t`'s (a generic reading them at index 0)."""
    source = AffineMap.broadcast(value.type.shape, t.shape)
    return generic(c, [value], [source], [t], ["parallel"] * t.rank, lambda xs: xs)[0]


# -- loops -----------------------------------------------------------------------------------


def loop_nest(c, shape: Sequence[int], carried: Sequence[Value], body) -> list[Value]:
    """`scf.for` loops over every index of `shape` (row-major), carrying `carried`;
    `body(indices, carried) -> new carried` builds the innermost body."""
    if not shape:
        return list(body([], list(carried)))
    zero, one = index_constant(c, 0), index_constant(c, 1)
    loop = c.emit(scf.ForOp(zero, index_constant(c, shape[0]), one, list(carried)))
    with c.builder.at_end(loop.body):
        iv, inner = loop.body.arguments[0], list(loop.body.arguments[1:])

        def nested(indices, values):
            return body([iv, *indices], values)

        results = loop_nest(c, shape[1:], inner, nested)
        c.emit(scf.YieldOp(results))
    return list(loop.results)


def if_else(c, condition: Value, result_types, then_body, else_body) -> list[Value]:
    """`scf.if` whose branches are built by `then_body()` / `else_body()` (returning the
    yielded values; `else_body` None: no else)."""
    created = c.emit(scf.IfOp(condition, list(result_types), with_else=else_body is not None))
    with c.builder.at_end(created.then_block):
        c.emit(scf.YieldOp(then_body()))
    if else_body is not None:
        with c.builder.at_end(created.else_block):
            c.emit(scf.YieldOp(else_body()))
    return list(created.results)


def call_region(c, region, arguments: Sequence[Value]) -> list[Value]:
    """Convert the ops of a single-block combine region at the insertion point, its block
    arguments bound to `arguments`; the values its terminator returns."""
    block = region.entry_block
    for old, new in zip(block.arguments, arguments):
        c.bind(old, new)
    for inner in block:
        if inner is block.last_op:
            return [c.value(v) for v in inner.operands]
        c.convert_op(inner)
    raise AssertionError("a combine region ends with its return")


def zero_of(c, t) -> Value:
    return scalar_constant(c, 0, t) if not isinstance(t, FloatType) else scalar_constant(c, 0.0, t)


# -- tensors -----------------------------------------------------------------------------------


def empty(c, t: RankedTensorType) -> Value:
    return c.emit(tensor.EmptyOp(t)).results[0]


def fill(c, value: Value, t: RankedTensorType) -> Value:
    return c.emit(linalg.FillOp([value], [empty(c, t)])).results[0]


def expand_dims(c, value: Value, axis: int, t: RankedTensorType) -> Value:
    """A size-1 dimension inserted at `axis` (a `tensor.expand_shape`)."""
    rank = value.type.rank
    groups = [[d] if d < axis else [d + 1] for d in range(rank)]
    if axis < rank:  # the new dimension leads the group of the source dimension it precedes
        groups[axis] = [axis, axis + 1]
    else:  # or trails the last one
        groups[rank - 1] = [rank - 1, rank]
    return c.emit(tensor.ExpandShapeOp(value, groups, list(t.shape), t)).results[0]


def reshape(c, value: Value, t: RankedTensorType) -> Value:
    """Row-major reshape: collapse to one dimension, expand to the new shape."""
    source = value.type
    if tuple(source.shape) == tuple(t.shape):
        return value
    flat_type = RankedTensorType([_count(source.shape)], source.element_type)
    flat = value
    if source.rank != 1:
        flat = c.emit(tensor.CollapseShapeOp(value, [list(range(source.rank))], flat_type)).results[
            0
        ]
    if t.rank == 1:
        return flat
    groups = [list(range(t.rank))]
    return c.emit(tensor.ExpandShapeOp(flat, groups, list(t.shape), t)).results[0]


def _count(shape) -> int:
    n = 1
    for size in shape:
        n *= size
    return n


def transpose(c, value: Value, order, t: RankedTensorType) -> Value:
    return c.emit(linalg.TransposeOp(value, empty(c, t), list(order))).results[0]


def extract_element(c, value: Value, indices) -> Value:
    positions = [index_constant(c, i) if isinstance(i, int) else i for i in indices]
    return c.emit(tensor.ExtractOp(value, positions)).results[0]


def insert_slice(c, source: Value, dest: Value, offsets, sizes) -> Value:
    strides = [1] * len(offsets)
    return c.emit(tensor.InsertSliceOp(source, dest, offsets, sizes, strides)).results[0]


def extract_slice(c, source: Value, offsets, sizes, result_type=None) -> Value:
    strides = [1] * len(offsets)
    return c.emit(tensor.ExtractSliceOp(source, offsets, sizes, strides, result_type)).results[0]


def _drop(shape, axis):
    return [n for d, n in enumerate(shape) if d != axis]


def _slice_at(c, value: Value, axis: int, position, count: int = 1, keep_axis: bool = False):
    """`count` slices of `value` from `position` along `axis` (the axis dropped when
    `count == 1` and not `keep_axis`)."""
    t = value.type
    offsets = [0] * t.rank
    offsets[axis] = position
    sizes = list(t.shape)
    sizes[axis] = count
    if count == 1 and not keep_axis:
        result = RankedTensorType(_drop(t.shape, axis), t.element_type)
    else:
        result = RankedTensorType(sizes, t.element_type)
    return extract_slice(c, value, offsets, sizes, result)


# -- reductions, scans, dots --------------------------------------------------------------------


def reduce(c, sources, axis: int, region, result_types) -> list[Value]:
    """Left fold of `sources` along `axis` with the combine `region` (see
    convert_reductions.py): the first slice is the initial value."""
    n = sources[0].type.shape[axis]
    inits = [_slice_at(c, s, axis, 0) for s in sources]
    if n > 1:
        inputs = [_slice_at(c, s, axis, 1, n - 1, keep_axis=True) for s in sources]
        created = c.emit(linalg.ReduceOp(inputs, inits, [axis]))
        block = created.body
        count = len(sources)
        with c.builder.at_end(block):
            accumulated, following = block.arguments[count:], block.arguments[:count]
            c.emit(linalg.YieldOp(call_region(c, region, [*accumulated, *following])))
        inits = list(created.results)
    results = []
    for value, t in zip(inits, result_types):
        if not isinstance(t, RankedTensorType):  # a 1-D block reduced to a scalar
            value = extract_element(c, value, [])
        results.append(value)
    return results


def scan(c, sources, axis: int, reverse: bool, region) -> list[Value]:
    """Inclusive scan of `sources` along `axis`: a loop carrying the running slice."""
    n = sources[0].type.shape[axis]
    first = n - 1 if reverse else 0
    running = [_slice_at(c, s, axis, first) for s in sources]
    outputs = []
    for s, value in zip(sources, running):
        out = empty(c, s.type)
        outputs.append(_insert_at(c, value, out, axis, first))
    if n == 1:
        return outputs
    count = len(sources)
    loop = c.emit(
        scf.ForOp(
            index_constant(c, 1), index_constant(c, n), index_constant(c, 1), [*outputs, *running]
        )
    )
    with c.builder.at_end(loop.body):
        i = loop.body.arguments[0]
        carried = list(loop.body.arguments[1:])
        outs, accs = carried[:count], carried[count:]
        position = op(c, "arith.subi", [index_constant(c, n - 1), i], index) if reverse else i
        following = [_slice_at(c, s, axis, position) for s in sources]
        slice_types = [v.type for v in accs]

        def combine(elements):
            return call_region(c, region, elements)

        combined = _map_slices(c, [*accs, *following], slice_types, combine)
        outs = [_insert_at(c, v, o, axis, position) for v, o in zip(combined, outs)]
        c.emit(scf.YieldOp([*outs, *combined]))
    return list(loop.results[:count])


def _map_slices(c, inputs, result_types, body) -> list[Value]:
    return elementwise(c, inputs, result_types, body)


def _insert_at(c, value: Value, dest: Value, axis: int, position) -> Value:
    t = dest.type
    offsets = [0] * t.rank
    offsets[axis] = position
    sizes = list(t.shape)
    sizes[axis] = 1
    return insert_slice(c, value, dest, offsets, sizes)


def matmul(c, a: Value, b: Value, acc: Value) -> Value:
    """`acc + a @ b` (3-D: batched)."""
    op_class = linalg.MatmulOp if acc.type.rank == 2 else linalg.BatchMatmulOp
    return c.emit(op_class([a, b], [acc])).results[0]


# -- memory --------------------------------------------------------------------------------------


def flat_view(c, base: Value, element) -> Value:
    """The argument `base` as `memref<?xT>` (elements from its start), made once per function
    at its entry so that every access in any region can use it."""
    key = (base, element)
    cached = c.flat_views.get(key)
    if cached is None:
        with c.builder.at_start(c.entry_block):
            cached = c.emit(memref.CastOp(base, MemRefType([DYNAMIC], element))).results[0]
        c.flat_views[key] = cached
    return cached


def _element(c, pointer, element):
    return flat_view(c, pointer.base, element), to_index(c, pointer.offset)


def load_scalar(c, pointer, t, mask, other) -> Value:
    flat, position = _element(c, pointer, t)

    def load():
        return [c.emit(memref.LoadOp(flat, [position])).results[0]]

    if mask is None:
        return load()[0]
    otherwise = [other] if other is not None else [zero_of(c, t)]
    return if_else(c, mask, [t], load, lambda: otherwise)[0]


def store_scalar(c, pointer, value: Value, mask) -> None:
    flat, position = _element(c, pointer, value.type)

    def store():
        c.emit(memref.StoreOp(value, flat, [position]))
        return []

    if mask is None:
        store()
    else:
        if_else(c, mask, [], store, None)


def view(c, base: Value, offsets, element) -> Value:
    """The strided view `memref.reinterpret_cast` makes of a structured pointer block."""
    start = materialize(c, offsets.start)
    strides = [static_or_value(c, s) for s in offsets.strides]
    cast = memref.ReinterpretCastOp(base, None, [start], list(offsets.shape), strides)
    return c.emit(cast).results[0]


def box_sizes(c, box, shape) -> list:
    """Per dimension, how many leading indices a prefix-box mask keeps (ints when known)."""
    sizes = []
    for limits, size in zip(box.limits, shape):
        kept = size
        for limit in limits:
            bound = materialize(c, limit.bound)
            if limit.divisor != 1:
                divisor = index_constant(c, limit.divisor)
                bound = op(c, "arith.ceildivsi", [bound, divisor], index)
            kept = bound if isinstance(kept, int) else op(c, "arith.minsi", [kept, bound], index)
        if not isinstance(kept, int):
            kept = op(c, "arith.minsi", [kept, index_constant(c, size)], index)
            kept = op(c, "arith.maxsi", [kept, index_constant(c, 0)], index)
        sizes.append(kept)
    if box.conditions and sizes:
        on = _all_conditions(c, box.conditions)
        first = sizes[0] if not isinstance(sizes[0], int) else index_constant(c, sizes[0])
        sizes[0] = _select(c, on, first, index_constant(c, 0))
    return sizes


def _all_conditions(c, conditions) -> Value:
    result = None
    for condition in conditions:
        if condition.value is not None:
            value = c.value(condition.value)
        else:
            lhs, rhs = materialize(c, condition.lhs), materialize(c, condition.rhs)
            value = op(c, "arith.cmpi", [lhs, rhs], i1, {"predicate": _predicate(condition)})
        result = value if result is None else op(c, "arith.andi", [result, value], i1)
    return result


def _predicate(condition):
    from ...dialects.arith_attributes import CmpIPredicate

    return CmpIPredicate.get(condition.predicate)


def load_view(c, base: Value, offsets, box, other, t: RankedTensorType) -> Value:
    """A structured load: the view copied into a fresh buffer (the box of it when masked,
    the rest filled with `other`, or 0)."""
    element, shape = t.element_type, list(t.shape)
    source = view(c, base, offsets, element)
    buffer = c.emit(memref.AllocOp(MemRefType(shape, element))).results[0]
    if box is None or box.is_full:
        c.emit(memref.CopyOp(source, buffer))
    else:
        sizes = box_sizes(c, box, shape)
        fill_value = other if other is not None else zero_of(c, element)
        partial = _any_short(c, sizes, shape)
        if partial is not None:

            def fill_buffer():
                c.emit(linalg.FillOp([fill_value], [buffer]))
                return []

            if_else(c, partial, [], fill_buffer, None)
        zeros, ones = [0] * len(shape), [1] * len(shape)
        window = c.emit(memref.SubViewOp(source, zeros, sizes, ones)).results[0]
        target = c.emit(memref.SubViewOp(buffer, zeros, sizes, ones)).results[0]
        c.emit(memref.CopyOp(window, target))
    return c.emit(bufferization.ToTensorOp(buffer, restrict=True, writable=True)).results[0]


def _any_short(c, sizes, shape) -> Value | None:
    """`i1` true when some dimension keeps fewer than all its indices (None: never)."""
    result = None
    for kept, size in zip(sizes, shape):
        if isinstance(kept, int):
            if kept < size:
                return scalar_constant(c, 1, i1)
            continue
        short = op(
            c,
            "arith.cmpi",
            [kept, index_constant(c, size)],
            i1,
            {"predicate": _predicate_named("slt")},
        )
        result = short if result is None else op(c, "arith.ori", [result, short], i1)
    return result


def _predicate_named(name: str):
    from ...dialects.arith_attributes import CmpIPredicate

    return CmpIPredicate.get(name)


def store_view(c, base: Value, offsets, box, value: Value) -> None:
    """A structured store: the value (the box of it when masked) written into the view."""
    t = value.type
    target = view(c, base, offsets, t.element_type)
    if box is not None and not box.is_full:
        shape = list(t.shape)
        sizes = box_sizes(c, box, shape)
        zeros, ones = [0] * len(shape), [1] * len(shape)
        value = c.emit(tensor.ExtractSliceOp(value, zeros, sizes, ones)).results[0]
        target = c.emit(memref.SubViewOp(target, zeros, sizes, ones)).results[0]
    c.emit(bufferization.MaterializeInDestinationOp(value, target))


def gather(c, pointer, mask, other, t: RankedTensorType) -> Value:
    """A load element by element: `linalg.generic` over the offsets (and mask, other)."""
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
        return [c.emit(tensor.InsertOp(old, carried[0], _indices(c, indices))).results[0]]

    return loop_nest(c, list(t.shape), [empty(c, t)], body)[0]


def _indices(c, indices):
    return [index_constant(c, i) if isinstance(i, int) else i for i in indices]


def _compare_and_swap(c, flat, position, expected, desired) -> Value:
    """`memref.generic_atomic_rmw`: store `desired` if the element's bits equal `expected`'s."""
    created = c.emit(memref.GenericAtomicRMWOp(flat, [position]))
    block = created.atomic_body.entry_block
    with c.builder.at_end(block):
        current = block.arguments[0]
        same = _same_bits(c, current, expected)
        c.emit(memref.AtomicYieldOp(_select(c, same, desired, current)))
    return created.results[0]


def _same_bits(c, a: Value, b: Value) -> Value:
    t = a.type
    if isinstance(t, FloatType):
        width = IntegerType(bit_width(t))
        a = op(c, "arith.bitcast", [a], width)
        b = op(c, "arith.bitcast", [b], width)
    return op(c, "arith.cmpi", [a, b], i1, {"predicate": _predicate_named("eq")})


def retype_base(c, base: Value, element) -> Value:
    """The same argument seen with another element type of the same size."""
    from ...ir import UnrankedMemRefType

    cast = create_operation(
        "builtin.unrealized_conversion_cast",
        [base],
        [UnrankedMemRefType(element)],
        location=c.builder.location,
    )
    return c.emit(cast).results[0]
