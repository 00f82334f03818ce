"""The backward half of remove-layout-conversions: instead of converting a value, compute it
again in the wanted layout, when what computes it is cheap.

For each `ttg.convert_layout` (not to a dot operand), the values it depends on are collected
backwards with the layout each would need (layout_inference.infer_src_encoding), stopping at
values already in that layout, at other conversions (which then convert straight to the new
layout) and at values made in that layout before; from a value an `scf.for` carries, it goes on
to the value the loop yields for it (loop_carried.py). The slice is refused if it needs a value
in two layouts, reaches another block argument, an op with side effects or regions (but a
reduction), a dot, or a load that anchors its layout. It is rematerialized when its cost is below
the conversion's, in Triton's units: a conversion moves its bytes through shared memory and
back (32 per byte, counting at least 32 elements of 32 bits); a duplicated op costs its
result's bytes (8 per byte for loads and slow math, nothing for splats, ranges, pointer
arithmetic, broadcasts and constants), and an op used only inside the slice is not duplicated,
so it costs nothing; a carried value read by an op outside the slice costs a conversion.

    %o = arith.addi %s, %r : tensor<1024xi32, #blocked>
    %p = tt.addptr %x, %o : tensor<1024x!tt.ptr<f32>, #blocked>, ...
    %q = ttg.convert_layout %p : ... #blocked> -> ... #blocked1>
    ==>
    %o1 = arith.addi %s1, %r1 : tensor<1024xi32, #blocked1>      (%s1, %r1 likewise)
    %q = tt.addptr %x1, %o1 : tensor<1024x!tt.ptr<f32>, #blocked1>, ...
"""

from __future__ import annotations

from ....dialects import arith, math, scf, tt, ttg
from ....dialects.base import bit_width
from ....dialects.ttg.attributes import DotOperandEncodingAttr
from ....ir import Operation, Pure, Value, element_type, is_pointer_like
from . import branch_results, loop_carried
from .layout_inference import infer_src_encoding, is_expensive_math, set_constant_type, tensor_type


def rematerialize(func: Operation) -> None:
    """Try every conversion of `func`, and those the tries make (see the module doc)."""
    made: dict[tuple[Value, object], Value] = {}
    threads = _threads(func)
    work = [op for op in func.walk() if isinstance(op, ttg.ConvertLayoutOp)]
    while work:
        convert = work.pop(0)
        if convert.parent is not None:
            work.extend(_try(convert, made, threads))


def _threads(func: Operation) -> int:
    attributes = func.parent_op().attributes
    return attributes["ttg.num-warps"].value * attributes["ttg.threads-per-warp"].value


def _elements(value: Value) -> int:
    count = 1
    for d in value.type.shape:
        count *= d
    return count


def _bytes(value: Value, min_elements: int = 0, min_bits: int = 0) -> int:
    t = value.type
    bits = 64 if is_pointer_like(t) else bit_width(element_type(t))
    return max(_elements(value), min_elements) * max(bits, min_bits) // 8


def _try(convert: Operation, made: dict, threads: int) -> list[Operation]:
    """Rematerialize the slice of one conversion if it pays; the conversions this made."""
    target = convert.result.type.encoding
    if isinstance(target, DotOperandEncodingAttr):
        return []
    existing = made.get((convert.src, target))
    if existing is not None and _dominates(existing, convert):
        convert.result.replace_all_uses_with(existing)
        convert.erase()
        return []
    layouts = _slice(convert.src, target, made, threads)
    if not layouts:
        return []
    if _cost(layouts, convert) > 32 * _bytes(convert.src, 32, 32):
        return []
    source = convert.src  # a carried source is retyped, and `convert` reads it converted back
    new, converts = _rewrite(layouts, made)
    convert.result.replace_all_uses_with(new[source])
    convert.erase()
    return converts


def _can_rematerialize(op: Operation, threads: int) -> bool:
    """Pure ops (a reduction the only one with regions), and loads too small to anchor a
    layout; never a call, a store, an atomic or a dot."""
    if isinstance(op, tt.LoadOp):
        t = tensor_type(op.ptr)
        return t is not None and _elements(op.ptr) < threads
    if Pure not in op.traits or isinstance(op, tt.DotOp):
        return False
    return not op.regions or isinstance(op, tt.ReduceOp)


def _slice(root: Value, encoding, made: dict, threads: int) -> dict[Value, object] | None:
    """The values to recompute, each with its layout (None: the slice is refused)."""
    layouts: dict[Value, object] = {}
    queue = [(root, encoding)]
    while queue:
        value, wanted = queue.pop()
        if tensor_type(value) is None or value.type.encoding is wanted:
            continue
        if value in layouts:
            if layouts[value] is not wanted:
                return None
            continue
        if (value, wanted) in made:
            continue
        op = value.defining_op
        if op is None and loop_carried.carried(value) is not None:
            layouts[value] = wanted
            queue.append((loop_carried.yielded(value), wanted))
            continue
        if branch_results.branch_of(value) is not None:
            layouts[value] = wanted
            queue.extend((v, wanted) for v in branch_results.yielded(value))
            continue
        if op is None or len(op.results) != 1:
            return None
        layouts[value] = wanted
        if isinstance(op, ttg.ConvertLayoutOp):
            continue
        if not _can_rematerialize(op, threads):
            return None
        source = infer_src_encoding(op, wanted)
        if source is None and any(tensor_type(v) is not None for v in op.operands):
            return None
        queue.extend((v, source) for v in op.operands)
    return layouts


def _cost(layouts: dict[Value, object], convert: Operation) -> int:
    """What duplicating the slice's ops costs (see the module doc)."""
    ops = {v.defining_op for v in layouts} - {None}
    single: dict[Operation, bool] = {}

    def single_use(op: Operation) -> bool:
        if op not in single:
            single[op] = False  # a cycle through a loop is not single use
            users = [u for r in op.results for u in r.users if u is not convert]
            single[op] = all(u in ops and single_use(u) for u in users)
        return single[op]

    cost = 0
    for op in ops:
        if single_use(op) or isinstance(op, arith.ConstantOp | scf.IfOp):
            continue
        size = _bytes(op.results[0])
        if isinstance(op, tt.LoadOp):
            cost += 8 * size
        elif isinstance(op, tt.ReduceOp):
            cost += _bytes(op.operands[0])
        elif op.name.startswith(("arith.", "math.")) or isinstance(op, math.FmaOp):
            cost += (8 if is_expensive_math(op) else 1) * size
    passers = _passers(layouts)
    for value in layouts:
        if value.defining_op is not None and branch_results.branch_of(value) is None:
            continue
        if any(user not in ops | passers and user is not convert for user in value.users):
            cost += 32 * _bytes(value, 32, 32)
    return cost


def _passers(layouts: dict[Value, object]) -> set[Operation]:
    """The yields that only pass a slice value on to another (a branch yielding the value a
    loop carries, a loop yielding a branch's result): retyped with both, no conversion."""
    passers = set()
    for value in layouts:
        for user in value.users:
            if not isinstance(user, scf.YieldOp):
                continue
            parent = user.parent_op()
            if not isinstance(parent, scf.ForOp | scf.IfOp):
                continue
            targets = parent.body.arguments[1:] if isinstance(parent, scf.ForOp) else parent.outs
            passed = [t for v, t in zip(user.operands, targets) if v is value]
            if all(t in layouts and layouts[t] is layouts[value] for t in passed):
                passers.add(user)
    return passers


def _rewrite(layouts: dict[Value, object], made: dict) -> tuple[dict, list[Operation]]:
    """Recompute the slice in program order, each copy right after its original, and retype
    the carried values and branch results it reached; the new values, and the conversions
    made before loops."""
    carried = [v for v in layouts if v.defining_op is None]
    branched = [v for v in layouts if branch_results.branch_of(v) is not None]
    computed = [v for v in layouts if v.defining_op is not None and v not in branched]
    new: dict[Value, Value] = {v: v for v in (*carried, *branched)}
    if not computed:
        return _retype_carried(carried, layouts, new, made, _passers(layouts))
    position = {op: i for i, op in enumerate(_function_of(computed[0]).walk())}
    ops = sorted({v.defining_op for v in computed}, key=position.__getitem__)
    for op in ops:
        encoding = layouts[op.results[0]]
        source = None if isinstance(op, ttg.ConvertLayoutOp) else infer_src_encoding(op, encoding)
        mapping = {}
        for operand in op.operands:
            if operand in new:
                mapping[operand] = new[operand]
            elif (operand, source) in made:
                mapping[operand] = made[(operand, source)]
        copy = op.clone(mapping)
        op.parent.insert_after(copy, op)
        result = copy.results[0]
        retyped = result.type.clone(encoding=encoding)
        if isinstance(copy, arith.ConstantOp):
            set_constant_type(copy, retyped)
        else:
            result.type = retyped
        new[op.results[0]] = made[(op.results[0], encoding)] = result
    copies = {new[v].defining_op for v in computed} | _passers(layouts)
    for result in branched:
        encoding = layouts[result]
        values = branch_results.yielded(result)
        update = [new.get(v) or made.get((v, encoding)) or v for v in values]
        branch_results.retype(result, encoding, update, copies)
    return _retype_carried(carried, layouts, new, made, copies)


def _retype_carried(carried: list, layouts: dict, new: dict, made: dict, copies: set) -> tuple:
    """Retype each carried value of the slice (loop_carried.retype), the loop yielding the
    new value of what it yielded: recomputed by the slice, made before, or already in the
    layout."""
    converts = []
    for argument in carried:
        encoding = layouts[argument]
        value = loop_carried.yielded(argument)
        update = new.get(value) or made.get((value, encoding)) or value
        converts.append(loop_carried.retype(argument, encoding, update, copies))
    return new, converts


def _function_of(value: Value) -> Operation:
    op = value.defining_op
    while not isinstance(op, tt.FuncOp):
        op = op.parent_op()
    return op


def _dominates(value: Value, user: Operation) -> bool:
    """Whether `value` (an op result) is visible at `user`: its op comes earlier in the block
    of `user` or of one of `user`'s ancestors."""
    op = value.defining_op
    block = op.parent
    while user is not None and user.parent is not block:
        user = user.parent_op()
    if user is None:
        return False
    for other in block:
        if other is op:
            return True
        if other is user:
            return False
    return False
