"""Control flow: `scf.for` / `scf.if` / `scf.while` rebuilt with pointers carried as their
offsets (the base of a carried pointer never changes: the pointer analysis checks it).

A pointer block an `scf.for` carries with a loop-invariant layout (pointer_analysis.py) is
carried as its start alone, an `index`:

    %r = scf.for ... iter_args(%p = %init) -> (tensor<128x64x!tt.ptr<f16>>) {
      ... tt.load %p ...
      %next = tt.addptr %p, %c64 : ...
      scf.yield %next
    }
  becomes
    %r = scf.for ... iter_args(%start = %init_start) -> (index) {
      ... memref.reinterpret_cast %A to offset: [%start], sizes: [128, 64], strides: [%sa, 1]
      %next = arith.addi %start, %c64 : index
      scf.yield %next : index
    }

Its block of offsets, which only an element-by-element access reads, is rebuilt from the start
inside the loop and after it (dead code otherwise, removed after the conversion).

A carried pointer that does not point into one argument on every path (made from an integer
or loaded from memory: a grouped GEMM's tiles) is carried as its offset into memory, its
address over the pointee's size (convert_addresses.memory_offset): the values that enter
its slot are converted to that form, and inside and after the region it is a pointer into
memory, whose accesses gather and scatter element by element.
"""

from __future__ import annotations

from ...dialects import scf
from ...dialects.tt.types import TensorDescType
from ...ir import RankedTensorType, Value, is_pointer_like
from .conversion import (
    FunctionConversion,
    Pointer,
    converts,
    fail,
    is_pointer,
    offset_type,
    pointee,
)
from .convert_addresses import memory, memory_offset
from .emit import materialize, offsets_block


def carried_type(old: Value):
    """What a value carried by a loop or yielded by a region becomes."""
    _refuse_descriptor(old)
    return offset_type(old.type) if is_pointer(old) else old.type


def carried_value(c: FunctionConversion, old: Value, slot: Value | None = None) -> Value:
    """What `old` becomes when it enters the carried `slot` (a loop argument or a region
    result; None: the slot of `old` itself)."""
    _refuse_descriptor(old)
    if not is_pointer(old):
        return c.value(old)
    pointer = c.pointer(old)
    if not _via_memory(c, old if slot is None else slot):
        return pointer.offset
    return memory_offset(c, pointer, pointee(old.type))


def _via_memory(c: FunctionConversion, slot: Value) -> bool:
    """Whether the carried pointer `slot` is kept as an offset into memory (no one argument)."""
    if not is_pointer(slot) or c.analysis.base_of(slot) is not None:
        return False
    if is_pointer_like(pointee(slot.type)):
        fail(
            _owner(slot),
            "a pointer to pointers carried through a loop or an if does not point into one "
            "kernel argument on every path; such pointers have no lowering to Linalg",
        )
    return True


def _refuse_descriptor(old: Value, at=None) -> None:
    """Fail at `at` (else where `old` is made) if `old` is a tensor descriptor."""
    if isinstance(old.type, TensorDescType):
        message = "a tensor descriptor carried by a loop, an if or a branch has no lowering"
        fail(at if at is not None else _owner(old), f"{message} to Linalg")


def _refuse_descriptors(op) -> None:
    """Fail at `op` (a loop or an if) if it carries a tensor descriptor."""
    for value in (*op.operands, *op.results):
        _refuse_descriptor(value, op)


def _owner(value: Value):
    """The op that defines `value`, or that holds the block it is an argument of."""
    return value.defining_op if value.defining_op is not None else value.owner.parent_op()


def bind_carried(c: FunctionConversion, old: Value, new: Value) -> None:
    """Bind a loop argument or region result; a pointer gets its base from the analysis, or
    is a pointer into memory."""
    if not is_pointer(old):
        c.bind(old, new)
        return
    if _via_memory(c, old):
        c.bind(old, Pointer(memory(c, pointee(old.type)), new))
        return
    c.bind(old, Pointer(_base(c, old), new))


def _base(c: FunctionConversion, old: Value) -> Value:
    """The converted argument a pointer carried by its start points into."""
    return c.pointer(c.analysis.base_of(old)).base


def _by_start(c: FunctionConversion, old: Value) -> bool:
    """Whether `old` (a loop argument or result) is a pointer block carried by its start."""
    return isinstance(old.type, RankedTensorType) and c.analysis.pointer(old) is not None


def _bind_by_start(c: FunctionConversion, old: Value, start: Value) -> None:
    c.starts[old] = start
    c.bind(old, Pointer(_base(c, old), offsets_block(c, c.analysis.pointer(old).offsets)))


@converts(scf.ForOp)
def _for(c: FunctionConversion, op) -> None:
    _refuse_descriptors(op)
    by_start = [is_pointer(a) and _by_start(c, a) for a in op.region_iter_args]
    c.carried_by_start[op] = by_start
    inits = [
        materialize(c, c.analysis.pointer(v).offsets.start) if flag else carried_value(c, v, a)
        for v, a, flag in zip(op.initArgs, op.region_iter_args, by_start)
    ]
    loop = c.emit(
        scf.ForOp(c.value(op.lowerBound), c.value(op.upperBound), c.value(op.step), inits)
    )
    _copy_discardable(op, loop)
    body = loop.body
    c.bind(op.induction_var, body.arguments[0])
    with c.builder.at_end(body):
        for old, new, flag in zip(op.region_iter_args, body.arguments[1:], by_start):
            if flag:
                _bind_by_start(c, old, new)
            else:
                bind_carried(c, old, new)
    c.convert_block(op.body, body)
    for old, new, flag in zip(op.results, loop.results, by_start):
        if flag:
            _bind_by_start(c, old, new)
        else:
            bind_carried(c, old, new)


@converts(scf.IfOp)
def _if(c: FunctionConversion, op) -> None:
    _refuse_descriptors(op)
    types = [carried_type(v) for v in op.results]
    new = c.emit(scf.IfOp(c.value(op.condition), types, with_else=op.else_block is not None))
    c.convert_block(op.then_block, new.then_block)
    if op.else_block is not None:
        c.convert_block(op.else_block, new.else_block)
    for old, value in zip(op.results, new.results):
        bind_carried(c, old, value)


@converts(scf.WhileOp)
def _while(c: FunctionConversion, op) -> None:
    _refuse_descriptors(op)
    inits = [carried_value(c, v, a) for v, a in zip(op.inits, op.before.block.arguments)]
    types = [carried_type(v) for v in op.results]
    new = c.emit(scf.WhileOp(inits, types))
    _copy_discardable(op, new)
    for old, value in zip(op.before.block.arguments, new.before.block.arguments):
        bind_carried(c, old, value)
    c.convert_block(op.before.block, new.before.block)
    for old, value in zip(op.after.block.arguments, new.after.block.arguments):
        bind_carried(c, old, value)
    c.convert_block(op.after.block, new.after.block)
    for old, value in zip(op.results, new.results):
        bind_carried(c, old, value)


@converts(scf.YieldOp)
def _yield(c: FunctionConversion, op) -> None:
    parent = op.parent_op()
    by_start = c.carried_by_start.get(parent, ())
    slots = _yield_slots(parent, op)
    values = []
    for i, old in enumerate(op.operands):
        if i < len(by_start) and by_start[i]:
            values.append(materialize(c, c.analysis.pointer(old).offsets.start))
        else:
            values.append(carried_value(c, old, slots[i]))
    c.emit(scf.YieldOp(values))


def _yield_slots(parent, op) -> list[Value]:
    """The carried values an `scf.yield` of `parent` gives its operands to."""
    if isinstance(parent, scf.WhileOp):
        return list(parent.before.block.arguments)
    return list(parent.results)


@converts(scf.ConditionOp)
def _condition(c: FunctionConversion, op) -> None:
    slots = op.parent_op().results
    values = [carried_value(c, v, slot) for v, slot in zip(op.args, slots)]
    c.emit(scf.ConditionOp(c.value(op.condition), values))


def _copy_discardable(old, new) -> None:
    """Keep loop hints (`tt.num_stages`, `tt.loop_unroll_factor`, ...) for the back end."""
    for name, value in old.attributes.items():
        if name.startswith("tt."):
            new.attributes[name] = value
