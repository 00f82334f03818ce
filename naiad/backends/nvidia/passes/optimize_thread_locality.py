"""`tritongpu-optimize-thread-locality`: a reduction whose result a loop accumulates is done by
each thread on its own elements inside the loop, and across threads once, after it.

`acc = acc + tl.sum(x, axis=1)` in a loop reduces `x` across lanes (shuffles) and warps
(shared memory and a barrier) in every iteration. The sum is associative, so each thread can
keep its partial sums in the loop instead, one per position it holds along the axis, and the
threads combine them after the last iteration:

    %r = scf.for ... iter_args(%acc = %init) -> (tensor<32xf32, #slice<{dim = 1, ...}>>)
      %x = tt.load ...          : tensor<32x256xf32, #blocked>   (along a row: 4 elements a
      %s = "tt.reduce"(%x) <{axis = 1}> (addf)                      thread, 8 lanes, 8 times)
      %a = arith.addf %acc, %s
      scf.yield %a
    ==>
    %r = scf.for ... iter_args(%acc = dense<-0.0> : tensor<32x8xf32, #slice<{dim = 2, ...}>>)
      %x = tt.load ...
      %v = tt.reshape %x -> 32x8x8x4; tt.trans {0, 2, 1, 3}; tt.reshape -> 32x8x32
      %s = "tt.reduce"(%v) <{axis = 2}> (addf)     (within each thread: registers only)
      %a = arith.addf %acc, %s
      scf.yield %a
    %t = "tt.reduce"(%r) <{axis = 1}> (addf)       (across threads, once)
    %c = ttg.convert_layout %t -> the old accumulator's layout
    %f = arith.addf %init, %c

The view is exact: the axis's coordinate bits are, from the lowest, some held in registers
(S elements), some by threads (T positions) and the rest in registers again (R repeats), so
`[.., R, T, S]` in row-major order, with the T dimension moved first, is each thread's elements
of one position along a last dimension of R*S. Every op of the view keeps each element in the
thread and register that holds it (layout_inference's rules), so it moves no data.

Rewritten when the reduction has one operand and a one-op combine region with a neutral
element, reduces the last axis of a tensor of rank 2 or more whose view puts the reduced
elements in registers alone (R*S > 1), and feeds only the op, the same as the region's, that
combines it with a loop-carried value read nowhere else and yielded at the same place, in the
loop's body itself. The new accumulator starts at the neutral element and the old initial value
is combined in after the loop, so any initial value is kept. The floating-point sums and
products are taken in another order, as a different layout's reduction would take them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ....dialects import arith, scf, tt, ttg
from ....dialects.base import i32_attr
from ....dialects.ttg.attributes import SliceEncodingAttr
from ....ir import DenseElementsAttr, FloatType, Operation, RankedTensorType, register_pass
from ....ir.passes import Pass
from ..layouts import to_linear_layout
from ..layouts.conversions import dim_names
from .layout_inference import loop_parts, permute_encoding, reshape_encoding
from .loop_carried import carried

_THREADS = ("lane", "warp", "block")


def neutral_element(name: str, element):
    """The value `x` with `op(x, y) == y` for every `y` of the combine op `name`, None when the
    op has none here. `maxnumf`'s is NaN: `maxnum(NaN, y)` is `y`, NaN included."""
    if isinstance(element, FloatType):
        return {
            "arith.addf": -0.0,
            "arith.mulf": 1.0,
            "arith.maximumf": -math.inf,
            "arith.minimumf": math.inf,
            "arith.maxnumf": math.nan,
            "arith.minnumf": math.nan,
        }.get(name)
    width = getattr(element, "width", None)
    if width is None:
        return None
    return {
        "arith.addi": 0,
        "arith.muli": 1,
        "arith.andi": -1,
        "arith.ori": 0,
        "arith.xori": 0,
        "arith.maxsi": -(1 << (width - 1)),
        "arith.minsi": (1 << (width - 1)) - 1,
        "arith.maxui": 0,
        "arith.minui": -1,
    }.get(name)


@dataclass
class _Match:
    """A reduction the pass rewrites, and what it reads and feeds."""

    reduce: Operation
    update: Operation  # combines the loop-carried value with the reduction's result
    loop: Operation
    index: int  # of the carried value among the loop's
    split: tuple[int, int, int]  # (R, T, S) of the view (module doc)


def axis_split(encoding, shape) -> tuple[int, int, int] | None:
    """(R, T, S): the last axis's extent as S elements in registers (its lowest coordinate
    bits), T positions over threads, then R repeats in registers. None when its bits are not
    in that order or a basis moves along it together with something else."""
    rank = len(shape)
    try:
        layout = to_linear_layout(encoding, shape).transpose_outs(dim_names(rank))
    except (NotImplementedError, ValueError):
        return None
    owners = [None] * (shape[-1].bit_length() - 1)
    for name in ("register", *_THREADS):
        for basis in layout.bases(name):
            along = basis[-1]
            if not along:
                continue
            if along & (along - 1) or any(basis[:-1]):
                return None
            bit = along.bit_length() - 1
            owner = "register" if name == "register" else "thread"
            if owners[bit] not in (None, owner):
                return None
            owners[bit] = owner
    if None in owners:
        return None
    text = "".join("r" if o == "register" else "t" for o in owners)
    low = len(text) - len(text.lstrip("r"))
    rest = text[low:]
    threads = len(rest) - len(rest.lstrip("t"))
    if "t" in rest[threads:]:
        return None
    return 1 << (len(rest) - threads), 1 << threads, 1 << low


def view_steps(t: RankedTensorType, split) -> list[tuple] | None:
    """The ops of the view (module doc) of a tensor of type `t`, as (shape, encoding, order):
    a reshape where order is None, else a trans. None when the last dimension of the view is
    not held in registers alone."""
    repeats, threads, size = split
    lead = list(t.shape[:-1])
    encoding, shape, steps = t.encoding, list(t.shape), []
    if repeats > 1:
        split_shape = [*lead, repeats, threads, size]
        encoding = reshape_encoding(encoding, shape, split_shape)
        k = len(lead)
        order = [*range(k), k + 1, k, k + 2]
        steps.append((split_shape, encoding, None))
        shape = [split_shape[i] for i in order]
        encoding = None if encoding is None else permute_encoding(encoding, split_shape, order)
        steps.append((shape, encoding, order))
    final = [*lead, threads, repeats * size]
    encoding = None if encoding is None else reshape_encoding(encoding, shape, final)
    if encoding is None:
        return None
    layout = to_linear_layout(encoding, final).transpose_outs(dim_names(len(final)))
    if any(b[-1] for name in _THREADS for b in layout.bases(name)):
        return None
    steps.append((final, encoding, None))
    return steps


def _match(reduce: Operation) -> _Match | None:
    """The rewrite of `reduce` (module doc), or None when it does not apply."""
    if len(reduce.operands) != 1 or not reduce.results[0].has_one_use:
        return None
    t = reduce.operands[0].type
    op = reduce.single_op()
    if t.rank < 2 or int(reduce.axis.value) != t.rank - 1 or op is None:
        return None
    if neutral_element(op.name, t.element_type) is None:
        return None
    update = reduce.results[0].users[0]
    if update.name != op.name or update.parent is not reduce.parent:
        return None
    if (
        not update.results[0].has_one_use
        or update.results[0].users[0] is not update.parent.terminator
    ):
        return None
    loop, index = _carried_pair(update, reduce)
    if loop is None or loop_parts(loop)[3].operands[index] is not update.results[0]:
        return None
    split = axis_split(t.encoding, t.shape)
    if split is None or split[0] * split[2] == 1 or view_steps(t, split) is None:
        return None
    return _Match(reduce, update, loop, index, split)


def _carried_pair(update: Operation, reduce: Operation):
    """(loop, index) of the loop-carried value `update` combines with `reduce`'s result, when
    nothing else reads it; (None, None) otherwise."""
    others = [v for v in update.operands if v is not reduce.results[0]]
    if len(others) != 1 or not others[0].has_one_use:
        return None, None
    found = carried(others[0])
    if found is None or not isinstance(found[0], scf.ForOp) or found[0].body is not update.parent:
        return None, None
    return found


def _view(m: _Match):
    """The view ops of the reduction's operand, inserted before it; the last one's result."""
    value = m.reduce.operands[0]
    for shape, encoding, order in view_steps(value.type, m.split):
        t = value.type.clone(shape=shape, encoding=encoding)
        location = m.reduce.location
        if order is None:
            op = tt.ReshapeOp(value, result=t, location=location)
        else:
            op = tt.TransOp(value, order, result=t, location=location)
        m.reduce.parent.insert_before(op, m.reduce)
        value = op.result
    return value


def _reduced(reduce: Operation, value, axis: int) -> Operation:
    """A copy of `reduce` (its combine region) reducing `value` along `axis`."""
    t = value.type
    encoding = SliceEncodingAttr(axis, t.encoding)
    shape = t.shape[:axis] + t.shape[axis + 1 :]
    result = t.clone(shape=shape, encoding=encoding) if shape else t.element_type
    copy = reduce.clone_as([value], [result])
    copy.attributes["axis"] = i32_attr(axis)
    return copy


def _rewrite(m: _Match) -> None:
    """Reduce within threads in the loop, carry the partial results, and reduce them across
    threads after it (module doc)."""
    reduce, update, loop = m.reduce, m.update, m.loop
    inits, arguments, results, _ = loop_parts(loop)
    old_init, old_type = inits[m.index], results[m.index].type
    view = _view(m)
    partial = _reduced(reduce, view, view.type.rank - 1)
    reduce.parent.insert_before(partial, reduce)
    acc_type = partial.results[0].type
    value = neutral_element(update.name, acc_type.element_type)
    start = arith.ConstantOp(DenseElementsAttr(acc_type, value), location=loop.location)
    loop.parent.insert_before(start, loop)
    loop.set_operand(3 + m.index, start.result)
    arguments[m.index].type = acc_type
    update.set_operand(update.operands.index(reduce.results[0]), partial.results[0])
    update.results[0].type = acc_type
    reduce.erase()

    result = results[m.index]
    result.type = acc_type
    across = _reduced(partial, result, acc_type.rank - 1)
    loop.parent.insert_after(across, loop)
    total, anchor = across.results[0], across
    if total.type is not old_type:
        anchor = ttg.ConvertLayoutOp(total, result=old_type, location=loop.location)
        loop.parent.insert_after(anchor, across)
        total = anchor.results[0]
    operands = [old_init if v is arguments[m.index] else total for v in update.operands]
    final = update.clone_as(operands, [old_type])
    loop.parent.insert_after(final, anchor)
    result.replace_uses_where(final.results[0], lambda op, _: op is not across)


@register_pass("tritongpu-optimize-thread-locality")
@dataclass(frozen=True)
class OptimizeThreadLocality(Pass):
    """Loop-accumulated reductions reduced within threads in the loop (see the module doc)."""

    def run(self, module: Operation) -> None:
        matches = [_match(op) for op in module.walk() if isinstance(op, tt.ReduceOp)]
        for m in matches:
            if m is not None:
                _rewrite(m)
