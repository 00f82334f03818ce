"""A load copied in chunks is read in place when one chunk is the whole block.

A load whose row (or column) offsets wrap around an extent (`(pid_m * BM + arange(BM)) % M`,
tutorial 03's A and B tiles) is converted to Linalg as a loop over the runs of rows that do
not wrap, each copied from its own view into the buffer:

    %buf = memref.alloc();  scf.if %partial { linalg.fill ins(%other) outs(%buf) }
    scf.while (%row = 0) { ... } do {
        %V = memref.reinterpret_cast %arg to offset: [..], sizes: [BM, BK], strides: [..]
        memref.copy (subview %V[0, 0][%run, %box][1, 1]), (subview %buf[%row, 0][%run, %box][1, 1])
    }
    %t = bufferization.to_tensor %buf

Nearly always the block does not wrap and the mask keeps it all: one run copies the whole of
`%V` into the buffer, which a dot then reads. As snapshots.py does for a load of one copy, the
code decides at run time: a run whose sizes are the block's is the whole block (it starts at
row 0 and is the loop's only run), and then it is not copied; the tensor is `%V` itself,
kept in stack slots (which LLVM makes registers) until the tensor is read:

    copy only when (%run, %box) != (BM, BK);  %t = view of (whole ? %V : %buf)

The 1024^3 tutorial matmul on one Zen 4 core ran 25.0 -> 22.4 ms (bench/RESULTS.md): read in
place, the tiles' rows come from memory while the dot's multiply-adds run, where the copies
waited on them. Compiled for AVX2 or SSE the copies stay (lower_memref.py asks
lower_matmul.reads_rows_in_place): there reading in place was slower. Legal, as for a
snapshot, when nothing may write memory between the loop and the tensor's last read, and each
reader only reads (snapshots.readers_of).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ....ir import Operation, Value
from .loops import as_value, if_then
from .snapshots import either_view, is_alloc, prefix_subview, read_as_tensor, unwritten
from .views import View

I1 = ir.IntType(1)
I64 = ir.IntType(64)


@dataclass
class ChunkedLoad:
    """The copy in a chunked load's loop, the block's view it copies from, and its tensor."""

    copy: Operation
    whole: Value  # the block's view (%V), made in the loop
    tensor: Value  # the to_tensor result, read in place when whole
    slots: tuple | None = None  # stack slots: whole (i1), base pointer, each stride


def plan_chunked_loads(function, plan, writes_memory) -> None:
    """Record in `plan.chunked` (copy op and to_tensor result -> ChunkedLoad) the chunked loads
    that may be read in place."""
    for op in function.walk():
        if op.name == "scf.while":
            load = _chunked_load(op, plan.deferred)
            if load is None or load.copy in plan.skipped or load.tensor in plan.in_place:
                continue  # not this form, or read in place at a store already (store_plan.py)
            if unwritten(op, load.tensor, writes_memory):
                plan.chunked[load.copy] = load
                plan.chunked[load.tensor] = load


def _chunked_load(loop, deferred) -> ChunkedLoad | None:
    copies = [op for op in loop.after.block if op.name == "memref.copy"]
    if len(copies) != 1:
        return None
    (copy,) = copies
    window = prefix_subview(copy.operands[0])
    target = copy.operands[1].defining_op
    if window is None or target is None or target.name != "memref.subview":
        return None
    buffer, whole = target.operands[0], window.operands[0]
    shape = getattr(buffer.type, "shape", None)
    if not is_alloc(buffer) or list(getattr(whole.type, "shape", ())) != list(shape or ()):
        return None
    if target.results[0].uses != ((copy, 1),) or target.parent is not copy.parent:
        return None
    tensor = read_as_tensor(buffer, target, loop, deferred)
    if tensor is None or tensor.defining_op.parent is not loop.parent:
        return None
    return ChunkedLoad(copy, whole, tensor)


def _stack_slot(fl, t: ir.Type) -> ir.Value:
    """A stack slot in the function's entry block (so that LLVM promotes it to registers)."""
    entry = fl.builder.function.entry_basic_block
    builder = ir.IRBuilder(entry)
    builder.position_at_start(entry)
    return builder.alloca(t)


def enter_chunked_load(fl, load: ChunkedLoad) -> None:
    """Before the loop: the stack slots, the block not (yet) whole."""
    rank = len(load.whole.type.shape)
    load.slots = (
        _stack_slot(fl, I1),
        _stack_slot(fl, ir.PointerType()),
        [_stack_slot(fl, I64) for _ in range(rank)],
    )
    fl.builder.store(ir.Constant(I1, 0), load.slots[0])


def lower_chunked_copy(fl, load: ChunkedLoad, copy_run) -> None:
    """The copy of one run (`copy_run(source, target)`, memref.copy's lowering), made only
    when the run is not the whole block; whether it is, and the block's view, kept for the
    tensor."""
    b = fl.builder
    source, target = fl.value(load.copy.operands[0]), fl.value(load.copy.operands[1])
    whole: View = fl.value(load.whole)
    flag, pointer, strides = load.slots
    if type(whole) is not View:  # not one strided view (a gather of addresses): always copied
        copy_run(source, target)
        return
    full = ir.Constant(I1, 1)
    for size, n in zip(source.sizes, whole.sizes):
        if isinstance(size, int) and size != n:
            full = ir.Constant(I1, 0)
        elif not isinstance(size, int):
            full = b.and_(full, b.icmp_signed("==", size, as_value(n)))
    with if_then(b, b.not_(full), name="run"):
        copy_run(source, target)
    b.store(full, flag)
    base = b.gep(whole.pointer, [as_value(whole.offset)], source_etype=whole.element)
    b.store(base, pointer)
    for slot, stride in zip(strides, whole.strides):
        b.store(as_value(stride), slot)


def lower_chunked_tensor(fl, load: ChunkedLoad, buffer: View) -> None:
    """The tensor: the block's view where the run was whole, else the buffer."""
    b = fl.builder
    whole: View = fl.value(load.whole)
    if type(whole) is not View:
        fl.bind(load.tensor, buffer)
        return
    flag, pointer, slots = load.slots
    strides = [s if isinstance(s, int) else b.load(t) for s, t in zip(whole.strides, slots)]
    view = View(b.load(pointer), whole.element, 0, list(whole.sizes), strides)
    fl.bind(load.tensor, either_view(b, b.load(flag), view, buffer))
