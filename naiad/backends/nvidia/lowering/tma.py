"""Block loads and stores through host tensor maps, by the tensor memory accelerator (sm_90):
`tt.descriptor_load`, `tt.descriptor_store` and `tt.descriptor_reduce` (frontend/tensor_maps.py
says which accesses become them).

A load copies the block into the op's shared scratch with `cp.async.bulk.tensor`, one copy per
box (below), completing on an `mbarrier` that one thread initializes and arms with the bytes to
expect; every thread waits on its phase, then reads its elements. A store is the reverse: every
thread writes its elements into the scratch and fences them to the asynchronous proxy, and after
a barrier one thread copies the boxes out as one bulk group and waits until they have been read;
a reduction is a store whose copies combine (add, and, or, xor) the boxes with what they land on.
The copy engine does the bounds: elements outside the tensor read as zero (NaN with NaN
padding, the tensor map's fill) and are never written.

The scratch holds the block in the `#ttg.nvmma_shared` layout of its rows (`block_layout`): rows
of the swizzle width (128 bytes, or the row's 32 or 64), each 16-byte group XOR-ed by the row's
phase, one column block after the other, as the copy engine writes a box of that swizzle mode.
So a box is one column block of at most 256 rows (the engine's limit per dimension), and its
bytes start at the box's first element's offset in that layout. The host encodes the tensor map
with the same box and swizzle (`box`, runtime/tensor_maps.py). A map of more than two
dimensions moves blocks whose leading dimensions are 1 (frontend/tensor_maps.py), as 2-D
blocks: the op's block is its last two dimensions, and each copy names the leading
coordinates after them (`.3d` and on); the box is 1 along those, so it lands in shared memory
as the 2-D block's.
"""

from __future__ import annotations

from ....dialects.tt.attributes import DescriptorReduceKind
from ....dialects.ttg.attributes import NVMMASharedEncodingAttr
from ....errors import InternalError
from . import barriers
from .context import Context, lowers
from .emitter import SHARED_PTR, from_memory, memory_type
from .indexing import layout_of
from .ldmatrix import shared_offsets, store_plan
from .stmatrix import store_registers
from .thread_addresses import ThreadAddresses

# The copy engine's largest box extent, and the alignment of a swizzled destination (8 rows of
# 128 bytes: the swizzle reads address bits 4-9).
MAX_BOX_ROWS = 256
SCRATCH_ALIGNMENT = 1024
_BARRIER_BYTES = 8
TENSOR_MAP_PTR = "ptr"  # a tensor map parameter's generic address (lowering/function.py)


def swizzle_bytes(columns: int, element_bytes: int) -> int:
    """The swizzle width of a block's rows: 128 bytes, or the whole row when narrower."""
    return min(128, columns * element_bytes)


def box(block_shape, element_bytes: int) -> tuple[int, int]:
    """(columns, rows) of one box of a block (innermost first, as the tensor map lists it)."""
    rows, columns = block_shape
    return swizzle_bytes(columns, element_bytes) // element_bytes, min(rows, MAX_BOX_ROWS)


def block_encoding(block_type) -> NVMMASharedEncodingAttr:
    """The shared layout a block's copies write (see the module doc)."""
    nbytes = block_type.element_type.width // 8
    return NVMMASharedEncodingAttr(swizzle_bytes(block_type.shape[1], nbytes), False, nbytes * 8)


def block_layout(block_type):
    """element -> offset of a block in the scratch (see the module doc)."""
    return shared_offsets(block_encoding(block_type), block_type.shape).invert()


def block_bytes(t) -> int:
    """The bytes of a block of tensor or buffer type `t`: what its copies move."""
    return t.numel * (t.element_type.width // 8)


def scratch_bytes(op) -> int:
    """The shared scratch of a descriptor load (block and mbarrier) or store (block)."""
    if op.name == "tt.descriptor_load":
        return block_bytes(op.result.type) + _BARRIER_BYTES
    return block_bytes(op.src.type)


def _boxes(block_type, to_offset):
    """(column, row, byte offset in the scratch) of each box of the block."""
    nbytes = block_type.element_type.width // 8
    rows, columns = block_type.shape
    box_columns, box_rows = box(block_type.shape, nbytes)
    for column in range(0, columns, box_columns):
        for row in range(0, rows, box_rows):
            yield column, row, to_offset.apply(dim0=row, dim1=column)[0] * nbytes


def _scratch(ctx: Context, op, nbytes: int) -> None:
    ctx.need_shared(nbytes)
    if ctx.em.scratch_base % SCRATCH_ALIGNMENT:
        raise InternalError(f"`{op.name}` scratch at {ctx.em.scratch_base}, not 1024-aligned")


def _coordinates(ctx: Context, indices, column: int, row: int) -> list[str]:
    """The tensor coordinates (innermost first) of the box at (`row`, `column`) of the block
    at `indices` (..., row, column): the leading ones follow, as they are."""
    em = ctx.em
    (top,), (left,) = ctx[indices[-2]], ctx[indices[-1]]
    inner = em.op(f"add i32 {left}, {column}") if column else left
    outer = em.op(f"add i32 {top}, {row}") if row else top
    return [inner, outer, *(ctx[index][0] for index in reversed(indices[:-2]))]


def _tensor(n: int, rank: int) -> str:
    """A copy's tensor operand: the map ($1) and its `rank` coordinates from operand $n+1."""
    coordinates = ", ".join(f"${n + 1 + i}" for i in range(rank))
    return f"[$1, {{{coordinates}}}]"


def _issuer(ctx: Context, pred: str | None = None) -> str:
    """i1: this thread issues the copies (thread 0), and `pred` holds."""
    em = ctx.em
    first = em.op(f"icmp eq i32 {em.tid()}, 0")
    return em.op(f"and i1 {first}, {pred}") if pred is not None else first


def init_barrier(ctx: Context, barrier: str, count: int, issue: str) -> None:
    text = f"@$0 mbarrier.init.shared::cta.b64 [$1], {count};"
    ctx.em.asm("void", text, "b,r", [("i1", issue), (SHARED_PTR, barrier)])


def expect_bytes(ctx: Context, barrier: str, nbytes: int, issue: str) -> None:
    """Arrive on `barrier`, which then waits for `nbytes` more of copies in this phase."""
    text = f"@$0 mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], {nbytes};"
    ctx.em.asm("void", text, "b,r", [("i1", issue), (SHARED_PTR, barrier)])


def _issue_per_box(ctx: Context, indices, block_type, to_offset, at, args, instruction, tail=()):
    """One asm block, run by the thread `args[0]` picks: `instruction(n, rank)` for each box
    of the block at `indices` (operand $n its shared address, $n+1 on its `rank` coordinates),
    then `tail`; the boxes' bytes start at `at` (an i32 value past the scratch base)."""
    em = ctx.em
    args, copies = list(args), []
    for column, row, offset in _boxes(block_type, to_offset):
        coordinates = _coordinates(ctx, indices, column, row)
        byte = em.op(f"add i32 {at}, {offset}") if offset else at
        copies.append(instruction(len(args), len(coordinates)))
        args += [(SHARED_PTR, em.shared_address(byte)), *(("i32", c) for c in coordinates)]
    text = "{ @!$0 bra.uni skip; " + " ".join([*copies, *tail]) + " skip: }"
    constraints = ",".join("b" if kind == "i1" else "l" if kind == TENSOR_MAP_PTR else "r"
                           for kind, _ in args)  # fmt: skip
    em.asm("void", text, constraints, args)


def copy_in(ctx: Context, indices, tensor_map: str, to_offset, block_type, at, barrier, issue):
    """The copies of the block at `indices` into the buffer at byte `at` (an i32 value, past
    the scratch base) of layout `to_offset`, completing on `barrier`."""
    _issue_per_box(
        ctx,
        indices,
        block_type,
        to_offset,
        at,
        [("i1", issue), (TENSOR_MAP_PTR, tensor_map), (SHARED_PTR, barrier)],
        lambda n, rank: (
            f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes "
            f"[${n}], {_tensor(n, rank)}, [$2];"
        ),
    )


def wait_barrier(ctx: Context, barrier: str, phase: str) -> None:
    """Every thread waits until `barrier`'s phase of parity `phase` (an i32 value) is over."""
    text = (
        "{ .reg .pred done; wait: mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1; "
        "@!done bra.uni wait; }"
    )
    ctx.em.asm("void", text, "r,r", [(SHARED_PTR, barrier), ("i32", phase)])


def inval_barrier(ctx: Context, barrier: str, issue: str) -> None:
    text = "@$0 mbarrier.inval.shared::cta.b64 [$1];"
    ctx.em.asm("void", text, "b,r", [("i1", issue), (SHARED_PTR, barrier)])


@lowers("tt.descriptor_load")
def _load(ctx: Context, op) -> None:
    t = op.result.type
    em = ctx.em
    nbytes = t.element_type.width // 8
    _scratch(ctx, op, scratch_bytes(op))
    to_offset = block_layout(t)
    issue = _issuer(ctx)
    barrier = em.shared_address(str(block_bytes(t)))
    init_barrier(ctx, barrier, 1, issue)
    # The scratch's last generic writes come before the copy's (the asynchronous proxy's), and
    # every thread sees the initialized barrier before it waits on it.
    barriers.fence_async_shared(em)
    em.barrier()
    expect_bytes(ctx, barrier, block_bytes(t), issue)
    copy_in(ctx, op.indices, ctx[op.desc][0], to_offset, t, "0", barrier, issue)
    wait_barrier(ctx, barrier, "0")
    ctx[op.result] = _read(ctx, t, to_offset, nbytes)
    em.barrier()  # every thread is past its wait before the barrier is invalidated
    inval_barrier(ctx, barrier, issue)
    barriers.owe(ctx)


def _read(ctx: Context, t, to_offset, nbytes: int) -> list[str]:
    """This thread's registers of the block in the scratch, read in vectors of up to 16 bytes."""
    em = ctx.em
    offsets, vector, _ = store_plan(layout_of(t), to_offset, nbytes)
    addresses = ThreadAddresses(ctx, offsets, nbytes)
    mem = memory_type(t.element_type)
    registers = []
    for first in range(0, offsets.in_dim_size("register"), vector):
        address = addresses.address(offsets.apply(register=first)[0] * nbytes)
        if vector == 1:
            loaded = [em.op(f"load {mem}, {SHARED_PTR} {address}, align {nbytes}")]
        else:
            vector_type = f"<{vector} x {mem}>"
            whole = em.op(f"load {vector_type}, {SHARED_PTR} {address}, align {vector * nbytes}")
            loaded = [
                em.op(f"extractelement {vector_type} {whole}, i32 {i}") for i in range(vector)
            ]
        registers += [from_memory(em, value, t.element_type) for value in loaded]
    return registers


def _copy_out(n: int, rank: int) -> str:
    """The copy of the box at shared operand $n out to its `rank` coordinates."""
    return f"cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group {_tensor(n, rank)}, [${n}];"


def _reduce_out(op):
    """The bulk reduction of `op`'s kind (add, and, ...) of the box at shared operand $n into
    its `rank` coordinates: the engine combines it with memory as it writes (the tensor map's
    element type is the operation's)."""
    kind = DescriptorReduceKind.keyword(op.kind)

    def instruction(n: int, rank: int) -> str:
        where = f"{rank}d.global.shared::cta.{kind}.tile.bulk_group"
        return f"cp.reduce.async.bulk.tensor.{where} {_tensor(n, rank)}, [${n}];"

    return instruction


def _write_out(ctx: Context, op, instruction) -> None:
    """A block written out of registers by one bulk group: every thread stores its elements
    into the scratch and fences them to the asynchronous proxy; after a barrier thread 0 issues
    `instruction` per box and waits until the engine has read the scratch."""
    t = op.src.type
    em = ctx.em
    _scratch(ctx, op, scratch_bytes(op))
    to_offset = block_layout(t)
    store_registers(ctx, op.src, to_offset)
    barriers.fence_async_shared(em)  # the copy engine reads the scratch: the async proxy
    em.barrier()
    _issue_per_box(
        ctx,
        op.indices,
        t,
        to_offset,
        "0",
        [("i1", _issuer(ctx)), (TENSOR_MAP_PTR, ctx[op.desc][0])],
        instruction,
        tail=("cp.async.bulk.commit_group;", "cp.async.bulk.wait_group.read 0;"),
    )
    barriers.owe(ctx)  # the scratch is free once every thread passes the next barrier


@lowers("tt.descriptor_store")
def _store(ctx: Context, op) -> None:
    _write_out(ctx, op, _copy_out)


@lowers("tt.descriptor_reduce")
def _reduce(ctx: Context, op) -> None:
    _write_out(ctx, op, _reduce_out(op))


# -- the pipeliner's copies (tritongpu-pipeline): rings of buffers and of mbarriers -------------
def _view_bytes(ctx: Context, memdesc) -> str:
    """The byte offset (an i32 value) of a buffer view's first byte (one slot of a ring) past
    the scratch base, which it sets to the buffer's."""
    view = ctx.values[memdesc]
    ctx.em.scratch_base = view.base
    return "0" if view.dynamic is None else view.dynamic


def _address(ctx: Context, memdesc) -> str:
    """The shared address of a buffer view's first byte."""
    return ctx.em.shared_address(_view_bytes(ctx, memdesc))


@lowers("ttng.init_barrier")
def _init_barrier(ctx: Context, op) -> None:
    init_barrier(ctx, _address(ctx, op.alloc), op.count.value, _issuer(ctx))


@lowers("ttng.barrier_expect")
def _barrier_expect(ctx: Context, op) -> None:
    issue = _issuer(ctx, ctx[op.pred][0])
    expect_bytes(ctx, _address(ctx, op.alloc), op.size.value, issue)


@lowers("ttng.async_tma_copy_global_to_local")
def _async_copy(ctx: Context, op) -> None:
    barrier = _address(ctx, op.barrier)
    at = _view_bytes(ctx, op.result)
    to_offset = ctx.values[op.result].to_offset
    issue = _issuer(ctx, ctx[op.pred][0])
    copy_in(ctx, op.coord, ctx[op.desc][0], to_offset, op.result.type, at, barrier, issue)


@lowers("ttng.async_tma_copy_local_to_global")
def _async_copy_out(ctx: Context, op) -> None:
    """Thread 0 copies the buffer out as one bulk group, waited for by the store wait; the
    threads' stores into it were published by the barrier before (barriers.py: a copy out
    touches shared memory, so the pending stores are synced first)."""
    _buffer_out(ctx, op, _copy_out)


@lowers("ttng.async_tma_reduce")
def _async_reduce(ctx: Context, op) -> None:
    """A copy out that combines (`_reduce_out`), as `_async_copy_out`."""
    _buffer_out(ctx, op, _reduce_out(op))


def _buffer_out(ctx: Context, op, instruction) -> None:
    at = _view_bytes(ctx, op.src)
    to_offset = ctx.values[op.src].to_offset
    _issue_per_box(
        ctx,
        op.coord,
        op.src.type,
        to_offset,
        at,
        [("i1", _issuer(ctx)), (TENSOR_MAP_PTR, ctx[op.desc][0])],
        instruction,
        tail=("cp.async.bulk.commit_group;",),
    )


@lowers("ttng.async_tma_store_wait")
def _store_wait(ctx: Context, op) -> None:
    """The issuing thread waits until its copies out have read their buffers (the others
    have none); the barrier that tells the other threads is owed until the next write."""
    ctx.em.asm("void", f"cp.async.bulk.wait_group.read {op.pendings.value};", "", [])
    barriers.owe(ctx)


@lowers("ttng.wait_barrier")
def _wait_barrier(ctx: Context, op) -> None:
    wait_barrier(ctx, _address(ctx, op.alloc), ctx[op.phase][0])


@lowers("ttng.inval_barrier")
def _inval_barrier(ctx: Context, op) -> None:
    inval_barrier(ctx, _address(ctx, op.alloc), _issuer(ctx))
