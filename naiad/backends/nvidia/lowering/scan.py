"""`tt.scan`: an inclusive scan along `axis`, one bit of the position at a time.

Along the scanned axis, every bit of an element's position belongs to one input of the
operand's linear layout: a register bit (the partner element is in the same thread), a lane bit
(in the lane `lane ^ 2^j`: `shfl.sync.bfly`) or a warp bit (in another warp: through the shared
scratch). That holds for every layout whose bases move along the axis alone or not at all, as
blocked layouts do; others are refused.

Each element keeps two partial results: `S`, the scan of its aligned block of 2^b positions up
to itself, and `T`, the whole block's combination. Step b merges each block with its partner
block (the positions differing in bit b): the element of the upper block (bit b set; the lower
one for a `reverse` scan) prefixes its `S` with the partner's `T`, and both blocks' `T` become
`T(lower) + T(upper)`, in that order, since a combine is associative but need not commute.
After the last bit `S` is the inclusive scan. Where bit b is a lane or warp bit, whether the
element is upper is a runtime fact of the thread, so both orders are combined and one selected.
The steps run from the lowest bit up: registers, lanes and warps in whatever order the layout
gives them; the butterfly needs no `shfl.up` boundary handling.
"""

from __future__ import annotations

from ....passes.diagnostics import unsupported
from . import barriers
from .context import Context, lowers
from .convert import held_coords, row_major, shared_load, shared_store
from .emitter import bit_width, llvm_type
from .indexing import layout_of, register_coords, unique_registers
from .reduce import combine, shuffle_xor


def position_bits(layout, axis: int, size: int) -> list[tuple[str, int]] | str:
    """For each bit of the position along `axis` (of extent `size`), the (input, bit index)
    whose basis is it; or why the layout cannot be scanned so."""
    owners: dict[int, tuple[str, int]] = {}
    for name in ("register", "lane", "warp"):
        for i, basis in enumerate(layout.bases(name)):
            step = basis[axis]
            others = any(c for d, c in enumerate(basis) if d != axis)
            if step == 0:
                continue
            if others or step & (step - 1) or step in owners:
                return "a scan over a layout mixing dimensions along its axis"
            owners[step] = (name, i)
    bits = []
    for b in range(size.bit_length() - 1):
        if 1 << b not in owners:
            return "a scan over a layout that does not cover its axis"
        bits.append(owners[1 << b])
    return bits


def _select(ctx: Context, condition: str, yes: list[str], no: list[str], srcs) -> list[str]:
    return [
        ctx.em.op(f"select i1 {condition}, {llvm_type(s.type)} {a}, {llvm_type(s.type)} {b}")
        for a, b, s in zip(yes, no, srcs)
    ]


def _merge(ctx: Context, op, s, t, partner_t, upper: str | bool, reverse: bool):
    """One step for one element: (S, T) from its own and its partner block's T."""
    srcs = list(op.srcs)
    if reverse:  # the block that comes first in scan order is the one with bit b set
        upper = (not upper) if isinstance(upper, bool) else ctx.em.op(f"xor i1 {upper}, true")
    if isinstance(upper, bool):
        if upper:
            return combine(ctx, op, partner_t, s), combine(ctx, op, partner_t, t)
        return s, combine(ctx, op, t, partner_t)
    prefixed = combine(ctx, op, partner_t, s)
    t_upper = combine(ctx, op, partner_t, t)
    t_lower = combine(ctx, op, t, partner_t)
    return (
        _select(ctx, upper, prefixed, s, srcs),
        _select(ctx, upper, t_upper, t_lower, srcs),
    )


def _thread_bit(ctx: Context, bit: int) -> str:
    """i1: bit `bit` of this thread's index is set."""
    em = ctx.em
    key = ("tid-bit", bit)
    if key not in em.cache:
        shifted = em.entry_op(f"lshr i32 {em.tid()}, {bit}")
        em.cache[key] = em.entry_op(f"trunc i32 {shifted} to i1")
    return em.cache[key]


def _warp_partner(ctx: Context, op, layout, axis: int, regs, t_values, bit: int):
    """The partner block's T for every register, through the shared scratch. T is the same
    for every element of an aligned block of 2^bit positions, so the scratch holds one T per
    block (its axis extent shape[axis] >> bit) and a thread writes, and reads its partner's,
    once for all its registers in one block: registers whose own coordinates agree but for
    the bits below `bit` of the position share the slot."""
    srcs = list(op.srcs)
    shape = list(srcs[0].type.shape)
    blocks = list(shape)
    blocks[axis] = shape[axis] >> bit
    numel = 1
    for extent in blocks:
        numel *= extent
    sizes = [bit_width(s.type) // 8 for s in srcs]
    bases, total = [], 0
    for size in sizes:
        bases.append(total)
        total += (numel * size + 7) // 8 * 8
    ctx.need_shared(total)
    barriers.pay(ctx)  # an earlier user's reads of the scratch may be pending
    em = ctx.em
    held = register_coords(layout)

    def block(r: int) -> tuple:
        """Register r's block of 2^bit positions, in its own coordinates (the thread's part
        of every register's coordinates is the same)."""
        c = held[r]
        return (*c[:axis], c[axis] >> bit, *c[axis + 1 :])

    first: dict[tuple, int] = {}
    for r in regs:
        first.setdefault(block(r), r)
    own, partner = {}, {}
    for r in first.values():
        coords = held_coords(ctx, layout, r)
        coords[axis] = em.op(f"lshr i32 {coords[axis]}, {bit}") if bit else coords[axis]
        own[r] = row_major(ctx, coords, blocks)
        coords[axis] = em.op(f"xor i32 {coords[axis]}, 1")
        partner[r] = row_major(ctx, coords, blocks)
    for r in own:
        for value, src, base, size in zip(t_values[r], srcs, bases, sizes):
            shared_store(ctx, value, src.type.element_type, _offset(ctx, own[r], size, base))
    em.barrier()
    loaded = {
        r: [
            shared_load(ctx, src.type.element_type, _offset(ctx, partner[r], size, base))
            for src, base, size in zip(srcs, bases, sizes)
        ]
        for r in partner
    }
    barriers.owe(ctx)
    return {r: loaded[first[block(r)]] for r in regs}


def _offset(ctx: Context, index: str, size: int, base: int) -> str:
    return ctx.em.op(f"add i32 {ctx.em.op(f'mul i32 {index}, {size}')}, {base}")


@lowers("tt.scan")
def _scan(ctx: Context, op) -> None:
    srcs = list(op.srcs)
    axis = int(op.axis.value)
    reverse = bool(op.reverse.value)
    layout = layout_of(srcs[0].type)
    coords = register_coords(layout)
    regs = unique_registers(layout)
    s = {r: [ctx[v][r] for v in srcs] for r in regs}
    t = dict(s)
    bits = position_bits(layout, axis, srcs[0].type.shape[axis])
    if isinstance(bits, str):
        unsupported(op, bits)
    for step, (name, index) in enumerate(bits):
        if name == "register":
            partner_t = {r: t[r ^ (1 << index)] for r in regs}
        elif name == "lane":
            partner_t = {
                r: [shuffle_xor(ctx, v, src.type, 1 << index) for v, src in zip(t[r], srcs)]
                for r in regs
            }
        else:
            partner_t = _warp_partner(ctx, op, layout, axis, regs, t, step)
        new_s, new_t = {}, {}
        for r in regs:
            if name == "register":
                upper = bool(coords[r][axis] >> step & 1)
            else:
                upper = _thread_bit(ctx, index + (5 if name == "warp" else 0))
            new_s[r], new_t[r] = _merge(ctx, op, s[r], t[r], partner_t[r], upper, reverse)
        s, t = new_s, new_t
    first = {}
    for r in regs:
        first.setdefault(coords[r], r)
    for k, result in enumerate(op.results):
        ctx[result] = [s[first[c]][k] for c in coords]
