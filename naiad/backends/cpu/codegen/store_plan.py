"""Writing a block straight into its destination, and reading loads in place.

The Linalg form computes into fresh buffers: a masked load copies the box of its view into a
buffer (and fills the rest), an elementwise `linalg.generic` writes a new block, and a masked
store copies the box of that block into the destination. For the commonest kernel shape —

    %t = bufferization.to_tensor %buf          (%buf ← copy of the box of view V)
    %r = linalg.generic ins(%t, ...)          (elementwise)
    %s = tensor.extract_slice %r[0][box][1]
    bufferization.materialize_in_destination %s in (subview of W, the same box)

— three of those passes are unnecessary: the generic can run over the box only, read V itself
and write W itself. `plan_stores` finds these shapes in a block before it is lowered:

- a *store*: a materialize whose source is an all-parallel, identity-output generic (directly
  or through a zero-offset, unit-stride extract_slice) used by nothing else, in the same block:
  the generic is lowered at the store, over the destination's sizes, writing the destination;
- an *in-place read*: an input of such a generic that is the `to_tensor` of a buffer filled only
  by a copy of the same box (the same size values) of a view, used by nothing else: the generic
  reads that view, and the copy (and the fill of the masked-off part, which nothing reads) are
  skipped. A load is a snapshot, so this needs no write to memory between the copy and the
  store (a store, an atomic, a call, or a region holding one): otherwise the copy stays. The
  store itself may overwrite the view before the loop has read all of it (`x = load(p + i);
  store(p + i + 1, 2 * x)`): at the store, a run-time test makes the copy after all when the
  two regions overlap and are not the same elements (snapshots.guard_overlaps).

A load stored as it is (`tl.store(q, tl.load(p), mask)`, a flip's row read backwards) through
the same box is a *copy store*: the store copies from the loaded view itself, with the view's own
strides, and the load's copy and fill are skipped, under the same conditions and the same
run-time overlap test (snapshots.store_copy, which copies through the load's buffer otherwise).

Every other load read only by reductions, generics, slices and extracts, with no write before
its last read, is read in place whenever its mask keeps the whole block (snapshots.py: the copy
then runs only for a partial box).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ....middle.linalg.bounds_checks import INFO_FUNCTION, VIEW_FUNCTION
from .chunked_loads import plan_chunked_loads
from .snapshots import plan_snapshots

_WRITES = (
    "bufferization.materialize_in_destination",
    "memref.store",
    "memref.atomic_rmw",
    "memref.generic_atomic_rmw",
    "func.call",
)


@dataclass
class StorePlan:
    """What the code generator does differently in one function (see the module)."""

    stores: dict = field(default_factory=dict)  # materialize op -> generic op
    deferred: set = field(default_factory=set)  # generics and slices lowered at their store
    lowered_at: dict = field(default_factory=dict)  # each of those -> its store
    skipped: set = field(default_factory=set)  # copies and fills nobody needs
    in_place: dict = field(default_factory=dict)  # to_tensor result -> the view value it reads
    snapshots: dict = field(default_factory=dict)  # copy op -> snapshots.Snapshot
    chunked: dict = field(default_factory=dict)  # copy op, tensor -> chunked_loads.ChunkedLoad
    overlap_guards: dict = field(default_factory=dict)  # in-place read -> its skipped copy
    copy_stores: dict = field(default_factory=dict)  # store of a load as it is -> its copy


def _only_user(value):
    uses = value.uses
    return uses[0][0] if len(uses) == 1 else None


def _is_prefix_slice(op) -> bool:
    return all(x == 0 for x in op.static_offsets.values) and all(
        x == 1 for x in op.static_strides.values
    )


def _elementwise(op) -> bool:
    return (
        op.name == "linalg.generic"
        and len(op.results) == 1
        and all(t.value == "parallel" for t in op.iterator_types)
        and op.maps()[-1].is_identity
    )


def _writes_memory(op) -> bool:
    """Whether `op` (or an op in its regions) may write memory a kernel argument owns (copies
    only ever fill scratch buffers; a bounds check's report writes the program's own info
    slots)."""
    return any(inner.name in _WRITES and not _is_report(inner) for inner in op.walk())


def _is_report(op) -> bool:
    if op.name != "func.call":
        return False
    callee = op.callee.root if hasattr(op.callee, "root") else str(op.callee)
    return callee.startswith((INFO_FUNCTION, VIEW_FUNCTION))


def plan_stores(function) -> StorePlan:
    plan = StorePlan()
    for op in function.walk():
        if op.name == "bufferization.materialize_in_destination" and not op.results:
            _plan_store(plan, op)
    plan_snapshots(function, plan, _writes_memory)
    plan_chunked_loads(function, plan, _writes_memory)
    return plan


def _plan_store(plan: StorePlan, store) -> None:
    source, dest = store.operands[0], store.operands[1]
    producer = source.defining_op
    slice_op = None
    if producer is not None and producer.name == "tensor.extract_slice":
        if not _is_prefix_slice(producer) or _only_user(source) is not store:
            return
        slice_op, source = producer, producer.operands[0]
        producer = source.defining_op
    if producer is not None and producer.name == "bufferization.to_tensor":
        _plan_copy_store(plan, store, slice_op, source)
        return
    if producer is None or not _elementwise(producer):
        return
    if _only_user(source) is not (slice_op or store):
        return
    if len(dest.type.shape) != len(producer.results[0].type.shape):
        return  # a rank-reducing slice (a [1, 1] block into a [1] box): the loops are the block's
    block = store.parent
    if producer.parent is not block or (slice_op is not None and slice_op.parent is not block):
        return
    plan.stores[store] = producer
    plan.deferred.add(producer)
    plan.lowered_at[producer] = store
    if slice_op is not None:
        plan.deferred.add(slice_op)
        plan.lowered_at[slice_op] = store
    box = _box_sizes(dest)
    for value in producer.inputs:
        _plan_read(plan, value, producer, box, store)


def _box_sizes(view_value):
    """The size operands (values or ints) of the subview a store writes, or None."""
    op = view_value.defining_op
    if op is None or op.name != "memref.subview":
        return None
    return op.mixed_sizes


def _plan_read(plan: StorePlan, value, generic, box, store) -> None:
    found = _box_copy(value, generic, box, store)
    if found is None:
        return
    copy, fills = found
    plan.in_place[value] = copy.operands[0]
    plan.overlap_guards[value] = copy
    plan.skipped.add(copy)
    for fill in fills:
        plan.skipped.add(_fill_region(fill))


def _plan_copy_store(plan: StorePlan, store, slice_op, value) -> None:
    """A load stored as it is, through the same box: the store copies from the loaded view
    (snapshots.store_copy guards the overlap), and the load's copy and fill are skipped."""
    if slice_op is not None and slice_op.parent is not store.parent:
        return
    found = _box_copy(value, slice_op or store, _box_sizes(store.operands[1]), store)
    if found is None:
        return
    copy, fills = found
    plan.copy_stores[store] = copy
    plan.skipped.add(copy)
    for fill in fills:
        plan.skipped.add(_fill_region(fill))


def _box_copy(value, reader, box, store):
    """(copy, fills) when tensor `value`, read by `reader` only, is the `to_tensor` of a buffer
    filled only by a copy of the store's box of a view (and fills of the rest), with no write
    between the copy and the store; else None."""
    to_tensor = value.defining_op
    if box is None or to_tensor is None or to_tensor.name != "bufferization.to_tensor":
        return None
    if _only_user(value) is not reader:
        return None
    buffer = to_tensor.operands[0]
    copy, fills = None, []
    for use in buffer.uses:
        user = use[0]
        if user is to_tensor:
            continue
        if user.name == "memref.subview" and len(user.results[0].uses) == 1:
            inner = user.results[0].uses[0][0]
            target = inner.operands[1] if inner.name == "memref.copy" else None
            if target is user.results[0] and copy is None:
                copy = inner
                continue
        if user.name == "linalg.fill":
            fills.append(user)
            continue
        return None
    if copy is None or copy.parent is not store.parent:
        return None
    window = copy.operands[0].defining_op
    if window is None or window.name != "memref.subview" or not _same(window.mixed_sizes, box):
        return None
    if not _same(copy.operands[1].defining_op.mixed_sizes, box):
        return None
    if _written_between(copy, store):
        return None
    return copy, fills


def _fill_region(fill):
    """The fill, or the `scf.if` that holds only it (the masked-off lanes' fill)."""
    parent = fill.parent.parent_op()
    if parent is not None and parent.name == "scf.if":
        ops = [o for o in fill.parent if o.name != "scf.yield"]
        if ops == [fill] and parent.else_block is None:
            return parent
    return fill


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b))


def _written_between(first, last) -> bool:
    op = first.next_op
    while op is not None and op is not last:
        if _writes_memory(op):
            return True
        op = op.next_op
    return False
