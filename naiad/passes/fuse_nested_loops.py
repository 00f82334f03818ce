"""`fuse-nested-loops`: a loop marked `tt.flatten` (`tl.range(..., flatten=True)`) and the one
loop nested in it become one loop over every inner iteration of every outer iteration.

Legal for the nests `loop_nests.Nest` accepts; anything else is left alone. As Triton's fusion:
the fused loop runs `max(1, inner trips)` iterations per outer iteration, `T` counting them; the
code before the inner loop (the prologue) runs where `T == 0`, the inner body where
`T < inner trips` and the code after it (the epilogue) on the last. Inner bounds that read the
outer induction variable are counted by a first loop over the outer range. Where the inner
bounds are invariant, an empty inner loop is decided once, before the loop (the nest without
its inner loop runs then), and where they are assumed ordered (`llvm.intr.assume(ub > lb)`),
the body needs no condition either. Trip counts are i64, so no product of two overflows.

    scf.for %i = %lb to %ub step %s {tt.flatten} { P(%i); scf.for %j = %lj to %uj step %sj
        { B(%i, %j) }; E(%i) }
    ==>
    %n = max(0, trips(%lb, %ub, %s)) * max(1, trips(%lj, %uj, %sj))        (i64)
    scf.for %t = 0 to %n step 1 iter_args(%T = 0, %i = %lb - %s, %j, ...) {
      %i', %j', ... = scf.if %T == 0 { P(%i + %s); yield %i + %s, %lj, ... } else { ... }
      %j'' = scf.if %T < trips(%lj, %uj, %sj) { B(%i', %j'); yield %j' + %sj } else { %j' }
      scf.if %T == max(1, trips) - 1 { E(%i') }
      yield %T == max(1, trips) - 1 ? 0 : %T + 1, %i', %j'', ...
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dialects import arith, scf, tt, ub
from ..ir import (
    DenseElementsAttr,
    FloatAttr,
    FloatType,
    IntegerAttr,
    IntegerType,
    Operation,
    RankedTensorType,
    Value,
    register_pass,
)
from ..ir.passes import Pass
from .canonicalize import Canonicalize
from .dot_nests import EXCEPT_DOTS, kept
from .licm import hoist_nest_invariants
from .loop_nests import Nest, placeholder_source

_FLATTEN = "tt.flatten"
_STAGES = "tt.num_stages"
_I64 = IntegerType(64)


@register_pass("fuse-nested-loops")
@dataclass(frozen=True)
class FuseNestedLoops(Pass):
    """Fuse each `tt.flatten` loop with the loop nested in it, innermost nests first; but for
    the nests with a `tt.dot` that `except_dots` and `shared_bytes` keep (dot_nests.py)."""

    except_dots: str = "none"
    shared_bytes: int = 0

    def __post_init__(self) -> None:
        if self.except_dots not in EXCEPT_DOTS:
            raise ValueError(f"fuse-nested-loops: except_dots={self.except_dots!r}")

    def run(self, module: Operation) -> None:
        for loop in [op for op in module.walk(post_order=True) if isinstance(op, scf.ForOp)]:
            if _FLATTEN not in loop.attributes or kept(loop, self.except_dots, self.shared_bytes):
                continue
            if Nest.of(loop) is not None:
                # Code invariant in the whole nest leaves it first: fewer values to carry.
                hoist_nest_invariants(loop)
                nest = Nest.of(loop)
                if nest is not None:
                    _fuse(nest)


class _Emit:
    """Inserts ops at the end of `block`, at `location`; calling it gives the op's result."""

    def __init__(self, block, location, anchor=None):
        self.block, self.location, self.anchor = block, location, anchor

    def op(self, op: Operation) -> Operation:
        """Insert a new op, at this emitter's location."""
        op.location = self.location
        return self.insert(op)

    def insert(self, op: Operation) -> Operation:
        """Insert `op` as it is (a copy of the user's keeps the user's location)."""
        if self.anchor is None:
            self.block.append(op)
        else:
            self.block.insert_before(op, self.anchor)
        return op

    def __call__(self, op: Operation) -> Value:
        return self.op(op).results[0]

    def const(self, value: int, t=_I64) -> Value:
        return self(arith.ConstantOp(IntegerAttr(value, t)))

    def to_i64(self, value: Value) -> Value:
        return value if value.type.width == 64 else self(arith.ExtSIOp(value, out=_I64))

    def trips(self, lower: Value, upper: Value, step: Value) -> Value:
        """`(upper - lower + step - 1) / step` in i64: for the positive step `scf.for` has, the
        trip count where the loop runs, and at most 0 where it does not."""
        step = self.to_i64(step)
        span = self(arith.SubIOp(self.to_i64(upper), self.to_i64(lower)))
        rounded = self(arith.AddIOp(span, self(arith.SubIOp(step, self.const(1)))))
        return self(arith.DivSIOp(rounded, step))

    def narrow(self, value: Value | None, t: IntegerType) -> Value | None:
        """A trip count (i64) as the tile counter's type `t`: at least 0, so that it fits
        (loop_nests.counter_type)."""
        if value is None or t.width == 64:
            return value
        return self(arith.TruncIOp(self.at_least(value, 0), out=t))

    def at_least(self, value: Value, floor: int) -> Value:
        return self(arith.MaxSIOp(value, self.const(floor)))

    def placeholder(self, value: Value, source) -> Value:
        """A value of `value`'s type, never read: zero, or pointer `source` (splat)."""
        t = value.type
        if not isinstance(source, int):
            return self(tt.SplatOp(source, result=t)) if isinstance(t, RankedTensorType) else source
        element = t.element_type if isinstance(t, RankedTensorType) else t
        zero = (
            FloatAttr(0.0, element) if isinstance(element, FloatType) else IntegerAttr(0, element)
        )
        if isinstance(t, RankedTensorType):
            zero = DenseElementsAttr(t, zero.value)
        return self(arith.ConstantOp(zero))

    def undefined(self, value: Value, source) -> Value:
        """The first value of a slot that the prologue fills before any read: `ub.poison` for
        numbers, so that what the analyses know of the prologue's values (a row of offsets'
        contiguity, say) is not joined with a zero's; pointers as `placeholder`."""
        if not isinstance(source, int):
            return self.placeholder(value, source)
        return self(ub.PoisonOp(value.type))

    def branch(self, condition: Value, types: list, then_values, else_values) -> list[Value]:
        """`scf.if condition` yielding `then_values(emit)` or `else_values`; its results."""
        branch = self.op(scf.IfOp(condition, types))
        then = _Emit(branch.then_block, self.location)
        then.op(scf.YieldOp(then_values(then)))
        if types:
            _Emit(branch.else_block, self.location).op(scf.YieldOp(else_values))
        return list(branch.outs)


def _clone_all(ops, mapping: dict, emit: _Emit) -> None:
    """Copy `ops` in order; `mapping` learns the copies' results."""
    for op in ops:
        emit.insert(op.clone(mapping))


def _mapped(mapping: dict, values) -> list[Value]:
    return [mapping.get(v, v) for v in values]


def _counts(nest: Nest, emit: _Emit) -> tuple[Value, Value | None, Value | None]:
    """The fused trip count, and the inner trip count and `max(1, trips)` where they are the
    same for every outer iteration (None where the prologue computes them)."""
    outer, inner = nest.outer, nest.inner
    if not nest.dependent:
        outer_trips = emit.trips(outer.lowerBound, outer.upperBound, outer.step)
        mapping: dict = {}
        _clone_all(nest.bound_ops, mapping, emit)  # pure ops of outside values: hoisted
        trips = emit.trips(*_mapped(mapping, (inner.lowerBound, inner.upperBound, inner.step)))
        length = emit.at_least(trips, 1)
        return emit(arith.MulIOp(emit.at_least(outer_trips, 0), length)), trips, length
    count = emit.op(scf.ForOp(outer.lowerBound, outer.upperBound, outer.step, [emit.const(0)]))
    body = _Emit(count.body, outer.location)
    mapping = {outer.induction_var: count.induction_var}
    _clone_all(nest.bound_ops, mapping, body)
    trips = body.trips(*_mapped(mapping, (inner.lowerBound, inner.upperBound, inner.step)))
    total = body(arith.AddIOp(count.region_iter_args[0], body.at_least(trips, 1)))
    body.op(scf.YieldOp([total]))
    return count.outs[0], None, None


def _fuse(nest: Nest) -> None:
    """Replace the nest with one loop (the module docstring's form). Where the inner bounds are
    the same for every outer iteration, whether the inner loop runs at all is decided once, as
    Triton does: an empty one takes the nest without it, so the fused body needs no condition
    (and its loads can be pipelined)."""
    outer = nest.outer
    emit = _Emit(outer.parent, outer.location, anchor=outer)
    total, inner_trips, inner_len = _counts(nest, emit)
    if nest.dependent or nest.must_run:
        fused = _fused_loop(nest, emit, total, inner_trips, inner_len, nest.must_run)
        return _replace(nest, fused, fused.outs[2 : 2 + len(outer.outs)])
    empty = emit(arith.CmpIOp("sle", inner_trips, emit.const(0)))
    split = emit.op(scf.IfOp(empty, [v.type for v in outer.outs], with_else=True))
    _Emit(split.then_block, outer.location).op(scf.YieldOp(_without_inner(nest, split)))
    emit = _Emit(split.else_block, outer.location)
    fused = _fused_loop(nest, emit, total, inner_trips, inner_len, True)
    emit.op(scf.YieldOp(fused.outs[2 : 2 + len(outer.outs)]))
    _replace(nest, fused, split.outs)
    # An outer loop left with nothing to do once its inner loop is gone folds away here.
    Canonicalize().run(split)


def _without_inner(nest: Nest, split: scf.IfOp) -> list[Value]:
    """A copy of the outer loop in `split`'s then block, its inner loop replaced by the inner
    loop's initial values; the copy's results."""
    index = list(nest.outer.body).index(nest.inner)
    copy = nest.outer.clone({})
    del copy.attributes[_FLATTEN]
    split.then_block.append(copy)
    inner = list(copy.body)[index]
    for result, initial in zip(inner.outs, inner.initArgs):
        result.replace_all_uses_with(initial)
    inner.erase()
    return list(copy.outs)


def _fused_loop(nest: Nest, emit: _Emit, total, inner_trips, inner_len, unconditional: bool):
    """The fused loop, at `emit`; `unconditional`: the inner body runs on every iteration."""
    outer, inner = nest.outer, nest.inner
    n_outer, n_inner, dependent = len(outer.initArgs), len(inner.initArgs), nest.dependent
    c = nest.counter
    inner_trips, inner_len = emit.narrow(inner_trips, c), emit.narrow(inner_len, c)
    fused = emit.op(scf.ForOp(emit.const(0), total, emit.const(1), _inits(nest, emit)))
    args = list(fused.region_iter_args)
    count, previous_i, carried = args[0], args[1], args[2 : 2 + n_outer]
    rest = args[2 + n_outer :]
    if dependent:
        inner_trips, inner_len, rest = rest[0], rest[1], rest[2:]
    j_arg, b_args, p_args = rest[0], rest[1 : 1 + n_inner], rest[1 + n_inner :]
    body = _Emit(fused.body, outer.location)
    iter_args = dict(zip(outer.region_iter_args, carried))

    def prologue(then: _Emit) -> list[Value]:
        i_next = then(arith.AddIOp(previous_i, outer.step))
        mapping = {**iter_args, outer.induction_var: i_next}
        _clone_all(nest.prologue, mapping, then)
        values = [i_next, mapping.get(inner.lowerBound, inner.lowerBound)]
        values += _mapped(mapping, inner.initArgs) + [mapping[v] for v in nest.outputs]
        if dependent:
            trips = then.trips(*_mapped(mapping, (inner.lowerBound, inner.upperBound, inner.step)))
            values += [then.narrow(trips, c), then.narrow(then.at_least(trips, 1), c)]
        return values

    types = [previous_i.type, j_arg.type, *(a.type for a in (*b_args, *p_args))]
    types += [c, c] if dependent else []
    otherwise = [previous_i, j_arg, *b_args, *p_args]
    otherwise += [inner_trips, inner_len] if dependent else []
    head = body.branch(
        body(arith.CmpIOp("eq", count, body.const(0, c))), types, prologue, otherwise
    )
    i_now, j_now, b_now = head[0], head[1], head[2 : 2 + n_inner]
    p_now = head[2 + n_inner : 2 + n_inner + len(nest.outputs)]
    if dependent:
        inner_trips, inner_len = head[-2], head[-1]
    mapping = {**iter_args, outer.induction_var: i_now, **dict(zip(nest.outputs, p_now))}
    _clone_all(nest.recomputed, mapping, body)
    j_next, b_next = _inner_body(
        nest, body, mapping, (unconditional, count, inner_trips), j_now, b_now
    )

    def epilogue(then: _Emit) -> list[Value]:
        tail_map = {**mapping, **dict(zip(inner.outs, b_next))}
        _clone_all(nest.epilogue, tail_map, then)
        return _mapped(tail_map, outer.body.terminator.operands)

    last = body(arith.CmpIOp("eq", count, body(arith.SubIOp(inner_len, body.const(1, c)))))
    a_next = body.branch(last, [v.type for v in carried], epilogue, carried)
    bumped = body(arith.AddIOp(count, body.const(1, c)))
    out = [body(arith.SelectOp(last, body.const(0, c), bumped)), i_now, *a_next]
    out += [inner_trips, inner_len] if dependent else []
    body.op(scf.YieldOp([*out, j_next, *b_next, *p_now]))
    return fused


def _inits(nest: Nest, emit: _Emit) -> list[Value]:
    """The fused loop's first values: its counter, the outer variable one step before the outer
    lower bound, the outer loop's carried values, (the inner trip counts where the prologue
    computes them,) placeholders of the inner slots, and the prologue's values, undefined."""
    outer, inner, c = nest.outer, nest.inner, nest.counter
    inits = [emit.const(0, c), emit(arith.SubIOp(outer.lowerBound, outer.step)), *outer.initArgs]
    inits += [emit.const(0, c), emit.const(1, c)] if nest.dependent else []
    for v in (inner.induction_var, *inner.region_iter_args):
        inits.append(emit.placeholder(v, placeholder_source(v, outer)))
    return inits + [emit.undefined(v, placeholder_source(v, outer)) for v in nest.outputs]


def _inner_body(nest, body: _Emit, mapping, runs_when, j_now, b_now):
    """One inner iteration at `j_now` with carried `b_now`, where the counter is below the
    inner trip count (`runs_when`: unconditional, the counter, the trip count): the next `j`
    and carried values."""
    unconditional, count, inner_trips = runs_when
    inner = nest.inner
    ops = list(inner.body)
    step = mapping.get(inner.step, inner.step)
    inner_map = {**mapping, inner.induction_var: j_now, **dict(zip(inner.region_iter_args, b_now))}

    def iteration(emit: _Emit) -> list[Value]:
        _clone_all(ops[:-1], inner_map, emit)
        return [emit(arith.AddIOp(j_now, step)), *_mapped(inner_map, ops[-1].operands)]

    if unconditional:
        values = iteration(body)
    else:
        runs = body(arith.CmpIOp("slt", count, inner_trips))
        values = body.branch(runs, [v.type for v in (j_now, *b_now)], iteration, [j_now, *b_now])
    return values[0], values[1:]


def _replace(nest: Nest, fused: scf.ForOp, results) -> None:
    """The outer loop's results are `results`; the nest goes. The fused loop keeps the larger
    of the two loops' `tt.num_stages`."""
    outer, inner = nest.outer, nest.inner
    stages = [loop.attributes[_STAGES] for loop in (outer, inner) if _STAGES in loop.attributes]
    if stages:
        fused.attributes[_STAGES] = max(stages, key=lambda attr: attr.value)
    for old, new in zip(outer.outs, results):
        old.replace_all_uses_with(new)
    outer.erase()
