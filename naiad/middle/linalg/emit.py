"""Building blocks of the conversion: index arithmetic, `linalg.generic` nests, loops and the
basic tensor ops, each built at the conversion's insertion point with the op's location.

Converters say *what* to build (`emit.fill(c, value, type)`); the emit modules know *how*
upstream spells it: this one the shared pieces, emit_tensor.py the shape ops, reductions, scans
and dots, emit_memory.py loads and stores, emit_atomics.py atomics. Integer offsets are `i64`
(pointer offsets) or `index` (view positions and sizes); `materialize` turns an `IndexExpr` of
the pointer analysis into `index` arithmetic.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

from ...dialects import linalg, scf, tensor
from ...dialects.arith.attributes import CmpIPredicate
from ...ir import (
    FloatAttr,
    FloatType,
    IndexType,
    IntegerAttr,
    RankedTensorType,
    Value,
    create_operation,
    element_type,
    i1,
    i64,
    index,
    is_pointer_like,
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
    """A leaf of an offset expression: an integer scalar, a loop-carried scalar pointer (its
    offset), or a loop-carried pointer block (its start, an index)."""
    start = c.starts.get(leaf)
    if start is not None:
        return start
    value = c.pointer(leaf).offset if is_pointer_like(leaf.type) else c.value(leaf)
    return to_index(c, value)


def remainder(c, x: Value, m: Value) -> Value:
    """The kernel's `x % m` on index values: C's remainder, and `x % 0 = x`."""
    zero = compare(c, "eq", m, index_constant(c, 0))
    divisor = op(c, "arith.select", [zero, index_constant(c, 1), m], index)
    result = op(c, "arith.remsi", [x, divisor], index)
    return op(c, "arith.select", [zero, x, result], index)


def offsets_block(c, state) -> Value:
    """The `tensor<...xi64>` of a `Strided` state's offsets, element by element: what a
    gather through a pointer block carried by its start reads."""
    start = materialize(c, state.start)
    strides = [materialize(c, s) for s in state.strides]
    wrap = state.wrap
    if wrap is not None:
        first, modulus, scale = (materialize(c, e) for e in (wrap.start, wrap.modulus, wrap.scale))

    def body(_):
        total = start
        for d, stride in enumerate(strides):
            term = op(c, "arith.muli", [loop_index(c, d), stride], index)
            total = op(c, "arith.addi", [total, term], index)
        if wrap is not None:
            row = op(c, "arith.addi", [first, loop_index(c, wrap.dim)], index)
            term = op(c, "arith.muli", [remainder(c, row, modulus), scale], index)
            total = op(c, "arith.addi", [total, term], index)
        return [op(c, "arith.index_cast", [total], i64)]

    t = RankedTensorType(state.shape, i64)
    return generic(c, [], [], [t], ["parallel"] * len(state.shape), body)[0]


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


# -- loops -----------------------------------------------------------------------------------


def loop_nest(c, shape: Sequence[int | Value], carried: Sequence[Value], body) -> list[Value]:
    """`scf.for` loops over every index of `shape` (ints or index values; row-major), carrying
    `carried`; `body(indices, carried) -> new carried` builds the innermost body."""
    if not shape:
        return list(body([], list(carried)))
    zero, one = index_constant(c, 0), index_constant(c, 1)
    loop = c.emit(scf.ForOp(zero, as_index(c, shape[0]), one, list(carried)))
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


def while_loop(c, inits: Sequence[Value], condition, body) -> list[Value]:
    """`scf.while` carrying `inits`: `condition(values) -> i1` builds the test, `body(values)
    -> next values` the loop body; the values once the test fails."""
    types = [v.type for v in inits]
    created = c.emit(scf.WhileOp(list(inits), types))
    before = created.before.block
    with c.builder.at_end(before):
        values = list(before.arguments)
        c.emit(scf.ConditionOp(condition(values), values))
    after = created.after.block
    with c.builder.at_end(after):
        c.emit(scf.YieldOp(body(list(after.arguments))))
    return list(created.results)


def zero_of(c, t) -> Value:
    return scalar_constant(c, 0, t) if not isinstance(t, FloatType) else scalar_constant(c, 0.0, t)


def compare(c, predicate: str, a: Value, b: Value) -> Value:
    """`arith.cmpi <predicate>, a, b` on integer or index scalars."""
    return op(c, "arith.cmpi", [a, b], i1, {"predicate": CmpIPredicate.get(predicate)})


_INDEX_FOLDS = {
    "arith.addi": operator.add,
    "arith.subi": operator.sub,
    "arith.muli": operator.mul,
    "arith.minsi": min,
    "arith.maxsi": max,
}


def index_op(c, name: str, a: int | Value, b: int | Value) -> int | Value:
    """An `index` binary op (add, sub, mul, min, max) of values or ints: an int when both are
    (static sizes stay static)."""
    if isinstance(a, int) and isinstance(b, int):
        return _INDEX_FOLDS[name](a, b)
    identity = {"arith.addi": 0, "arith.subi": 0, "arith.muli": 1}.get(name)
    if identity is not None and isinstance(b, int) and b == identity:
        return a
    if name in ("arith.addi", "arith.muli") and isinstance(a, int) and a == identity:
        return b
    return op(c, name, [as_index(c, a), as_index(c, b)], index)


def as_index(c, value: int | Value) -> Value:
    """An int or index value as an index value."""
    return index_constant(c, value) if isinstance(value, int) else value


# -- tensors -----------------------------------------------------------------------------------


def empty(c, t: RankedTensorType) -> Value:
    return c.emit(tensor.EmptyOp(t)).results[0]


def fill(c, value: Value, t: RankedTensorType) -> Value:
    return c.emit(linalg.FillOp([value], [empty(c, t)])).results[0]


def extract_element(c, value: Value, indices) -> Value:
    return c.emit(tensor.ExtractOp(value, _indices(c, indices))).results[0]


def insert_slice(c, source: Value, dest: Value, offsets, sizes) -> Value:
    strides = [1] * len(offsets)
    return c.emit(tensor.InsertSliceOp(source, dest, offsets, sizes, strides)).results[0]


def extract_slice(c, source: Value, offsets, sizes, result_type=None) -> Value:
    strides = [1] * len(offsets)
    return c.emit(tensor.ExtractSliceOp(source, offsets, sizes, strides, result_type)).results[0]


def insert_element(c, value: Value, dest: Value, indices) -> Value:
    return c.emit(tensor.InsertOp(value, dest, _indices(c, indices))).results[0]


def _indices(c, indices):
    return [as_index(c, i) for i in indices]
