"""Loads read where they lie when their mask keeps the whole block: a snapshot only if needed.

The Linalg form loads a block by copying the box of a view that the mask allows into a fresh
buffer, whose other elements a fill set to `other` first:

    %buf = memref.alloc()
    scf.if %partial { linalg.fill ins(%other) outs(%buf) }
    memref.copy (subview %V[0, ..][%box][1, ..]), (subview %buf[0, ..][%box][1, ..])
    %t = bufferization.to_tensor %buf

In row kernels (softmax, layer norm) the box is nearly always the whole block (`n_cols` equal
to BLOCK_SIZE, or the full iterations of a loop over a row), and the copy is then a pass over
the row that only takes a snapshot of it. Where no store, atomic or call may write memory
between the copy and the tensor's last read, the snapshot and the view hold the same values, so
the code decides at run time:

    full = AND over d of (box_d == shape_d)
    if (!full) copy                         (the fill, when partial, has run already)
    %t = view of (full ? V : buf)           (one pointer select; strides selected where they differ)

and every reader — reductions, elementwise generics, slices, extracts — reads the row in place
when the mask keeps all of it, and the padded buffer otherwise. A load without a mask copies
the whole view (`memref.copy %V, %buf`, no subviews): it is always full, and its readers read V
(attention's key and value tiles, transposed or widened for a dot, were copied every
iteration). `plan_snapshots` finds the
loads that qualify (called by store_plan.py, after the stores); `lower_snapshot` lowers one
(called by function.py at the copy).

The same run-time choice keeps store_plan.py's in-place reads exact: an elementwise block stored
straight into its destination reads its loads' views while it writes, which is the snapshot's
meaning only if the destination is apart from each view or is its very elements in step;
`guard_overlaps` tests that at the store and otherwise makes the skipped copy after all.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ....ir import Value
from .aliases import VIEW_OPS
from .loops import as_value, if_then
from .views import View, copy_elements, element_bytes

# Ops that only read a tensor operand, at their own position (a linalg op given a tensor init
# other than a fresh `tensor.empty` writes a copy of it: lower_linalg.destination); the readers
# of a view of the load (aliases.VIEW_OPS) read the load too.
_READERS = {
    "linalg.generic",
    "linalg.map",
    "linalg.reduce",
    "linalg.copy",
    "linalg.transpose",
    "linalg.broadcast",
    "linalg.matmul",
    "linalg.batch_matmul",
    "tensor.extract",
}


@dataclass(frozen=True)
class Snapshot:
    """A load read in place when full: the view it copies from, its buffer, its tensor."""

    view: Value  # the whole block's view (V above)
    buffer: Value  # the scratch buffer (%buf)
    tensor: Value  # the to_tensor result, bound at the copy


def plan_snapshots(function, plan, writes_memory) -> None:
    """Record in `plan` (store_plan.StorePlan) every copy of a load that may be read in place:
    `plan.snapshots[copy]`, its to_tensor skipped. `writes_memory(op)` tells whether an op
    may write memory a kernel argument owns."""
    for op in function.walk():
        if op.name == "memref.copy" and op not in plan.skipped:
            snapshot = _snapshot(op, plan.deferred)
            if snapshot is not None and unwritten(op, snapshot.tensor, writes_memory):
                plan.snapshots[op] = snapshot
                plan.skipped.add(snapshot.tensor.defining_op)


def prefix_subview(value):
    """The `memref.subview` making `value` at offsets 0 with unit strides, or None."""
    op = value.defining_op
    if op is None or op.name != "memref.subview":
        return None
    if any(x != 0 for x in op.static_offsets.values):
        return None
    if any(x != 1 for x in op.static_strides.values):
        return None
    return op


def _snapshot(copy, deferred) -> Snapshot | None:
    window, target = (prefix_subview(v) for v in copy.operands[:2])
    if window is None and target is None:  # an unmasked load: the whole view, always full
        whole, buffer = copy.operands[:2]
        if not is_alloc(buffer) or getattr(whole.type, "shape", None) != buffer.type.shape:
            return None
        writer = copy
    elif window is None or target is None:
        return None
    else:
        buffer = target.operands[0]
        if not is_alloc(buffer):
            return None
        shape = list(buffer.type.shape)
        whole = window.operands[0]
        if list(getattr(whole.type, "shape", ())) != shape or target.results[0].uses != (
            (copy, 1),
        ):
            return None
        box = window.mixed_sizes
        if len(box) != len(shape) or any(
            not (x is y or x == y) for x, y in zip(box, target.mixed_sizes)
        ):
            return None
        if any(isinstance(size, int) and size != n for size, n in zip(box, shape)):
            return None  # never full: the copy stays
        writer = target
    tensor = read_as_tensor(buffer, writer, copy, deferred)
    return None if tensor is None else Snapshot(whole, buffer, tensor)


def read_as_tensor(buffer, writer, anchor, deferred):
    """The one `bufferization.to_tensor` of `buffer` after `anchor` (the copy, or the loop of
    copies, that fills it), or None: its only other users must be `writer` and fills before
    `anchor`, and every reader of the tensor must only read, none lowered at its store (in
    `deferred`, which writes)."""
    tensor = None
    for user, _ in buffer.uses:
        if user.name == "bufferization.to_tensor" and tensor is None:
            tensor = user.results[0]
        elif user.name == "linalg.fill" and comes_before(user, anchor):
            continue
        elif user is not writer:
            return None
    if tensor is None or not comes_before(anchor, tensor.defining_op):
        return None
    readers = readers_of(tensor)
    if readers is None or any(reader in deferred for reader in readers):
        return None  # a use we cannot follow, or a reader lowered at its store (which writes)
    return tensor


def is_alloc(buffer) -> bool:
    op = buffer.defining_op
    return op is not None and op.name in ("memref.alloc", "memref.alloca")


def comes_before(op, later) -> bool:
    """Whether `op` (or the op holding it in `later`'s block) comes before `later`."""
    while op is not None and op.parent is not later.parent:
        op = op.parent_op()
    while op is not None and op is not later:
        op = op.next_op
    return op is later


def readers_of(value) -> list | None:
    """The ops that read the buffer behind tensor `value` (through views), or None when one
    may do anything else with it (carry it in a loop, insert into it, yield it)."""
    found = []
    for user, index in value.uses:
        if user.name in VIEW_OPS and index == 0:
            inner = readers_of(user.results[0])
            if inner is None:
                return None
            found += inner
        elif user.name in _READERS:
            found.append(user)
        else:
            return None
    return found


def unwritten(copy, tensor, writes_memory) -> bool:
    """Whether no op from the copy to the last reader of `tensor` may write memory."""
    block = copy.parent
    position = {op: i for i, op in enumerate(block)}
    last = position[copy]
    for reader in readers_of(tensor):
        op = reader
        while op is not None and op.parent is not block:
            op = op.parent_op()
        if op is None or position[op] < position[copy]:
            return False
        last = max(last, position[op])
    op = copy.next_op
    while op is not None and position[op] <= last:
        if writes_memory(op):
            return False
        op = op.next_op
    return True


def lower_snapshot(fl, copy, snapshot: Snapshot) -> None:
    """The copy, run only when the box is partial; the tensor, a view of V or of the buffer
    (V itself where the box's sizes are constants: then they are the block's, `_snapshot`)."""
    b = fl.builder
    source, target = fl.value(copy.operands[0]), fl.value(copy.operands[1])
    whole, buffer = fl.value(snapshot.view), fl.value(snapshot.buffer)
    if all(isinstance(size, int) for size in source.sizes):
        fl.bind(snapshot.tensor, whole)
        return
    full = ir.Constant(ir.IntType(1), 1)
    for size, n in zip(source.sizes, buffer.sizes):
        if not isinstance(size, int):
            full = b.and_(full, b.icmp_signed("==", size, as_value(n)))
    with if_then(b, b.not_(full), name="partial"):
        copy_elements(b, source, target)
    fl.bind(snapshot.tensor, either_view(b, full, whole, buffer))


def either_view(b: ir.IRBuilder, full, whole: View, buffer: View) -> View:
    """The view `full ? whole : buffer` (the same sizes): a selected base, offset 0."""

    def base(view: View):
        if isinstance(view.offset, int) and view.offset == 0:
            return view.pointer
        offset = as_value(view.offset)
        return b.gep(view.pointer, [offset], source_etype=view.element)

    strides = [
        s if isinstance(s, int) and s == t else b.select(full, as_value(s), as_value(t))
        for s, t in zip(whole.strides, buffer.strides)
    ]
    pointer = b.select(full, base(whole), base(buffer))
    return View(pointer, buffer.element, 0, list(buffer.sizes), strides)


def guard_overlaps(fl, generic, target: View) -> None:
    """Before `generic` runs at its store into `target`, reading some loads' views in place
    (store_plan.py): for each, copy the box into its buffer after all, and read that, when the
    view and `target` overlap without being the same elements read and written in step."""
    b = fl.builder
    for value, indexing in zip(generic.inputs, generic.maps()):
        copy = fl.plan.overlap_guards.get(value)
        if copy is None:
            continue
        view, buffer = fl.value(copy.operands[0]), fl.value(copy.operands[1])
        safe = _apart_or_in_step(b, view, target, indexing.is_identity)
        with if_then(b, b.not_(safe), name="overlap"):
            copy_elements(b, view, buffer)
        fl.bind(value, either_view(b, safe, view, buffer))


def store_copy(fl, copy, target: View, store) -> None:
    """A copy store (store_plan.py): `store(view)` for the loaded view of the skipped `copy`
    where `target` is apart from it or its very elements in step, else the copy into the
    load's buffer first and `store(buffer)`. Both ways keep their views' static strides (a
    select between them would make the strides run-time values, and the loops scalar)."""
    b = fl.builder
    view, buffer = fl.value(copy.operands[0]), fl.value(copy.operands[1])
    with b.if_else(_apart_or_in_step(b, view, target, True)) as (apart, overlapping):
        with apart:
            store(view)
        with overlapping:
            copy_elements(b, view, buffer)
            store(buffer)


def _apart_or_in_step(b: ir.IRBuilder, read: View, written: View, identity: bool):
    """i1: the byte ranges of the two views are disjoint (or one is empty), or — when the read
    goes through the identity map — they are the same elements with the same strides. Views of
    different element sizes (a conversion's f32 read, f16 written) can only be disjoint."""
    size, written_size = element_bytes(read.element), element_bytes(written.element)
    if size is None or written_size is None:
        return ir.Constant(ir.IntType(1), 0)
    read_lo, read_hi, read_base = _byte_range(b, read, size)
    written_lo, written_hi, written_base = _byte_range(b, written, written_size)
    safe = b.or_(
        b.icmp_unsigned("<=", read_hi, written_lo), b.icmp_unsigned("<=", written_hi, read_lo)
    )
    for n in [*read.sizes, *written.sizes]:
        if not isinstance(n, int):
            safe = b.or_(safe, b.icmp_signed("<=", n, as_value(0)))
        elif n <= 0:
            return ir.Constant(ir.IntType(1), 1)
    if (
        identity
        and size == written_size
        and all(isinstance(s, int) and s == t for s, t in zip(read.strides, written.strides))
    ):
        safe = b.or_(safe, b.icmp_unsigned("==", read_base, written_base))
    return safe


def _byte_range(b: ir.IRBuilder, view: View, size: int):
    """(lowest, one past the highest, first element's) byte addresses of `view`, as i64."""
    i64 = ir.IntType(64)
    base = b.add(b.ptrtoint(view.pointer, i64), b.mul(as_value(view.offset), i64(size)))
    low, high = base, base
    for n, stride in zip(view.sizes, view.strides):
        span = b.mul(b.sub(as_value(n), i64(1)), b.mul(as_value(stride), i64(size)))
        negative = b.icmp_signed("<", span, i64(0))
        low = b.add(low, b.select(negative, span, i64(0)))
        high = b.add(high, b.select(negative, i64(0), span))
    return low, b.add(high, i64(size)), base
