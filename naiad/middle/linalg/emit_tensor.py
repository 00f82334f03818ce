"""Building the tensor ops of the conversion: ranges, broadcasts and re-shapes, reductions,
scans, dots, `tl.gather` and `tl.histogram` (see emit.py for the shared pieces).
"""

from __future__ import annotations

from ...dialects import linalg, scf, tensor
from ...ir import RankedTensorType, Value, i1, index
from ...ir.affine import AffineMap
from .emit import (
    call_region,
    compare,
    elementwise,
    empty,
    extract_element,
    extract_slice,
    fill,
    generic,
    if_else,
    index_constant,
    insert_element,
    insert_slice,
    loop_index,
    loop_nest,
    op,
    scalar_constant,
    to_index,
    zero_of,
)


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
    """Row-major reshape: one `tensor.expand_shape` where each source dimension splits into
    consecutive new ones (`[8, 256]` into `[8, 16, 16]`), one `tensor.collapse_shape` where
    consecutive source dimensions merge, else a collapse to one dimension and an expand. The
    first two stay views of a strided block (a loaded tile's rows); a collapse to one dimension
    needs the block contiguous, so the back end copies a strided one."""
    source = value.type
    if tuple(source.shape) == tuple(t.shape):
        return value
    if source.rank < t.rank and (groups := _regroup(t.shape, source.shape)) is not None:
        return c.emit(tensor.ExpandShapeOp(value, groups, list(t.shape), t)).results[0]
    if source.rank > t.rank and (groups := _regroup(source.shape, t.shape)) is not None:
        return c.emit(tensor.CollapseShapeOp(value, groups, t)).results[0]
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


def _regroup(fine, coarse) -> list[list[int]] | None:
    """For each dimension of `coarse`, the consecutive dimensions of `fine` whose sizes multiply
    to its size (trailing ones of size 1 joining the last group), or None where the two shapes
    do not nest so."""
    groups, i = [], 0
    for size in coarse:
        if i >= len(fine):
            return None
        group, product = [i], fine[i]
        i += 1
        while product < size and i < len(fine):
            group.append(i)
            product *= fine[i]
            i += 1
        if product != size:
            return None
        groups.append(group)
    if not groups or any(n != 1 for n in fine[i:]):
        return None
    groups[-1].extend(range(i, len(fine)))
    return groups


def _count(shape) -> int:
    n = 1
    for size in shape:
        n *= size
    return n


def transpose(c, value: Value, order, t: RankedTensorType) -> Value:
    return c.emit(linalg.TransposeOp(value, empty(c, t), list(order))).results[0]


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


# -- gather and histogram -------------------------------------------------------------------------


def gather(c, source: Value, indices: Value, axis: int, t: RankedTensorType) -> Value:
    """`result[i] = source[i with i[axis] = indices[i]]`: a generic over the result reading
    `source` at the gathered position (an index out of range is undefined, as on the GPU)."""

    def body(xs):
        positions = [None if d == axis else loop_index(c, d) for d in range(t.rank)]
        positions[axis] = to_index(c, xs[0])
        return [c.emit(tensor.ExtractOp(source, positions)).results[0]]

    return elementwise(c, [indices], [t], body)[0]


def histogram(c, source: Value, mask: Value | None, t: RankedTensorType) -> Value:
    """Counts of the values of `source` in bins [0, n): a loop over the source carrying the
    counts; values outside the bins and masked-off lanes are not counted."""
    bins = t.shape[0]
    value_type = source.type.element_type
    counts = fill(c, zero_of(c, t.element_type), t)
    one = scalar_constant(c, 1, t.element_type)

    def body(indices, carried):
        value = extract_element(c, source, indices)
        low = compare(c, "sge", value, zero_of(c, value_type))
        high = compare(c, "slt", value, scalar_constant(c, bins, value_type))
        counted = op(c, "arith.andi", [low, high], i1)
        if mask is not None:
            counted = op(c, "arith.andi", [counted, extract_element(c, mask, indices)], i1)

        def count():
            position = [to_index(c, value)]
            bumped = op(c, "arith.addi", [extract_element(c, carried[0], position), one], one.type)
            return [insert_element(c, bumped, carried[0], position)]

        return if_else(c, counted, [t], count, lambda: carried)

    return loop_nest(c, list(source.type.shape), [counts], body)[0]
