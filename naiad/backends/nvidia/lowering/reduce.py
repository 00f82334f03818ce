"""`tt.reduce`: within each thread, across the lanes of a warp, then across warps.

Read from the operand's linear layout, with `axis` the reduced dimension:

1. Registers: a thread's registers whose coordinates differ only along `axis` combine as a
   tree of adjacent pairs in register order, ((r0 + r1) + (r2 + r3)), Triton's order: a chain
   of log2(n) dependent steps instead of n - 1 (registers repeating an element are left out,
   or a sum would count it twice).
2. Lanes: each lane bit whose basis moves along `axis` is a butterfly step
   (`shfl.sync.bfly`, highest bit first, as Triton's warp reduction); after it every lane
   holds the combination of the lanes it was paired with. Lane bits whose basis is zero hold
   copies and are skipped.
3. Warps: when warp bits move along `axis`, each warp writes its partial result to the shared
   scratch, `[warp position along axis][result element]`, and after a barrier every thread
   reads all the partials of its elements and combines them as a butterfly over warp
   positions would (position k with k + W/2 first, then k + W/4, ...): the bits Triton's
   lanes get, in log2(W) dependent steps. The scratch is free again once every warp has read
   it: the barrier that says so is owed (`barriers.py`), paid before the next write of
   shared memory, not on the row's critical path.

The combine region is lowered inline on scalars for every pair it combines (several operands
reduce together, as `argmax` does). The result registers follow the result's layout (the
slice of the operand's along `axis`, or a scalar).
"""

from __future__ import annotations

from ....errors import InternalError
from ....passes.diagnostics import unsupported
from . import barriers
from .context import Context, lowers
from .convert import held_coords, row_major, shared_load, shared_store
from .convert_shuffle import warp_shuffle
from .emitter import bit_width
from .indexing import layout_of, register_coords, unique_registers


def combine(ctx: Context, op, left: list[str], right: list[str]) -> list[str]:
    """The combine region applied to (left..., right...), on scalars."""
    block = op.regions[0].block
    for arg, value in zip(block.arguments, left + right):
        ctx[arg] = [value]
    results = None
    for inner in block.ops:
        if inner.name in ("tt.reduce.return", "tt.scan.return"):
            results = [ctx[v][0] for v in inner.operands]
        else:
            ctx.lower_op(inner)
    if results is None:
        raise InternalError(f"`{op.name}` has no return in its region")
    return results


def shuffle_xor(ctx: Context, value: str, t, lane_mask: int) -> str:
    """`value` of the lane `lane ^ lane_mask` (all 32 lanes take part)."""
    return warp_shuffle(ctx, value, t, "bfly", str(lane_mask))


@lowers("tt.reduce")
def _reduce(ctx: Context, op) -> None:
    srcs = list(op.srcs)
    axis = int(op.axis.value)
    layout = layout_of(srcs[0].type)
    shape = srcs[0].type.shape
    kept = [d for d in range(len(shape)) if d != axis]
    coords = register_coords(layout)
    # 1. within the thread
    members: dict[tuple[int, ...], list[list[str]]] = {}
    representatives: dict[tuple[int, ...], int] = {}  # a register of each group
    seen = set()
    for r in unique_registers(layout):
        if coords[r] in seen:
            continue
        seen.add(coords[r])
        key = tuple(coords[r][d] for d in kept)
        members.setdefault(key, []).append([ctx[s][r] for s in srcs])
        representatives.setdefault(key, r)
    groups = {key: _adjacent_pairs(ctx, op, values) for key, values in members.items()}
    # 2. across lanes, 3. across warps
    for bit in reversed(range(len(layout.bases("lane")))):
        basis = layout.bases("lane")[bit]
        if basis[axis] == 0:
            continue
        if any(basis[d] for d in kept):
            unsupported(op, "a reduction over a layout mixing dimensions within lanes")
        for key, values in groups.items():
            other = [shuffle_xor(ctx, v, s.type, 1 << bit) for v, s in zip(values, srcs)]
            groups[key] = combine(ctx, op, values, other)
    _across_warps(ctx, op, layout, axis, kept, groups, representatives)
    _results(ctx, op, kept, groups)


def _across_warps(ctx: Context, op, layout, axis: int, kept, groups, representatives) -> None:
    warp_bases = layout.bases("warp")
    moving = [i for i, b in enumerate(warp_bases) if b[axis]]
    if not moving:
        return
    if any(warp_bases[i][d] for i in moving for d in kept):
        unsupported(op, "a reduction over a layout mixing dimensions within warps")
    srcs = list(op.srcs)
    shape = srcs[0].type.shape
    kept_shape = tuple(shape[d] for d in kept)
    elements = 1
    for size in kept_shape:
        elements *= size
    partials = 1 << len(moving)
    em = ctx.em
    tid = em.tid()
    # The warp's position along the axis: its moving bits, packed.
    position = "0"
    for k, i in enumerate(moving):
        bit = em.op(f"and i32 {em.op(f'lshr i32 {tid}, {5 + i}')}, 1")
        shifted = em.op(f"shl i32 {bit}, {k}") if k else bit
        position = shifted if position == "0" else em.op(f"or i32 {position}, {shifted}")
    sizes = [bit_width(s.type) // 8 for s in srcs]
    offsets, total = [], 0
    for size in sizes:  # one array per operand, each aligned to 8 bytes
        offsets.append(total)
        total += (partials * elements * size + 7) // 8 * 8
    ctx.need_shared(total)
    barriers.pay(ctx)  # an earlier reduction's partials may still be read
    slots = {}
    for key, values in groups.items():
        index = row_major(ctx, held_coords(ctx, layout, representatives[key], kept), kept_shape)
        slots[key] = index
        slot = em.op(f"add i32 {em.op(f'mul i32 {position}, {elements}')}, {index}")
        for value, src, base, size in zip(values, srcs, offsets, sizes):
            shared_store(ctx, value, src.type, _slot_offset(ctx, base, slot, size))
    em.barrier()
    for key in groups:
        loaded = []
        for k in range(partials):
            slot = em.op(f"add i32 {slots[key]}, {k * elements}")
            loaded.append(
                [
                    shared_load(ctx, src.type, _slot_offset(ctx, base, slot, size))
                    for src, base, size in zip(srcs, offsets, sizes)
                ]
            )
        groups[key] = _halving(ctx, op, loaded)
    barriers.owe(ctx)


def _adjacent_pairs(ctx: Context, op, items: list[list[str]]) -> list[str]:
    """Combine adjacent pairs level by level, ((a . b) . (c . d)); an odd last item moves up
    a level unchanged."""
    while len(items) > 1:
        paired = [combine(ctx, op, items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = paired + items[len(items) - len(items) % 2 :]
    return items[0]


def _halving(ctx: Context, op, items: list[list[str]]) -> list[str]:
    """Combine item k with item k + n/2 level by level (n a power of 2): the order in which a
    butterfly (xor n/2 first) combines them, as seen by the lowest position."""
    while len(items) > 1:
        half = len(items) // 2
        items = [combine(ctx, op, items[k], items[k + half]) for k in range(half)]
    return items[0]


def _slot_offset(ctx: Context, base: int, slot: str, size: int) -> str:
    return ctx.em.op(f"add i32 {ctx.em.op(f'mul i32 {slot}, {size}')}, {base}")


def _results(ctx: Context, op, kept: list[int], groups) -> None:
    results = list(op.results)
    if not kept:  # a rank-1 operand: one scalar per operand
        (values,) = groups.values()
        for result, value in zip(results, values):
            ctx[result] = [value]
        return
    out_layout = layout_of(results[0].type)
    for k, result in enumerate(results):
        registers = []
        for coords in register_coords(out_layout):
            values = groups.get(tuple(coords))
            if values is None:
                unsupported(op, "a reduction whose result layout is not the operand's slice")
            registers.append(values[k])
        ctx[result] = registers
