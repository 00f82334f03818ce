"""Ops that move elements between threads: `tt.join`, `tt.split`, `tt.trans`, `tt.cat`,
`tt.gather`, `tt.histogram`, and non-splat tensor constants.

When the operand and result layouts give every thread the elements it needs
(`indexing.register_map`: `trans` of a layout, `join`/`split` along a register dimension), the
op only renumbers registers. Otherwise the elements go through the shared scratch (`exchange`):
every thread writes the elements it holds at their row-major position, a barrier, every thread
reads the element each of its result registers names, and a barrier frees the scratch - correct
for any pair of layouts, as `ttg.convert_layout`'s general path.

`tt.histogram` counts in shared memory with `atomicrmw add` (one per distinct element whose
mask is on and whose value is a bin), `tt.gather` reads the source at the indices it is given,
and a non-splat constant is a table in global memory read at each element's position.
"""

from __future__ import annotations

from ....ir import DenseElementsAttr
from . import barriers
from .context import Context, lowers
from .convert import held_coords, row_major, shared_load, shared_store
from .emitter import SHARED_PTR, bit_width, literal, llvm_type
from .guards import predicated
from .indexing import layout_of, register_coords, register_map, unique_registers
from .memory import store_predicate


def _numel(shape) -> int:
    count = 1
    for extent in shape:
        count *= extent
    return count


def exchange(ctx: Context, sources, dst_type, source_index) -> list[str]:
    """The registers of a tensor of `dst_type` whose register r, at coordinates `c`, holds
    element `source_index(c, r)` (an i32 value; `c` are i32 values) of the sources' elements
    laid out row-major one after the other. `sources` are (registers, tensor type) pairs."""
    elem = dst_type.element_type
    size = bit_width(elem) // 8
    total = sum(_numel(t.shape) for _, t in sources)
    ctx.need_shared(total * size)
    barriers.pay(ctx)  # an earlier user's reads of the scratch may be pending
    em = ctx.em
    base = 0
    for registers, t in sources:
        layout = layout_of(t)
        for r in unique_registers(layout):
            index = row_major(ctx, held_coords(ctx, layout, r), t.shape)
            if base:
                index = em.op(f"add i32 {index}, {base}")
            shared_store(ctx, registers[r], elem, em.op(f"mul i32 {index}, {size}"))
        base += _numel(t.shape)
    em.barrier()
    layout = layout_of(dst_type)
    values = []
    for r in range(layout.in_dim_size("register")):
        index = source_index(held_coords(ctx, layout, r), r)
        values.append(shared_load(ctx, elem, em.op(f"mul i32 {index}, {size}")))
    em.barrier()
    return values


def _renumbered(ctx: Context, src, dst_type, transform) -> list[str] | None:
    """The result registers copied from `src`'s, when every thread already holds them."""
    mapping = register_map(layout_of(src.type), layout_of(dst_type), transform)
    if mapping is None:
        return None
    registers = ctx[src]
    return [registers[r] for r in mapping]


@lowers("tt.trans")
def _trans(ctx: Context, op) -> None:
    order = [int(x) for x in op.order.values]
    src_shape = op.src.type.shape

    def transform(coords):  # result coordinates -> source coordinates
        out = [0] * len(coords)
        for i, d in enumerate(order):
            out[d] = coords[i]
        return tuple(out)

    moved = _renumbered(ctx, op.src, op.result.type, transform)
    if moved is None:

        def index(coords, _):
            return row_major(ctx, list(transform(coords)), src_shape)

        moved = exchange(ctx, [(ctx[op.src], op.src.type)], op.result.type, index)
    ctx[op.result] = moved


@lowers("tt.join")
def _join(ctx: Context, op) -> None:
    """result[..., j] = (lhs, rhs)[j][...]. When the result's thread bases are the operands'
    (the new dimension lies in registers, as layout inference makes it), each result register
    is a register of one operand; else lhs then rhs through the scratch."""
    t = op.lhs.type
    dst_layout = layout_of(op.result.type)
    threads = [b for name in ("lane", "warp", "block") for b in dst_layout.bases(name)]
    if op.rhs.type == t and not any(b[-1] for b in threads):  # the half is a register's
        mapping = register_map(layout_of(t), dst_layout, lambda c: c[:-1])
        if mapping is not None:
            halves = (ctx[op.lhs], ctx[op.rhs])
            coords = register_coords(dst_layout)
            ctx[op.result] = [halves[coords[r][-1]][m] for r, m in enumerate(mapping)]
            return
    half = _numel(t.shape)

    def index(coords, _):
        flat = row_major(ctx, coords[:-1], t.shape)
        upper = ctx.em.op(f"mul i32 {coords[-1]}, {half}")
        return ctx.em.op(f"add i32 {flat}, {upper}")

    sources = [(ctx[op.lhs], t), (ctx[op.rhs], op.rhs.type)]
    ctx[op.result] = exchange(ctx, sources, op.result.type, index)


@lowers("tt.split")
def _split(ctx: Context, op) -> None:
    """When the halves' thread bases are the source's (the size-2 dimension lies in
    registers), each half takes the registers holding its elements; else the scratch."""
    shape = op.src.type.shape
    src_layout = layout_of(op.src.type)
    mapping = register_map(src_layout, layout_of(op.outLHS.type), lambda c: (*c, 0))
    table = {coords: r for r, coords in reversed(list(enumerate(register_coords(src_layout))))}
    registers = ctx[op.src]
    for j, result in enumerate((op.outLHS, op.outRHS)):
        if mapping is not None:
            coords = register_coords(src_layout)
            upper = [table.get((*coords[r][:-1], coords[r][-1] ^ j)) for r in mapping]
            if None not in upper:
                ctx[result] = [registers[r] for r in upper]
                continue

        def index(coords, _, j=j):
            return row_major(ctx, [*coords, str(j)], shape)

        ctx[result] = exchange(ctx, [(registers, op.src.type)], result.type, index)


@lowers("tt.cat")
def _cat(ctx: Context, op) -> None:
    """lhs then rhs along dimension 0 (the interpreter's order; Triton leaves it open)."""
    sources = [(ctx[op.lhs], op.lhs.type), (ctx[op.rhs], op.rhs.type)]
    shape = op.result.type.shape
    ctx[op.result] = exchange(
        ctx, sources, op.result.type, lambda coords, _: row_major(ctx, coords, shape)
    )


@lowers("tt.gather")
def _gather(ctx: Context, op) -> None:
    """result[c] = src[c with c[axis] = indices[c]]."""
    axis = int(op.axis.value)
    shape = op.src.type.shape
    indices = ctx[op.indices]
    kind = llvm_type(op.indices.type)
    width = int(kind[1:])

    def index(coords, r):
        value = indices[r]
        if width > 32:
            value = ctx.em.op(f"trunc {kind} {value} to i32")
        elif width < 32:
            value = ctx.em.op(f"sext {kind} {value} to i32")
        coords = list(coords)
        coords[axis] = value
        return row_major(ctx, coords, shape)

    ctx[op.result] = exchange(ctx, [(ctx[op.src], op.src.type)], op.result.type, index)


@lowers("tt.histogram")
def _histogram(ctx: Context, op) -> None:
    """Bins counted in the scratch: zeroed, one shared atomic add per distinct element in
    range, then read out in the result's layout."""
    em = ctx.em
    t = op.src.type
    bins = op.result.type.shape[0]
    ctx.need_shared(bins * 4)
    threads = 32 * ctx.num_warps
    tid = em.tid()
    for start in range(0, bins, threads):
        slot = em.op(f"add i32 {tid}, {start}")
        inside = em.op(f"icmp ult i32 {slot}, {bins}")
        offset = em.op(f"mul i32 {slot}, 4")
        predicated(
            ctx,
            inside,
            lambda offset=offset: shared_store(ctx, "0", op.result.type.element_type, offset),
        )
    em.barrier()
    kind = llvm_type(t)
    masks = ctx[op.mask] if getattr(op, "mask", None) is not None else None
    values = ctx[op.src]
    for r in unique_registers(layout_of(t)):
        wide = values[r] if kind == "i64" else em.op(f"sext {kind} {values[r]} to i64")
        inside = em.op(f"icmp ult i64 {wide}, {bins}")
        if masks is not None:
            inside = em.op(f"and i1 {inside}, {masks[r]}")
        inside = store_predicate(ctx, t, inside)
        slot = em.op(f"trunc i64 {wide} to i32")

        def count(slot=slot):
            address = em.shared_address(em.op(f"mul i32 {slot}, 4"))
            em.op(f"atomicrmw add {SHARED_PTR} {address}, i32 1 monotonic, align 4")

        predicated(ctx, inside, count, "hist")
    em.barrier()
    out = layout_of(op.result.type)
    ctx[op.result] = [
        shared_load(ctx, op.result.type.element_type, em.op(f"mul i32 {c}, 4"))
        for c in (held_coords(ctx, out, r)[0] for r in range(out.in_dim_size("register")))
    ]
    em.barrier()


def constant_table(ctx: Context, op) -> None:
    """A non-splat tensor constant: each register reads its element from a global table."""
    value: DenseElementsAttr = op.value
    t = op.result.type
    elem = llvm_type(t)
    memory = "i8" if elem == "i1" else elem
    items = ", ".join(
        f"{memory} {int(bool(v)) if elem == 'i1' else literal(v, t)}" for v in value.values
    )
    name = f"@constant{len(ctx.em.declarations)}"
    count = len(value.values)
    ctx.em.declare(
        name, f"{name} = internal addrspace(1) constant [{count} x {memory}] [{items}], align 16"
    )
    layout = layout_of(t)
    registers = []
    for r in range(layout.in_dim_size("register")):
        index = row_major(ctx, held_coords(ctx, layout, r), t.shape)
        address = ctx.em.op(
            f"getelementptr inbounds {memory}, ptr addrspace(1) {name}, i32 {index}"
        )
        loaded = ctx.em.op(f"load {memory}, ptr addrspace(1) {address}")
        if elem == "i1":
            loaded = ctx.em.op(f"trunc i8 {loaded} to i1")
        registers.append(loaded)
    ctx[op.result] = registers


def relayout(ctx: Context, op) -> list[str]:
    """`tt.broadcast`, `tt.expand_dims` or `tt.reshape` between layouts that do not give
    every thread the elements it needs: through the scratch."""
    src_t, dst_t = op.src.type, op.result.type
    if op.name == "tt.reshape":  # row-major in, row-major out: the same flat index

        def index(coords, _):
            return row_major(ctx, coords, dst_t.shape)

    elif op.name == "tt.expand_dims":
        axis = int(op.axis.value)

        def index(coords, _):
            return row_major(ctx, coords[:axis] + coords[axis + 1 :], src_t.shape)

    else:  # broadcast: the broadcast dimensions read position 0

        def index(coords, _):
            kept = [c if s != 1 else "0" for c, s in zip(coords, src_t.shape)]
            return row_major(ctx, kept, src_t.shape)

    return exchange(ctx, [(ctx[op.src], src_t)], dst_t, index)


@lowers("tt.unsplat")
def _unsplat(ctx: Context, op) -> None:
    """Every thread holds the one element (a one-element layout broadcasts it)."""
    ctx[op.result] = [ctx[op.src][0]]
