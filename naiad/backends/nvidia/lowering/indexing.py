"""Which element each register of each thread holds, as arithmetic on the thread index.

A tensor's linear layout maps (register, lane, warp) to coordinates by XOR of bases. With
`lane = tid % 32` and `warp = tid / 32`, the lane and warp bits are simply the bits of `tid`,
so the thread's part of a coordinate is the XOR of the `tid`-bit bases, and register r adds
(XOR) a constant: `coord(r) = thread_part(tid) ^ register_part(r)`.

The thread part is planned once per layout as a few terms `((tid >> shift) & mask) * scale`,
one per run of consecutive `tid` bits whose bases are 1, 2, 4, ... times a power of two (a
blocked layout's lanes are one run: `(tid & 31) << 2`). The same plan is evaluated in Python
by the tests for every thread, so what the generated code computes is checked against the
layout itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....errors import InternalError
from ..layouts import LinearLayout, to_linear_layout

WARP_SIZE = 32
_LANE_BITS = 5


@dataclass(frozen=True)
class Term:
    """`((tid >> shift) & mask) * scale`."""

    shift: int
    mask: int
    scale: int

    def value(self, tid: int) -> int:
        return ((tid >> self.shift) & self.mask) * self.scale


def layout_of(t) -> LinearLayout:
    """The linear layout of a tensor type (its encoding over its shape)."""
    return to_linear_layout(t.encoding, t.shape)


def thread_bases(layout: LinearLayout) -> list[tuple[int, ...]]:
    """The basis of each bit of `tid`: the lane bits, then the warp bits."""
    lanes = layout.bases("lane")
    if len(lanes) != _LANE_BITS:
        raise InternalError(f"a layout of {1 << len(lanes)} lanes; warps have {WARP_SIZE}")
    return lanes + layout.bases("warp")


def plan_dimension(bases: list[tuple[int, ...]], dim: int) -> tuple[Term, ...]:
    """The terms whose XOR is coordinate `dim` of the thread `tid` (bit i of tid selects
    bases[i])."""
    terms = []
    i = 0
    while i < len(bases):
        c = bases[i][dim]
        if c == 0:
            i += 1
            continue
        if c & (c - 1):  # not a power of two: this bit alone
            terms.append(Term(i, 1, c))
            i += 1
            continue
        run = 1
        while i + run < len(bases) and bases[i + run][dim] == c << run:
            run += 1
        terms.append(Term(i, (1 << run) - 1, c))
        i += run
    return tuple(terms)


def thread_plan(layout: LinearLayout) -> tuple[tuple[Term, ...], ...]:
    """Per output dimension, the terms of the thread part of the coordinate."""
    bases = thread_bases(layout)
    return tuple(plan_dimension(bases, k) for k in range(len(layout.out_dims)))


def evaluate(plan, tid: int) -> tuple[int, ...]:
    """The thread part of every coordinate for thread `tid`, as the emitted code computes."""
    coords = []
    for terms in plan:
        value = 0
        for term in terms:
            value ^= term.value(tid)
        coords.append(value)
    return tuple(coords)


def register_coords(layout: LinearLayout) -> list[tuple[int, ...]]:
    """The register part of the coordinates of every register."""
    return [layout.apply(register=r) for r in range(layout.in_dim_size("register"))]


def emit_thread_coords(em, layout: LinearLayout) -> list[str]:
    """The thread part of each coordinate as i32 values in the entry block (once per
    layout)."""
    key = ("coords", layout)
    if key in em.cache:
        return em.cache[key]
    tid = em.tid()
    coords = []
    for terms in thread_plan(layout):
        value = "0"
        for term in terms:
            part = em.entry_op(f"lshr i32 {tid}, {term.shift}") if term.shift else tid
            part = em.entry_op(f"and i32 {part}, {term.mask}")
            if term.scale & (term.scale - 1) == 0:
                if term.scale > 1:
                    shift = term.scale.bit_length() - 1
                    part = em.entry_op(f"shl nuw nsw i32 {part}, {shift}")
            else:
                part = em.entry_op(f"mul nuw nsw i32 {part}, {term.scale}")
            value = part if value == "0" else em.entry_op(f"xor i32 {value}, {part}")
        coords.append(value)
    em.cache[key] = coords
    return coords


def redundant_thread_mask(layout: LinearLayout) -> int:
    """The `tid` bits of threads holding copies of elements another thread holds (a store
    or a shared-memory write needs only the threads where these bits are zero)."""
    masks = layout.free_variable_masks()
    return masks.get("lane", 0) | (masks.get("warp", 0) << _LANE_BITS)


def unique_registers(layout: LinearLayout) -> list[int]:
    """The registers that do not repeat an element held by a lower register."""
    redundant = layout.free_variable_masks().get("register", 0)
    return [r for r in range(layout.in_dim_size("register")) if not r & redundant]


def register_map(src: LinearLayout, dst: LinearLayout, transform) -> list[int] | None:
    """For each register of `dst`, the register of `src` that holds the element
    `transform(coords)` for the same thread; None when threads do not hold matching elements
    (the thread bases differ under `transform`, which must be XOR-linear)."""
    for name in ("lane", "warp"):
        if [transform(b) for b in dst.bases(name)] != src.bases(name):
            return None
    table: dict[tuple[int, ...], int] = {}
    for r, coords in enumerate(register_coords(src)):
        table.setdefault(coords, r)
    mapping = []
    for coords in register_coords(dst):
        found = table.get(transform(coords))
        if found is None:
            return None
        mapping.append(found)
    return mapping
