"""`ttg.convert_layout`, and the shared-memory scratch that conversions and reductions use.

A conversion is planned from the two linear layouts:

- when every thread holds the same elements in both (the lane and warp bases agree), the
  registers are only renumbered: no instruction at all;
- otherwise the tensor goes through shared memory: each thread writes the elements it holds at
  their row-major position, a barrier, each thread reads the elements its new registers hold,
  and a barrier frees the scratch for the next user. (Warp shuffles and swizzled, vectorized
  round trips are the next steps; this general path is correct for any pair of layouts.)
  A conversion into an `mma.sync` operand goes through `ldmatrix` instead (`ldmatrix.py`).

The scratch lies in dynamic shared memory (`@global_smem`) where allocate-shared-memory placed
it for the op (`Context.need_shared`); every user is bracketed by barriers.
"""

from __future__ import annotations

from .context import Context, lowers
from .emitter import SHARED_PTR, bit_width, llvm_type
from .indexing import emit_thread_coords, layout_of, register_map
from .ldmatrix import convert_with_ldmatrix


def _memory_kind(t) -> tuple[str, str]:
    """(LLVM type of the value, LLVM type in shared memory)."""
    kind = llvm_type(t)
    if kind == "i1":
        return kind, "i8"
    if kind.startswith("ptr"):
        return kind, "i64"
    return kind, kind


def shared_store(ctx: Context, value: str, t, byte_offset: str) -> None:
    """Write `value` (scalar type `t`) at `byte_offset` of the scratch."""
    kind, mem = _memory_kind(t)
    if kind == "i1":
        value = ctx.em.op(f"zext i1 {value} to i8")
    elif kind != mem:
        value = ctx.em.op(f"ptrtoint {kind} {value} to i64")
    address = ctx.em.shared_address(byte_offset)
    ctx.em.emit(f"store {mem} {value}, {SHARED_PTR} {address}, align {bit_width(t) // 8}")


def shared_load(ctx: Context, t, byte_offset: str) -> str:
    """Read a value of scalar type `t` at `byte_offset` of the scratch."""
    kind, mem = _memory_kind(t)
    address = ctx.em.shared_address(byte_offset)
    value = ctx.em.op(f"load {mem}, {SHARED_PTR} {address}, align {bit_width(t) // 8}")
    if kind == "i1":
        return ctx.em.op(f"icmp ne i8 {value}, 0")
    if kind != mem:
        return ctx.em.op(f"inttoptr i64 {value} to {kind}")
    return value


def row_major(ctx: Context, coords: list[str], shape) -> str:
    """The row-major index (i32) of the element at `coords` (i32 values) in `shape`."""
    index = "0"
    for coord, extent in zip(coords, shape):
        if index == "0":
            index = coord
        else:
            index = ctx.em.op(f"add i32 {ctx.em.op(f'mul i32 {index}, {extent}')}, {coord}")
    return index


def held_coords(ctx: Context, layout, register: int, dims=None) -> list[str]:
    """The coordinates (i32 values) of the element `register` holds in this thread, along
    `dims` (all by default)."""
    thread = emit_thread_coords(ctx.em, layout)
    constant = layout.apply(register=register)
    dims = range(len(thread)) if dims is None else dims
    return [
        ctx.em.op(f"xor i32 {thread[d]}, {constant[d]}") if constant[d] else thread[d] for d in dims
    ]


def element_offsets(ctx: Context, layout, shape, size: int) -> list[str]:
    """The byte offset, row-major, of the element each register holds (i32 values)."""
    return [
        ctx.em.op(f"mul i32 {row_major(ctx, held_coords(ctx, layout, r), shape)}, {size}")
        for r in range(layout.in_dim_size("register"))
    ]


@lowers("ttg.convert_layout")
def _convert_layout(ctx: Context, op) -> None:
    src_t, dst_t = op.src.type, op.result.type
    src, dst = layout_of(src_t), layout_of(dst_t)
    mapping = register_map(src, dst, lambda c: c)
    if mapping is not None:
        registers = ctx[op.src]
        ctx[op.result] = [registers[r] for r in mapping]
        return
    if convert_with_ldmatrix(ctx, op):
        return
    shape = src_t.shape
    size = bit_width(src_t) // 8
    count = 1
    for extent in shape:
        count *= extent
    ctx.need_shared(count * size)
    em = ctx.em
    for value, offset in zip(ctx[op.src], element_offsets(ctx, src, shape, size)):
        shared_store(ctx, value, src_t.element_type, offset)
    em.barrier()
    ctx[op.result] = [
        shared_load(ctx, dst_t.element_type, offset)
        for offset in element_offsets(ctx, dst, shape, size)
    ]
    em.barrier()
