"""Streaming (non-temporal) stores: writing a block around the caches.

A normal store of a line that is not cached first reads the line (read-for-ownership): a
vector add over arrays far larger than the last-level cache moves 16 bytes per element where
12 would do. A non-temporal store (`vmovntps` on x86, `stnp` on AArch64) writes whole lines
without reading them, which is up to a quarter less traffic there — and a loss when the output
is small and read again soon, since it also leaves the caches. So a structured store streams:

- always when the kernel asks (`tl.store(..., cache_modifier=".cs")` or
  `eviction_policy="evict_first"`), never when it asks to keep the line
  (`eviction_policy="evict_last"`): the middle layer's `naiad.nontemporal` attribute;
- otherwise as the launch decides: the entry point reads one more parameter slot (abi.py), set
  when the bytes the launch's streamable stores write reach a threshold
  (runtime/cpu_streaming.py), and the program takes the streaming or the normal loop over its
  lines on it (both are compiled).

Only a destination whose last dimension is contiguous and whose rows are long qualify. Each row
is written as normal stores up to the first 64-byte boundary, then whole lines as aligned
`<64 bytes>` vector stores marked `!nontemporal`, then normal stores for the rest (x86 has
non-temporal vector stores only for aligned addresses; a line shared with a neighbouring row or
program keeps normal stores on its part; a row whose elements are not aligned to their size
has normal stores throughout). A block an elementwise generic computes at its store
(store_plan.py) runs the generic over each piece of the row: over a line, into a 64-byte local
that LLVM unrolls into vector registers, so the line loop is loads, arithmetic and one
`vmovntps`. (Computing the whole block into scratch first and streaming it after cost 15%: the
loads and the stores no longer overlapped.) A generic whose body reads its loop indices is
computed into scratch that way all the same; so is a copy from a view whose rows are strided.

Non-temporal stores on x86 are weakly ordered: publish.py fences them before the kernel's
atomics and at the end of its range of programs, where another thread may read them next.
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import DYNAMIC, BoolAttr
from ....ir.affine_expr import AffineConstantExpr, AffineDimExpr
from ....middle.linalg.convert_memory import NONTEMPORAL_ATTRIBUTE
from .loops import counted_loop, loop_nest
from .lower_linalg import _generic
from .snapshots import guard_overlaps
from .views import View, copy_elements, element_bytes

LINE_BYTES = 64
# Rows shorter than this stay normal: too few whole lines between their partial ends.
MIN_ROW_BYTES = 256

I64 = ir.IntType(64)


def stream_mode(op, target: View) -> str | None:
    """How a `materialize_in_destination` writing `target` streams: "always" (its store's
    hint), "launch" (the launch chooses) or None (never)."""
    hint = op.attributes.get(NONTEMPORAL_ATTRIBUTE)
    if isinstance(hint, BoolAttr) and not hint.value:
        return None
    size = element_bytes(target.element)
    if size is None or target.rank == 0 or target.strides[-1] != 1:
        return None
    shape = block_shape(op)
    if shape is None or shape[-1] * size < MIN_ROW_BYTES:
        return None
    return "always" if hint is not None else "launch"


def block_shape(op) -> list | None:
    """The static shape of the whole block the store `op` writes a box of (the sliced
    tensor's, under a masked store's `extract_slice`), or None."""
    source = op.operands[0]
    producer = source.defining_op
    if producer is not None and producer.name == "tensor.extract_slice":
        source = producer.operands[0]
    shape = list(source.type.shape)
    return shape if all(n != DYNAMIC and n >= 0 for n in shape) else None


def block_bytes(op, target: View) -> int:
    """The bytes a whole block of the store `op` into `target` writes (what its launch
    counts: a masked store may write fewer)."""
    count = 1
    for n in block_shape(op):
        count *= n
    return count * element_bytes(target.element)


def streamed(fl, op, target: View, mode: str, source=None, producer=None) -> None:
    """Lower the store `op` into `target` streaming as `mode` says: a copy of `source` (a
    view) or the block the elementwise `producer` computes (store_plan.py). In "launch" mode
    one piece of code serves both ways but for its loop over whole lines, which is made twice
    and chosen by the launch's flag (a second copy of all of the block's code doubled the
    kernel's compile time); a block computed into scratch first keeps its whole normal path."""
    b = fl.builder
    flag = ir.Constant(ir.IntType(1), 1)
    if mode == "launch":
        fl.stream_bytes += block_bytes(op, target)
        flag = launch_flag(fl, block_bytes(op, target))
    if producer is not None and _windows(producer) is not None:
        guard_overlaps(fl, producer, target)
        _stream_generic(fl, producer, target, flag)
    elif source is not None and source.strides[-1] == 1:
        _stream_copy(b, source, target, flag)
    elif mode == "launch":
        with b.if_else(flag) as (then, otherwise):
            with then:
                _stream_staged(fl, op, target, source, producer)
            with otherwise:
                _write(fl, target, source, producer)
    else:
        _stream_staged(fl, op, target, source, producer)
    fl.streamed = True  # its fences are publish.py's


# Each loop's trips count at most this many times toward a store's bytes, and so does their
# product, so that the product of nested loops' trips and a block's bytes stays within an i64.
MAX_COUNTED_TRIPS = 1 << 24


def launch_flag(fl, store_bytes: int) -> ir.Value:
    """Whether the launch streams a store of `store_bytes` bytes per run (i1): the program's
    flag, or, in loops, the store's bytes times the loops' trips reaching the launch's bytes
    per program. A row softmax whose programs stride over the rows stores one row per
    iteration: counted once, its 16 MiB output was never streamed."""
    if not fl.loops:
        return fl.stream
    b = fl.builder
    cap = ir.Constant(I64, MAX_COUNTED_TRIPS)
    trips = None
    for loop in fl.loops:
        count = loop.trips(b)
        count = b.select(b.icmp_unsigned("<", count, cap), count, cap)
        trips = count if trips is None else b.mul(trips, count)
        if len(fl.loops) > 1:
            trips = b.select(b.icmp_unsigned("<", trips, cap), trips, cap)
    written = b.mul(trips, ir.Constant(I64, store_bytes))
    return b.or_(fl.stream, b.icmp_signed(">=", written, fl.stream_threshold))


def _write(fl, target: View, source, producer) -> None:
    """The store with normal stores."""
    if producer is not None:
        _generic(fl, producer, into=target)
    else:
        copy_elements(fl.builder, source, target)


def _stream_staged(fl, op, target: View, source, producer) -> None:
    """The block written into scratch, then streamed from there."""
    staging = fl.buffer(block_shape(op), None, element=target.element)
    view = View(staging.pointer, target.element, 0, list(target.sizes), staging.strides)
    _write(fl, view, source, producer)
    _stream_copy(fl.builder, view, target, ir.Constant(ir.IntType(1), 1))


def _stream_rows(b: ir.IRBuilder, target: View, write_part, line_value, flag) -> None:
    """Each row of `target` (unit stride): `write_part(outer, first, count)` writes its
    partial ends with normal stores (one loop over the two, so the code is made once); its
    whole aligned lines are `line_value(outer, j)` (a vector of the line's elements from
    element j), stored non-temporally when `flag` (i1) is set."""
    size = element_bytes(target.element)
    lanes = LINE_BYTES // size
    nontemporal = b.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
    with loop_nest(b, target.sizes[:-1], name="row") as outer:
        outer = list(outer)
        n = _i64(target.sizes[-1])
        start = b.ptrtoint(target.address(b, [*outer, 0]), I64)
        # Elements before the first line boundary (none when no element is aligned: the lines
        # are then normal stores), whole lines, the rest: both ends under `lanes` elements, a
        # bound LLVM sees, so that it does not vectorize their loop (compile time).
        head = b.udiv(b.and_(b.sub(I64(0), start), I64(LINE_BYTES - 1)), I64(size))
        aligned = b.icmp_unsigned("==", b.and_(start, I64(size - 1)), I64(0))
        head = b.select(aligned, head, I64(0))
        head = b.select(b.icmp_signed("<", head, n), head, n)
        rest = b.and_(b.sub(n, head), I64(lanes - 1))
        body_end = b.sub(n, rest)
        with counted_loop(b, 0, 2, name="end") as end:
            tail = b.icmp_signed("!=", end, I64(0))
            count = b.and_(b.select(tail, rest, head), I64(lanes - 1))
            write_part(outer, b.select(tail, body_end, I64(0)), count)

        def lines(stream: bool) -> None:
            with counted_loop(b, head, body_end, step=lanes, name="line") as j:
                value = line_value(outer, j)
                address = target.address(b, [*outer, j])
                if stream:
                    store = b.store(value, address, align=LINE_BYTES)
                    store.set_metadata("nontemporal", nontemporal)
                else:
                    b.store(value, address, align=size)

        if isinstance(flag, ir.Constant):
            flag = aligned
        else:
            flag = b.and_(flag, aligned)
        # Two loops: stores differing only in the hint would be merged, losing it.
        with b.if_else(flag) as (then, otherwise):
            with then:
                lines(True)
            with otherwise:
                lines(False)


def _stream_copy(b: ir.IRBuilder, source: View, target: View, flag) -> None:
    """`source` (unit-stride rows, the sizes of `target`) streamed into `target`."""
    size = element_bytes(target.element)
    vector = ir.VectorType(target.element, LINE_BYTES // size)

    def write_part(outer, first, count):
        with counted_loop(b, first, b.add(first, count), name="edge") as j:
            target.store(b, source.load(b, [*outer, j]), [*outer, j])

    def line_value(outer, j):
        return b.load(source.address(b, [*outer, j]), typ=vector, align=size)

    _stream_rows(b, target, write_part, line_value, flag)


def _stream_generic(fl, producer, target: View, flag) -> None:
    """The elementwise `producer`'s block streamed into `target`: each piece of a row (the
    partial ends, each whole line) computed by the generic over that window of its domain,
    a line into a 64-byte stack slot (a loop of constant trip count that LLVM unrolls and
    packs into vector operations: the slot, a local, aliases no argument, so it becomes a
    vector register) whose value is stored non-temporally."""
    b = fl.builder
    rank = target.rank
    lanes = LINE_BYTES // element_bytes(target.element)
    vector = ir.VectorType(target.element, lanes)
    entry = b.function.entry_basic_block
    at_entry = ir.IRBuilder(entry)
    at_entry.position_at_start(entry)
    alloca = at_entry.alloca(target.element, size=lanes)
    alloca.align = LINE_BYTES
    slot = View(alloca, target.element, 0, [lanes], [1])
    ones = [1] * (rank - 1)

    def write_part(outer, first, count):
        into = target.subview(b, [*outer, first], [*ones, count], [1] * rank)
        _window(fl, producer, [*outer, first], into)

    def line_value(outer, j):
        into = View(slot.pointer, target.element, 0, [*ones, lanes], [0] * (rank - 1) + [1])
        _window(fl, producer, [*outer, j], into)
        return b.load(slot.pointer, typ=vector, align=LINE_BYTES)

    _stream_rows(b, target, write_part, line_value, flag)


def _windows(producer) -> list | None:
    """For each input of the generic `producer`, the loop dimension each of its dimensions
    follows (None: a constant index); None when a map is not that simple or the body reads
    its loop indices, so that it cannot run over a window of its domain."""
    if any(op.name == "linalg.index" for op in producer.walk()):
        return None
    windows = []
    for indexing in producer.maps()[: len(producer.inputs)]:
        dims = []
        for expr in indexing.results:
            if isinstance(expr, AffineDimExpr):
                dims.append(expr.position)
            elif isinstance(expr, AffineConstantExpr):
                dims.append(None)
            else:
                return None
        windows.append(dims)
    seen = {}
    for value, dims in zip(producer.inputs, windows):  # one input under two maps: no window
        if seen.setdefault(value, dims) != dims:
            return None
    return windows


def _window(fl, producer, offsets, into: View) -> None:
    """Lower `producer` over its domain's window from `offsets`, of `into`'s sizes, writing
    `into`: each input is seen from its element at the window's start."""
    b = fl.builder
    saved = {}
    for value, dims in zip(producer.inputs, _windows(producer)):
        view = fl.value(value)
        if not isinstance(view, View) or value in saved:  # an input read twice: shifted once
            continue
        at = [0 if d is None else offsets[d] for d in dims]
        saved[value] = view
        fl.bind(value, view.subview(b, at, list(view.sizes), [1] * view.rank))
    _generic(fl, producer, into=into, guarded=True)
    for value, view in saved.items():
        fl.bind(value, view)


def _i64(value) -> ir.Value:
    return I64(value) if isinstance(value, int) else value
