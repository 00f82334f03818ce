"""`fuse-nested-loops`: a loop marked `tt.flatten` (`tl.range(..., flatten=True)`) and the one
loop nested in it become one loop over every inner iteration of every outer iteration.

Legal when the outer loop's body holds exactly one `scf.for` (which holds none), the inner
bounds are computed from values outside the nest and the outer induction variable through pure
scalar ops (not from carried values), and every value carried across fused iterations has a
placeholder of its type before the loop. Anything else is left alone. As Triton's fusion: the
fused loop runs `max(1, inner trips)` iterations per outer iteration, `T` counting them; the code
before the inner loop (the prologue) runs where `T == 0`, the inner body where `T < inner trips`
and the code after it (the epilogue) on the last. Inner bounds that read the outer induction
variable are counted by a first loop over the outer range. An inner loop whose bounds are
assumed ordered (`llvm.intr.assume(ub > lb)`) runs its body unconditionally.

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

from ..dialects import arith, llvm, scf, tt
from ..ir import (
    DenseElementsAttr,
    FloatAttr,
    FloatType,
    IntegerAttr,
    IntegerType,
    Operation,
    Pure,
    RankedTensorType,
    Value,
    register_pass,
)
from ..ir.passes import Pass
from .licm import LICM

_FLATTEN = "tt.flatten"
_STAGES = "tt.num_stages"
_I64 = IntegerType(64)


@register_pass("fuse-nested-loops")
@dataclass(frozen=True)
class FuseNestedLoops(Pass):
    """Fuse each `tt.flatten` loop with the loop nested in it, innermost nests first."""

    def run(self, module: Operation) -> None:
        for loop in [op for op in module.walk(post_order=True) if isinstance(op, scf.ForOp)]:
            if _FLATTEN in loop.attributes and _Nest.of(loop) is not None:
                # As Triton, invariant code leaves the nest first: fewer values to carry.
                LICM().run(loop)
                nest = _Nest.of(loop)
                if nest is not None:
                    _fuse(nest)


@dataclass
class _Nest:
    """A fusable nest: the loops, the ops around the inner one, and how its bounds are made."""

    outer: scf.ForOp
    inner: scf.ForOp
    prologue: list[Operation]
    epilogue: list[Operation]
    bound_ops: list[Operation]  # the prologue ops the inner bounds are computed by, in order
    dependent: bool  # the inner bounds read the outer induction variable
    must_run: bool  # the inner loop is assumed to run at least once
    outputs: list[Value]  # prologue results read after the prologue

    @staticmethod
    def of(outer: scf.ForOp) -> _Nest | None:
        ops = list(outer.body)[:-1]
        loops = [op for op in ops if isinstance(op, scf.ForOp)]
        if len(loops) != 1:
            return None
        inner = loops[0]
        if any(isinstance(op, scf.ForOp) for op in inner.body):
            return None
        for loop in (outer, inner):
            if "unsignedCmp" in loop.attributes or not isinstance(loop.step.type, IntegerType):
                return None
        at = ops.index(inner)
        prologue, epilogue = ops[:at], ops[at + 1 :]
        bounds = _bound_slice(outer, inner, prologue)
        if bounds is None:
            return None
        members = set(prologue)
        outputs = [
            r
            for op in prologue
            for r in op.results
            if any(_top(user, outer) not in members for user in r.users)
        ]
        nest = _Nest(outer, inner, prologue, epilogue, *bounds, _assumed_to_run(inner), outputs)
        carried = [inner.induction_var, *inner.region_iter_args, *outputs]
        if any(_placeholder_source(v, outer) is None for v in carried):
            return None
        return nest


def _top(op: Operation, outer: scf.ForOp) -> Operation:
    """The op of `outer`'s body that is or holds `op`."""
    while op.parent is not outer.body:
        op = op.parent_op()
    return op


def _inside(value: Value, loop: scf.ForOp) -> bool:
    owner = value.defining_op
    if owner is None:
        block_owner = value.parent_block.parent_op()
        return block_owner is not None and loop.is_ancestor(block_owner)
    return loop.is_ancestor(owner)


def _is_scalar(t) -> bool:
    return isinstance(t, IntegerType | FloatType) or (
        isinstance(t, tt.PointerType) and not isinstance(t.pointee_type, RankedTensorType)
    )


def _bound_slice(outer, inner, prologue) -> tuple[list[Operation], bool] | None:
    """The prologue ops the inner bounds are made by, and whether they read the outer
    induction variable; None when they read a carried value or an op with effects."""
    members, needed, dependent = set(prologue), set(), False
    stack = [inner.lowerBound, inner.upperBound, inner.step]
    while stack:
        value = stack.pop()
        if value is outer.induction_var:
            dependent = True
            continue
        if not _inside(value, outer):
            continue
        owner = value.defining_op
        if owner is None or owner not in members:
            return None
        if owner in needed:
            continue
        types = [v.type for v in (*owner.operands, *owner.results)]
        if Pure not in owner.traits or owner.regions or not all(map(_is_scalar, types)):
            return None
        needed.add(owner)
        stack.extend(owner.operands)
    return [op for op in prologue if op in needed], dependent


def _assumed_to_run(inner: scf.ForOp) -> bool:
    """`llvm.intr.assume(ub > lb)` (or `lb < ub`) on the inner loop's own bounds."""
    for user in inner.upperBound.users:
        if not isinstance(user, arith.CmpIOp):
            continue
        if not any(isinstance(u, llvm.AssumeOp) for u in user.result.users):
            continue
        operands = (user.lhs, user.rhs)
        if (user.predicate_name, operands) in (
            ("sgt", (inner.upperBound, inner.lowerBound)),
            ("slt", (inner.lowerBound, inner.upperBound)),
        ):
            return True
    return False


def _placeholder_source(value: Value, outer: scf.ForOp):
    """What the initial value of a slot carrying `value` is made from: zero for numbers, the
    scalar pointer outside the nest that a pointer is derived from (so the slot points into the
    same argument); None when there is none."""
    t = value.type
    element = t.element_type if isinstance(t, RankedTensorType) else t
    if isinstance(element, IntegerType | FloatType):
        return 0
    if not isinstance(element, tt.PointerType) or isinstance(
        element.pointee_type, RankedTensorType
    ):
        return None
    seen = set()
    while _inside(value, outer) and value not in seen:
        seen.add(value)
        owner = value.defining_op
        if isinstance(owner, tt.AddPtrOp):
            value = owner.ptr
        elif isinstance(owner, tt.SplatOp | tt.BroadcastOp | tt.ExpandDimsOp | tt.ReshapeOp):
            value = owner.src
        elif owner is None and isinstance(value.parent_block.parent_op(), scf.ForOp):
            loop = value.parent_block.parent_op()
            if value not in loop.region_iter_args:
                return None
            value = loop.initArgs[loop.region_iter_args.index(value)]
        else:
            return None
    if _inside(value, outer) or value.type is not element:
        return None
    return value


class _Emit:
    """Inserts ops at the end of `block`, at `location`; calling it gives the op's result."""

    def __init__(self, block, location, anchor=None):
        self.block, self.location, self.anchor = block, location, anchor

    def op(self, op: Operation) -> Operation:
        op.location = self.location
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
        emit.op(op.clone(mapping))


def _mapped(mapping: dict, values) -> list[Value]:
    return [mapping.get(v, v) for v in values]


def _counts(nest: _Nest, emit: _Emit) -> tuple[Value, Value | None, Value | None]:
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


def _fuse(nest: _Nest) -> None:
    """Replace the nest with one loop (the module docstring's form)."""
    outer, inner = nest.outer, nest.inner
    emit = _Emit(outer.parent, outer.location, anchor=outer)
    total, inner_trips, inner_len = _counts(nest, emit)
    n_outer, n_inner, dependent = len(outer.initArgs), len(inner.initArgs), nest.dependent
    slots = [inner.induction_var, *inner.region_iter_args, *nest.outputs]
    inits = [emit.const(0), emit(arith.SubIOp(outer.lowerBound, outer.step)), *outer.initArgs]
    inits += [emit.const(0), emit.const(1)] if dependent else []
    inits += [emit.placeholder(v, _placeholder_source(v, outer)) for v in slots]
    fused = emit.op(scf.ForOp(emit.const(0), total, emit.const(1), inits))
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
            values += [trips, then.at_least(trips, 1)]
        return values

    types = [previous_i.type, j_arg.type, *(a.type for a in (*b_args, *p_args))]
    types += [_I64, _I64] if dependent else []
    otherwise = [previous_i, j_arg, *b_args, *p_args]
    otherwise += [inner_trips, inner_len] if dependent else []
    head = body.branch(body(arith.CmpIOp("eq", count, body.const(0))), types, prologue, otherwise)
    i_now, j_now, b_now = head[0], head[1], head[2 : 2 + n_inner]
    p_now = head[2 + n_inner : 2 + n_inner + len(nest.outputs)]
    if dependent:
        inner_trips, inner_len = head[-2], head[-1]
    mapping = {**iter_args, outer.induction_var: i_now, **dict(zip(nest.outputs, p_now))}
    j_next, b_next = _inner_body(nest, body, mapping, count, inner_trips, j_now, b_now)

    def epilogue(then: _Emit) -> list[Value]:
        tail_map = {**mapping, **dict(zip(inner.outs, b_next))}
        _clone_all(nest.epilogue, tail_map, then)
        return _mapped(tail_map, outer.body.terminator.operands)

    last = body(arith.CmpIOp("eq", count, body(arith.SubIOp(inner_len, body.const(1)))))
    a_next = body.branch(last, [v.type for v in carried], epilogue, carried)
    bumped = body(arith.AddIOp(count, body.const(1)))
    out = [body(arith.SelectOp(last, body.const(0), bumped)), i_now, *a_next]
    out += [inner_trips, inner_len] if dependent else []
    body.op(scf.YieldOp([*out, j_next, *b_next, *p_now]))
    _replace(nest, fused)


def _inner_body(nest, body: _Emit, mapping, count, inner_trips, j_now, b_now):
    """One inner iteration at `j_now` with carried `b_now`, where `count` < the inner trip
    count (unconditionally when the loop is assumed to run): the next `j` and carried values."""
    inner = nest.inner
    ops = list(inner.body)
    step = mapping.get(inner.step, inner.step)
    inner_map = {**mapping, inner.induction_var: j_now, **dict(zip(inner.region_iter_args, b_now))}

    def iteration(emit: _Emit) -> list[Value]:
        _clone_all(ops[:-1], inner_map, emit)
        return [emit(arith.AddIOp(j_now, step)), *_mapped(inner_map, ops[-1].operands)]

    if nest.must_run:
        values = iteration(body)
    else:
        runs = body(arith.CmpIOp("slt", count, inner_trips))
        values = body.branch(runs, [v.type for v in (j_now, *b_now)], iteration, [j_now, *b_now])
    return values[0], values[1:]


def _replace(nest: _Nest, fused: scf.ForOp) -> None:
    """The outer loop's results are the fused loop's; the nest goes. The fused loop keeps the
    larger of the two loops' `tt.num_stages`."""
    outer, inner = nest.outer, nest.inner
    stages = [loop.attributes[_STAGES] for loop in (outer, inner) if _STAGES in loop.attributes]
    if stages:
        fused.attributes[_STAGES] = max(stages, key=lambda attr: attr.value)
    for old, new in zip(outer.outs, fused.outs[2:]):
        old.replace_all_uses_with(new)
    outer.erase()
