"""Which loops and loads tritongpu-pipeline (pipeline_loads.py) takes, and the ops their
addresses come from.

A loop qualifies when it is innermost, has no atomics that other programs may wait on (relaxed
adds whose old values go unread count as stores), and its stores write through other kernel
arguments than its pipelined loads read: a copy issued iterations ahead must not read what the
loop has yet to write. Triton's pipeliner does not ask; arguments that view one tensor are the
caller's to avoid, as there. A persistent matmul's epilogue, storing C in a fused loop,
qualifies.

A load qualifies when it is the only reader's input of a `ttg.local_alloc` in the loop's body,
its `other` is absent or zero, and each thread's vectors are at least 4 bytes; a block load
through a tensor map (`tt.descriptor_load`, copied by the tensor memory accelerator) when its
buffer has the layout its copies write (lowering/tma.py's `block_encoding`). Its address
(and mask; a tensor map's block indices) may depend on the induction variable, loop
invariants, carried values whose update depends on nothing else, and ops of the body that
only compute: pure ops, and `scf.if`s of them (a fused persistent loop's prologue, which
steps to the next output tile). Those ops are what the pipeliner copies to compute an
address iterations ahead.
"""

from __future__ import annotations

from ....dialects import arith, scf, tt, ttg
from ....dialects.tt.attributes import MemSemantic
from ....ir import DenseElementsAttr, Operation, Pure
from ..lowering.async_copy import COPY_BYTES, copy_plan
from ..lowering.ldmatrix import shared_offsets
from ..lowering.tma import block_encoding
from .descriptor_pointers import parts
from .loop_carried import carried


def candidates(loop: Operation, axis_info):
    """(the loads to pipeline, the body's ops their addresses depend on in order, the carried
    values those read), or None when `loop` or none of its loads qualifies."""
    stores = _plain_loop(loop)
    if stores is None:
        return None
    loads = [op for op in loop.body.ops if _pipelinable(op, axis_info)]
    address = _address_slice(loads, loop)
    if not loads or address is None or not _apart(stores, loads):
        return None
    return (loads, *address)


_ATOMICS = (tt.AtomicRMWOp, tt.AtomicCASOp, tt.AtomicPollOp)
# A block atomic through a tensor map returns nothing and orders nothing: a store.
_STORES = (tt.StoreOp, tt.DescriptorStoreOp, tt.DescriptorReduceOp)


def _plain_loop(loop: Operation) -> list | None:
    """The stores of an innermost loop, or None when the loop is not one or holds atomics that
    other programs may wait on. A relaxed read-modify-write whose old value the loop never
    reads (attention backward's dQ, summed by atomic adds) orders nothing: it counts as a
    store, whose address must lie apart from the pipelined loads' (`_apart`), and so does a
    block atomic through a tensor map (a bulk tensor reduction)."""
    stores = []
    for op in loop.walk():
        if op is not loop and isinstance(op, scf.ForOp | scf.WhileOp):
            return None
        descriptor_write = op.name.startswith("tt.descriptor_") and op.name != "tt.descriptor_load"
        if _unordered_update(op) or isinstance(op, _STORES):
            stores.append(op)
        elif isinstance(op, _ATOMICS) or descriptor_write:
            return None
    return stores


def _unordered_update(op: Operation) -> bool:
    """A relaxed `tt.atomic_rmw` whose result is unused."""
    return (
        isinstance(op, tt.AtomicRMWOp)
        and MemSemantic.keyword(op.sem) == "relaxed"
        and not op.result.has_uses
    )


def _apart(stores: list, loads: list) -> bool:
    """Whether the loop's stores write through other kernel arguments than the loads read
    (a persistent matmul's epilogue stores C, its loads read A and B): a copy issued
    iterations ahead then cannot read what an earlier iteration has yet to store. Triton's
    pipeliner does not ask; arguments that are views of one tensor are the caller's to
    avoid, as there."""
    if not stores:
        return True
    read = {_read_argument(load) for load in loads}
    written = {_read_argument(store) for store in stores}
    return None not in read | written and not read & written


def _read_argument(access):
    """The kernel argument a load reads (a store writes) through: a tensor map's tensor is its
    base pointer (descriptor_pointers.parts)."""
    if isinstance(access, tt.DescriptorLoadOp | tt.DescriptorStoreOp | tt.DescriptorReduceOp):
        return _base_argument(parts(access.desc)[0])
    return _base_argument(access.ptr)


def _base_argument(pointer):
    """The kernel argument `pointer` (a pointer or a tensor of them) is derived from by
    offsets, splats and broadcasts, through the loop values that carry it; None when it is
    not plainly one."""
    seen = set()
    while pointer not in seen:
        seen.add(pointer)
        owner = pointer.defining_op
        if isinstance(owner, tt.AddPtrOp):
            pointer = owner.ptr
        elif isinstance(owner, tt.SplatOp | tt.BroadcastOp | tt.ExpandDimsOp):
            pointer = owner.src
        elif owner is None:
            found = carried(pointer)
            if found is None:
                parent = pointer.parent_block.parent_op()
                return pointer if isinstance(parent, tt.FuncOp) else None
            loop, index = found[0], pointer.index - 1
            update = loop.body.terminator.operands[index]
            if _base_argument_in_loop(update, pointer) is not pointer:
                return None
            pointer = loop.initArgs[index]
        else:
            return None
    return None


def _base_argument_in_loop(update, argument):
    """`argument` when the loop's `update` of it is `argument` advanced by offsets."""
    while isinstance(update.defining_op, tt.AddPtrOp):
        update = update.defining_op.ptr
    return update


def filled_buffer(load: Operation):
    """The `ttg.local_alloc` that is the one reader of `load`'s value, or None; a tensor copy's
    value may reach it through one layout conversion (the copy fills the buffer itself)."""
    if not load.result.has_one_use:
        return None
    user = next(iter(load.result.users))
    if isinstance(load, tt.DescriptorLoadOp) and isinstance(user, ttg.ConvertLayoutOp):
        user = next(iter(user.result.users)) if user.result.has_one_use else None
    return user if isinstance(user, ttg.LocalAllocOp) and user.parent is load.parent else None


def _pipelinable(op: Operation, axis_info) -> bool:
    """A tensor load whose one reader stores it into a buffer (see the module doc)."""
    if not isinstance(op, tt.LoadOp | tt.DescriptorLoadOp):
        return False
    alloc = filled_buffer(op)
    if alloc is None:
        return False
    if isinstance(op, tt.DescriptorLoadOp):
        return alloc.result.type.encoding == block_encoding(op.result.type)
    if op.other is not None and not _is_zero(op.other):
        return False
    volatile = op.attributes.get("isVolatile")
    if volatile is not None and volatile.value:
        return False  # read when the program reaches it, never iterations ahead
    t = alloc.result.type
    nbytes = t.element_type.width // 8
    to_offset = shared_offsets(t.encoding, t.shape).invert()
    _, width = copy_plan(axis_info, op.ptr, op.mask, to_offset, nbytes)
    return width * nbytes in COPY_BYTES


def _is_zero(value) -> bool:
    owner = value.defining_op
    if not isinstance(owner, arith.ConstantOp):
        return False
    attr = owner.value
    return isinstance(attr, DenseElementsAttr) and attr.is_splat and not attr.splat_value


def _address_slice(loads: list, loop: Operation):
    """(the body's ops the loads' addresses and masks depend on, in order; the carried
    values they read), or None when one depends on anything else (see the module doc)."""
    body = loop.body
    ops: set[Operation] = set()
    args: set = set()
    pending = [v for load in loads for v in address_values(load) if v is not None]
    while pending:
        value = pending.pop()
        if value is loop.induction_var or value in args:
            continue
        if carried(value) is not None and carried(value)[0] is loop:
            args.add(value)
            pending.append(body.terminator.operands[value.index - 1])
            continue
        owner = value.defining_op
        if owner is None:
            if value.parent_block is body:
                return None
            continue  # an argument of the function or of an enclosing op
        if not loop.is_ancestor(owner):
            continue  # defined before the loop
        if owner.parent is not body or not _computes_only(owner):
            return None
        if owner not in ops:
            ops.add(owner)
            pending.extend(owner.operands)
            pending.extend(_captured(owner))
    ordered = [op for op in body.ops if op in ops]
    return ordered, sorted(args, key=lambda a: a.index)


def address_values(load) -> list:
    """What a load's address is computed from: its pointers and mask, or a tensor map's block
    indices."""
    if isinstance(load, tt.DescriptorLoadOp):
        return list(load.indices)
    return [load.ptr, load.mask]


def _computes_only(op: Operation) -> bool:
    """A pure op, or an `scf.if` whose branches hold only pure ops and such `scf.if`s (a fused
    loop's prologue, which steps a persistent kernel's tile): copies of it may run iterations
    ahead."""
    if not isinstance(op, scf.IfOp):
        return Pure in op.traits and not op.regions
    return all(
        isinstance(o, scf.IfOp | scf.YieldOp) or (Pure in o.traits and not o.regions)
        for o in op.walk()
    )


def _captured(op: Operation) -> list:
    """The values the regions of `op` read from outside them."""
    inside = {r for o in op.walk() if o is not op for r in o.results}
    inside |= {a for region in op.regions for block in region.blocks for a in block.arguments}
    return [v for o in op.walk() if o is not op for v in o.operands if v not in inside]
