"""Planning `ttg.convert_layout` from the two linear layouts: renumber, shuffle or round trip.

Pure Python on layouts, so the tests run every plan for every thread (a simulator of the
registers, the shuffles and the shared memory) and check that each destination register gets
the element the destination layout names; the lowering (`convert.py`, `convert_shuffle.py`)
only transcribes the plan. Three plans, cheapest first:

1. **Renumber**: every thread already holds its new elements (the lane and warp bases agree):
   the registers are renumbered, no instruction.
2. **Shuffle**: the warp bases agree, so every element a thread needs is in a lane of its own
   warp: rounds of `shfl.sync.idx` (`convert_lanes.py`). Kept when its shuffles and selects
   cost less than the round trip below, and for 8-bit elements whenever they can go a word
   at a time with one select and one `prmt` a word (`convert_words.py`).
3. **Shared**: a round trip through the scratch in the layout `convert_swizzle.py` chooses:
   vector stores of the source's registers, a barrier, vector loads of the destination's (up
   to 16 bytes each, the widths of the two sides may differ), a barrier. Each element is
   written once: registers and threads that hold copies (the layout's free variables) skip
   their stores, and the destination's repeated registers copy the loaded value. When each
   warp reads only what it wrote (the warps agree and none skips), the barrier between the
   stores and the loads is the warp's own (`bar.warp.sync`). On sm_90 a 16-bit source may
   store by `stmatrix` instead (an accumulator: four lanes' words fill a 16-byte row): in a
   layout made for it (`stmatrix_layout`), where that takes no more wavefronts nor
   instructions than the vector stores and loads of the general layout.

A round trip may go in rounds (`convert_rounds.py`): the same stores, barrier and loads, each
round moving the elements of one value of the round bases through a scratch that holds a
`1 / rounds` part of the tensor, a barrier between rounds. Whether it does is the shared
memory's to say (passes/allocate_shared_memory.py), never the plan's cost: `plan_convert`
picks the plan as for one round; the lowering then plans a round trip again by `plan_shared`
in the rounds it was given room for (by `stmatrix` too, whose round bases may include a
register the general layout keeps for its vectors: convert_rounds.round_bases).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ....errors import InternalError
from ..layouts import LinearLayout
from ..layouts.bits import GF2Solver, xor_bits
from .convert_lanes import Shuffle, plan_shuffle
from .convert_rounds import round_bases
from .convert_swizzle import (
    SharedLayout,
    access_wavefronts,
    choose_shared_layout,
    independent_registers,
    stmatrix_layout,
    stmatrix_wavefronts,
)
from .convert_words import plan_words
from .indexing import redundant_thread_mask, register_coords, register_map
from .stmatrix import StmatrixPlan, plan_stmatrix

_LANE_BITS = 5
# Rough instruction counts the choice between a shuffle and a round trip weighs: a round trip
# pays two barriers and the address arithmetic of each access.
_BARRIERS_COST = 10
_ACCESS_COST = 3


@dataclass(frozen=True)
class Renumber:
    """Destination register i is source register `sources[i]`."""

    sources: tuple[int, ...]


@dataclass(frozen=True)
class Access:
    """One vector access: `registers` in memory order, at element offset `offset ^
    thread_part(tid)` (the thread part of the side's offset layout) in `round`."""

    registers: tuple[int, ...]
    offset: int
    round: int = 0


@dataclass(frozen=True)
class Shared:
    """A round trip through the scratch: `stores` of the source's registers by the threads
    with no `skip_mask` bit set, a barrier, `loads`, a barrier, for each of the `rounds` in
    turn (the accesses of its `round`); destination register r is the loaded register
    `copies[r]`. `store_offsets` / `load_offsets` map (register, lane, warp) to element
    offsets (a round's in their top bits, which the accesses' offsets leave out); each side's
    accesses are vectors of one width. `nbytes`: the scratch, one round's part."""

    store_offsets: LinearLayout
    load_offsets: LinearLayout
    stores: tuple[Access, ...]
    loads: tuple[Access, ...]
    skip_mask: int
    copies: tuple[int, ...]
    nbytes: int
    warp_local: bool  # each warp reads only what it wrote: the first barrier is the warp's
    stmatrix: StmatrixPlan | None = None  # the stores, when `stmatrix` makes them
    rounds: int = 1

    @property
    def store_instructions(self) -> int:
        return len(self.stores) if self.stmatrix is None else len(self.stmatrix.words)

    @property
    def store_vec(self) -> int:
        return len(self.stores[0].registers)

    @property
    def load_vec(self) -> int:
        return len(self.loads[0].registers)

    @property
    def cost(self) -> float:
        barriers = _BARRIERS_COST // 2 if self.warp_local else _BARRIERS_COST
        return _ACCESS_COST * (self.store_instructions + len(self.loads)) + barriers


def _accesses(layout: LinearLayout, offsets: LinearLayout, bits: list[int], scratch: int):
    """The vector accesses of the registers of `layout` holding distinct elements, the
    registers of one access varying along register `bits` (offset bits 0, 1, ...); the
    offset bits from `scratch` (elements) up are the access's round."""
    free = layout.free_variable_masks().get("register", 0)
    along = 0
    for bit in bits:
        along |= 1 << bit
    accesses = []
    for start in range(layout.in_dim_size("register")):
        if start & (free | along):
            continue
        steps = [1 << b for b in bits]
        registers = tuple(start ^ xor_bits(steps, i) for i in range(1 << len(bits)))
        (offset,) = offsets.apply(register=start)
        accesses.append(Access(registers, offset % scratch, offset // scratch))
    return tuple(accesses)


def plan_shared(
    src: LinearLayout, dst: LinearLayout, elem_bytes: int, stmatrix=False, rounds: int = 1
) -> Shared:
    """The round trip through shared memory (always possible); with `stmatrix` (sm_90), its
    stores by that instruction where a layout allowing them costs no more wavefronts; in
    `rounds` (a power of two, at most `convert_rounds.most_rounds`) along the first round
    bases."""
    k = rounds.bit_length() - 1
    bases = round_bases(src, dst, elem_bytes) if rounds > 1 else ()
    shared = choose_shared_layout(src, dst, elem_bytes, bases[:k]) if k <= len(bases) else None
    by_stmatrix = None
    if stmatrix:
        shared, by_stmatrix = _stmatrix_stores(src, dst, elem_bytes, shared, k)
    if rounds != 1 << k or shared is None:
        raise InternalError(f"a conversion cannot go in {rounds} rounds")
    store_offsets = src.compose(shared.offsets)
    load_offsets = dst.compose(shared.offsets)
    numel = 1
    for size in src.out_shape.values():
        numel *= size
    scratch = numel // rounds
    stores = _accesses(src, store_offsets, list(shared.store_bits), scratch)
    loads = _accesses(dst, load_offsets, list(shared.load_bits), scratch)
    loaded = {r for access in loads for r in access.registers}
    copies = []
    first: dict[tuple[int, ...], int] = {}
    for r, coords in enumerate(register_coords(dst)):
        if r in loaded:
            first.setdefault(coords, r)
    for coords in register_coords(dst):
        copies.append(first[coords])
    skip = redundant_thread_mask(src)
    # Every warp stores all it holds (no warp bits skip) and needs only what it holds.
    warp_local = not skip >> _LANE_BITS and _within_warps(src, dst)
    return Shared(
        store_offsets,
        load_offsets,
        stores,
        loads,
        skip,
        tuple(copies),
        scratch * elem_bytes,
        warp_local,
        by_stmatrix,
        rounds,
    )


def _stmatrix_stores(src, dst, elem_bytes: int, shared: SharedLayout | None, k: int = 0):
    """(layout, `stmatrix` stores) of the round trip in `2 ** k` rounds: the
    `stmatrix_layout` (plain or `.trans`) whose stores fit the instruction, where no lane
    skips its stores (the instruction is the whole warp's), if it takes no more wavefronts nor
    instructions than `shared` (the fewest of both of the two; None: the general layout cannot
    go in those rounds); else (`shared`, None)."""
    if redundant_thread_mask(src) & ((1 << _LANE_BITS) - 1):
        return shared, None
    best, chosen = None, (shared, None)
    if shared is not None:
        waves = access_wavefronts(src, shared.offsets, shared.store_bits, elem_bytes)
        waves += access_wavefronts(dst, shared.offsets, shared.load_bits, elem_bytes)
        accesses = _accesses_of(src, shared.store_bits) + _accesses_of(dst, shared.load_bits)
        best = (waves, accesses)
    for trans in (False, True):
        bases = round_bases(src, dst, elem_bytes, trans)
        if k > len(bases):
            continue
        candidate = stmatrix_layout(src, dst, elem_bytes, trans, bases[:k])
        if candidate is None:
            continue
        stores = plan_stmatrix(src.compose(candidate.offsets), 8 * elem_bytes, 1 << k)
        if stores is None or stores.trans != trans:
            continue
        matrices = stores.matrices * len(stores.words)
        waves = stmatrix_wavefronts(src, candidate.offsets, matrices, trans)
        waves += access_wavefronts(dst, candidate.offsets, candidate.load_bits, elem_bytes)
        cost = (waves, len(stores.words) + _accesses_of(dst, candidate.load_bits))
        if best is None or (cost[0] <= best[0] and cost[1] <= best[1]):
            best, chosen = cost, (candidate, stores)
    return chosen


def _accesses_of(layout: LinearLayout, bits) -> int:
    """A thread's vector accesses of its distinct registers, the vectors along `bits`."""
    return 1 << (len(independent_registers(layout)) - len(bits))


def _within_warps(src: LinearLayout, dst: LinearLayout) -> bool:
    """Whether every thread's new elements are held in its own warp (the warp bases agree and
    the destination's register and lane bases are spanned by the source's)."""
    if src.bases("warp") != dst.bases("warp"):
        return False
    solver = GF2Solver(list(src.packed_bases("register")) + list(src.packed_bases("lane")))
    wanted = list(dst.packed_bases("register")) + list(dst.packed_bases("lane"))
    return all(solver.solve(basis) is not None for basis in wanted)


@lru_cache(maxsize=1024)
def plan_convert(
    src: LinearLayout, dst: LinearLayout, bits: int, stmatrix: bool = False
) -> Renumber | Shuffle | Shared:
    """The cheapest plan converting `src` to `dst` for elements of `bits` bits in memory
    (i1 as 8, pointers as 64). `stmatrix` (sm_90) lets a round trip store by that instruction;
    whether the plan is a round trip does not depend on it (passes/scratch_size.py asks
    without). A round trip is planned in one round; `plan_shared` plans it in more."""
    if src.out_shape != dst.out_shape:
        raise InternalError("convert_layout between layouts of different shapes")
    mapping = register_map(src, dst, lambda c: c)
    if mapping is not None:
        return Renumber(tuple(mapping))
    shuffle = plan_shuffle(src, dst, bits)
    if shuffle is not None and _by_words(shuffle):
        return shuffle
    shared = plan_shared(src, dst, bits // 8)
    if shuffle is not None and shuffle.cost <= shared.cost:
        return shuffle
    return plan_shared(src, dst, bits // 8, stmatrix=True) if stmatrix else shared


def _by_words(shuffle: Shuffle) -> bool:
    """Whether the shuffle moves its 8-bit elements a word at a time for a select, a shuffle
    and a `prmt` a word: less than a round trip, which assembles the same words to store
    them, then stores, waits and loads (the element-wise costs above leave that out)."""
    words = plan_words(shuffle)
    return words is not None and words.whole and shuffle.send.selects <= 1
