"""`scf.for` and `scf.while` with loop-carried values.

The carried names are those the body assigns (read from the AST, as the interpreter's rewrite
does) that exist before the loop, in the order they were defined: Triton's order. Each carried
value is flattened to its tensors (a tuple or a block pointer carries several), the body is
generated once over block arguments, and what the body leaves in each name is yielded. A name
only assigned in code that was not generated (a dead constexpr branch) still holds its block
argument afterwards: it is dropped from the loop again, so the IR carries only what changes.
"""

from __future__ import annotations

import ast

from .. import ir
from ..dialects import scf
from ..language import core
from . import values as vals

_RANGE_ATTRIBUTES = (
    # tl.range option, attribute, kind
    ("num_stages", "tt.num_stages", int),
    ("loop_unroll_factor", "tt.loop_unroll_factor", int),
    ("disallow_acc_multi_buffer", "tt.disallow_acc_multi_buffer", bool),
    ("flatten", "tt.flatten", bool),
    ("warp_specialize", "tt.warp_specialize", bool),
    ("disable_licm", "tt.disable_licm", bool),
)


def loop_attributes(options) -> dict:
    """The attributes Triton puts on a loop for `tl.range` / `tl.condition` options."""
    attributes = {}
    for option, name, kind in _RANGE_ATTRIBUTES:
        value = core._unwrap_if_constexpr(getattr(options, option, None))
        if kind is int and value is not None:
            attributes[name] = ir.IntegerAttr(int(value), ir.i32)
        elif kind is bool and value:
            attributes[name] = ir.UnitAttr()
    return attributes


def _carried(gen, body, node, exclude=frozenset()) -> list:
    assigned = gen.source.stored_names(body, node) - exclude
    return [(name, vals.without_maps(v)) for name, v in gen.scope.items() if name in assigned]


def _target_names(target) -> frozenset:
    return frozenset(n.id for n in ast.walk(target) if isinstance(n, ast.Name))


def _bind(gen, carried, arguments) -> list:
    """Bind each carried name to its block arguments (named after it: `state.0`); the values
    bound, to spot the names the body leaves unchanged."""
    args = iter(arguments)
    bound = []
    for name, init in carried:
        count = len(vals.leaves(init))
        block_args = [next(args) for _ in range(count)]
        for arg, path in zip(block_args, vals.leaf_paths(init, name)):
            arg.location = ir.NameLoc(path, gen.builder.location)  # `loc("acc"(<the loop>))`
        value = vals.rebuild(init, iter(block_args))
        gen.scope[name] = value
        bound.append(value)
    return bound


def _yielded(gen, carried, bound) -> tuple[list, list]:
    """What the body leaves in each carried name (type-checked), and whether it changed."""
    values, changed = [], []
    for (name, init), start in zip(carried, bound):
        now = gen.scope.get(name, start)
        if now is not start:
            now = vals.without_maps(now)
        if now is not start and not vals.same_structure(init, now):
            error = TypeError(
                f"Loop-carried variable {name} has initial type {vals.describe(init)} but is "
                f"re-assigned to {vals.describe(now)} in loop! Please make sure that the type "
                "stays consistent."
            )
            site = gen.assign_sites.get(name)
            raise gen._located(error, site) if site and gen.source.is_user else error
        values.append(now)
        changed.append(now is not start)
    return values, changed


def _rebind(gen, carried, keep, results) -> None:
    handles = iter(results)
    for (name, init), kept in zip(carried, keep):
        if kept:
            gen.scope[name] = vals.rebuild(init, handles)


def generate_for(gen, node, rng) -> None:
    """`for target in tl.range(...)` as `scf.for`."""
    lower, upper, step, iv_type, static_step = gen.loop_index(rng)
    count_down = static_step is not None and static_step < 0
    if count_down:
        # Triton: iterate [end, start) upwards by -step; the variable counts down from start.
        positive = gen.semantic.cast(gen.semantic.to_tensor(-static_step), iv_type)
        lower, upper, step = upper, lower, positive
    carried = _carried(gen, node.body, node, _target_names(node.target))
    inits = [x for _, value in carried for x in vals.leaves(value)]
    bounds = (lower.handle, upper.handle, step.handle)
    op = gen.builder.create(scf.ForOp, *bounds, [x.handle for x in inits])
    op.attributes.update(loop_attributes(rng))
    if iv_type.is_int_unsigned():
        op.attributes["unsignedCmp"] = ir.UnitAttr()

    def bind_target():
        iv = core.tensor(op.induction_var, iv_type)
        if count_down:
            irb = gen.unit.irb
            down = irb.elementwise("arith.subi", [upper.handle, iv.handle], iv_type)
            iv = core.tensor(irb.elementwise("arith.addi", [down, lower.handle], iv_type), iv_type)
        gen.assign(node.target, iv, node)

    keep = _generate_body(gen, node, op.body, carried, op.region_iter_args, bind_target)
    if not all(keep):
        op = _drop_for_args(op, _leaf_mask(carried, keep), inits)
    _rebind(gen, carried, keep, op.results)


def generate_while(gen, node) -> None:
    """`while cond:` as `scf.while` (the condition is evaluated in the `before` region)."""
    carried = _carried(gen, node.body, node)
    inits = [x for _, value in carried for x in vals.leaves(value)]
    builder = gen.builder
    op = builder.create(scf.WhileOp, [x.handle for x in inits])
    before = op.before.block
    saved = gen.scope
    gen.scope = dict(saved)
    try:
        with builder.at_end(before):
            _bind(gen, carried, before.arguments)
            cond, hints = gen.while_condition(node)
            builder.create(scf.ConditionOp, cond.handle, list(before.arguments))
    finally:
        gen.scope = saved
    op.attributes.update(loop_attributes(_Hints(hints)))
    keep = _generate_body(gen, node, op.after.block, carried, op.after.block.arguments)
    if not all(keep):
        op = _drop_while_args(op, _leaf_mask(carried, keep), inits)
    _rebind(gen, carried, keep, op.results)


def _generate_body(gen, node, block, carried, arguments, bind_target=None) -> list[bool]:
    """Generate a loop body into `block` (ending in the yield of the carried values) in a copy
    of the scope; per carried name, whether the loop must keep carrying it."""
    saved = gen.scope
    gen.scope = dict(saved)
    try:
        with gen.builder.at_end(block):
            if bind_target is not None:
                bind_target()
            bound = _bind(gen, carried, arguments)
            gen._loop_body(node.body)
            values, changed = _yielded(gen, carried, bound)
            gen.builder.create(scf.YieldOp, [x.handle for v in values for x in vals.leaves(v)])
    finally:
        body_scope, gen.scope = gen.scope, saved
    gen.scoped_out(body_scope, f"inside the loop at line {node.lineno}")
    return [c or not vals.leaves(init) for c, (_, init) in zip(changed, carried)]


class _Hints:
    def __init__(self, hints: dict):
        self.__dict__.update(hints)


def _leaf_mask(carried, keep) -> list[bool]:
    return [k for (_, init), k in zip(carried, keep) for _ in vals.leaves(init)]


def _drop_arguments(block, mask, inits) -> None:
    """Replace the block arguments (after `offset`) not in `mask` by their initial values."""
    offset = len(block.arguments) - len(mask)
    for i in reversed(range(len(mask))):
        if not mask[i]:
            block.arguments[offset + i].replace_all_uses_with(inits[i].handle)
            block.erase_argument(offset + i)


def _keep(values, mask) -> list:
    return [v for v, k in zip(values, mask) if k]


def _drop_for_args(op, mask, inits):
    """The same loop without the carried values `mask` drops (never changed by the body)."""
    terminator = op.body.last_op
    terminator.set_operands(_keep(terminator.operands, mask))
    _drop_arguments(op.body, mask, inits)
    kept = _keep([x.handle for x in inits], mask)
    new = scf.ForOp(
        op.lowerBound, op.upperBound, op.step, kept, region=ir.Region(), location=op.location
    )
    return _replace(op, new, [("region", "region")])


def _drop_while_args(op, mask, inits):
    condition, terminator = op.before.block.last_op, op.after.block.last_op
    condition.set_operands([condition.operands[0], *_keep(condition.operands[1:], mask)])
    terminator.set_operands(_keep(terminator.operands, mask))
    _drop_arguments(op.before.block, mask, inits)
    _drop_arguments(op.after.block, mask, inits)
    kept = _keep([x.handle for x in inits], mask)
    new = scf.WhileOp(kept, before=ir.Region(), after=ir.Region(), location=op.location)
    return _replace(op, new, [("before", "before"), ("after", "after")])


def _replace(old, new, regions):
    for old_name, new_name in regions:
        getattr(new, new_name).take_body(getattr(old, old_name))
    for name, value in old.attributes.items():
        new.attributes.setdefault(name, value)
    old.parent.insert_before(new, old)
    old.erase()
    return new
