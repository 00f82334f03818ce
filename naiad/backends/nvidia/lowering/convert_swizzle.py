"""The shared-memory layout of a `ttg.convert_layout` round trip: vector width and XOR swizzle.

A round trip writes the source's registers into the scratch and reads the destination's back.
Its shared layout `T` (tensor coordinates -> element offset, linear over GF(2) like every
layout here) decides how fast both halves go:

- **Vectors.** The lowest offset bits are the *vector bases*: register bases that both layouts
  hold (as independent, non-repeating registers), then, up to 16 bytes, more registers of the
  one side whose access count that cuts most. The registers along them are consecutive in
  shared memory, so each side moves its prefix of them with one `st.shared.v*` /
  `ld.shared.v*` (a transposition, with nothing in common, stores 16-byte vectors and loads
  scalars). Every other basis of a side must map to offsets with its vector's low bits zero
  (else a vector would straddle two), which holds unless a lane or warp repeats a vector
  register; the width is lowered until it does.
- **Banks.** Shared memory has 32 banks of 4 bytes; a warp's access of `w` bytes per lane is
  served in groups of `128 / max(w, 4)` consecutive lanes (all 32 for 4 bytes or less). Within
  a group, lanes conflict when they reach the same bank in different 4-byte words (or vector
  slots). Over GF(2) the group's lanes map to offsets `o(lane)`; with `slot` the bits that pick
  the bank (the offset bits from the word, or the vector, up to 128 bytes), the accesses take
  `2 ** (rank(o >> lo) - rank(slot(o)))` wavefronts: 1 when the group's lanes differ in their
  bank wherever they differ in their word.
- **Swizzle.** The unswizzled layout lists the vector bases, then one side's lane, register
  and warp bases, then the remaining coordinate bits (so that side's accesses are naturally
  conflict-free); then each offset bit above the 128-byte row XORs a chosen value into the slot
  bits, as the `#ttg.swizzled_shared` rows do with their phase. The values are chosen greedily,
  bit by bit, to minimize the wavefronts of the writes and the reads together: the reads of a
  transposition then hit 32 distinct banks instead of one. Each side's lanes are tried first,
  with and without the one-sided widening (a wider store may leave the loads no slot bits to
  swizzle); the layout whose accesses take the fewest wavefronts in all is kept.

For `stmatrix` stores (sm_90, 16-bit elements) `stmatrix_layout` builds another candidate: the
three source bases along one 16-byte row of a matrix take the lowest offset bits, the other
bases of the instruction's rows land on multiples of 8 elements, and the swizzle serves the
eight rows of a matrix and the destination's loads.

`T` is a bijection onto `[0, numel)`; where the conversion goes in rounds (convert_rounds.py),
the round bases take its top bits and the scratch holds the bits below them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..layouts import LinearLayout
from ..layouts.bits import GF2Solver

MAX_VECTOR_BYTES = 16
_ROW_BYTES = 128  # 32 banks of 4 bytes


@dataclass(frozen=True)
class SharedLayout:
    """`offsets`: coordinates -> element offset; `store_bits` / `load_bits`: the source's /
    destination's register bits along its vector, the i-th at offset bit i."""

    offsets: LinearLayout
    store_bits: tuple[int, ...]
    load_bits: tuple[int, ...]


def _rank(vectors) -> int:
    return GF2Solver(vectors).rank


def wavefronts_log2(lane_offsets: list[int], elem_bytes: int, vec: int) -> int:
    """log2 of the wavefronts one warp-wide access takes, the lanes of one group at
    `lane_offsets` (element offsets of the first lane bits; the others are other groups)."""
    unit = max(vec * elem_bytes, 4)
    lo = (unit // elem_bytes).bit_length() - 1
    hi = (_ROW_BYTES // elem_bytes).bit_length() - 1
    mask = (1 << (hi - lo)) - 1
    above = _rank([o >> lo for o in lane_offsets])
    return above - _rank([(o >> lo) & mask for o in lane_offsets])


def group_lanes(elem_bytes: int, vec: int) -> int:
    """How many lane bits one group of a `vec`-wide access spans (5 for 4 bytes or less)."""
    return 7 - (max(vec * elem_bytes, 4).bit_length() - 1)


def independent_registers(layout: LinearLayout) -> dict[int, int]:
    """Packed basis -> register bit, for the registers that repeat no element."""
    free = layout.free_variable_masks().get("register", 0)
    bits: dict[int, int] = {}
    for bit, basis in enumerate(layout.packed_bases("register")):
        if basis and not free >> bit & 1:
            bits.setdefault(basis, bit)
    return bits


def _vectors(src: LinearLayout, dst: LinearLayout, most: int, extend: bool, rounds=()):
    """The offset bits of the vectors: the register bases both layouts hold (source order),
    then (with `extend`) the further registers of the side whose accesses that saves most;
    never a round basis. Returns the packed bases and, per side, its register bits along them
    (a prefix)."""
    src_bits, dst_bits = independent_registers(src), independent_registers(dst)
    common = [b for b in src_bits if b in dst_bits and b not in rounds][:most]
    room = most - len(common) if extend else 0
    extra_src = [b for b in src_bits if b not in common and b not in rounds][:room]
    extra_dst = [b for b in dst_bits if b not in common and b not in rounds][:room]
    # Accesses per thread: 2 ** (independent registers - vector bits) on each side.
    n_src, n_dst, n_common = len(src_bits), len(dst_bits), len(common)
    by_src = (1 << (n_src - n_common - len(extra_src))) + (1 << (n_dst - n_common))
    by_dst = (1 << (n_src - n_common)) + (1 << (n_dst - n_common - len(extra_dst)))
    extend_src = by_src <= by_dst
    extra = extra_src if extend_src else extra_dst
    bases = common + extra
    store = [src_bits[b] for b in (bases if extend_src else common)]
    load = [dst_bits[b] for b in (common if extend_src else bases)]
    return bases, store, load


def _unswizzled(first: LinearLayout, total_bits: int, vector: list[int], rounds=()) -> list[int]:
    """The packed coordinates of each offset bit: the vector bases, the lanes, registers and
    warps of `first` (one side's accesses then fall in consecutive slots), then unit vectors,
    each kept when independent of those before; the round bases last, at the top bits (the
    others span a space without them: convert_rounds.py)."""
    solver = GF2Solver([])
    columns = []
    candidates = list(vector)
    for name in ("lane", "register", "warp"):
        candidates += [b for b in first.packed_bases(name) if b not in rounds]
    candidates += [1 << i for i in range(total_bits)]
    below = total_bits - len(rounds)
    for c in candidates:
        if c and len(columns) < below and solver.add(c):
            columns.append(c)
    return columns + list(rounds)


def _layout(columns: list[int], shape: dict[str, int]) -> LinearLayout:
    """Coordinates -> offset, from the packed coordinates of each offset bit."""
    names = list(shape)
    widths = [size.bit_length() - 1 for size in shape.values()]
    bases = []
    for c in columns:
        vector, shift = [], 0
        for width in widths:
            vector.append((c >> shift) & ((1 << width) - 1))
            shift += width
        bases.append(vector)
    return LinearLayout({"offset": bases}, dict(zip(names, shape.values()))).invert()


def _aligned(layout: LinearLayout, offsets: LinearLayout, vector_bits: list[int]) -> bool:
    """Whether every basis of `layout` but its vector registers lands on offsets with the low
    bits of its vector zero (each vector starts aligned)."""
    placed = layout.compose(offsets)
    mask = (1 << len(vector_bits)) - 1
    for name in ("register", "lane", "warp", "block"):
        for bit, offset in enumerate(placed.packed_bases(name)):
            if not (name == "register" and bit in vector_bits) and offset & mask:
                return False
    return True


def _group_offsets(layout: LinearLayout, offsets: LinearLayout, lanes: int) -> list[int]:
    return list(layout.compose(offsets).packed_bases("lane")[:lanes])


def _swizzle(columns, sides, elem_bytes: int, total_bits: int) -> list[int]:
    """XOR the slot bits (above both sides' vectors) of offset bits above the row with values
    chosen greedily to cut the wavefronts of `sides` ((lane-group offsets unswizzled, vector
    width) of each side)."""
    lo = max((max(vec * elem_bytes, 4) // elem_bytes).bit_length() - 1 for _, vec in sides)
    hi = min((_ROW_BYTES // elem_bytes).bit_length() - 1, total_bits)
    if hi <= lo:
        return columns
    used = 0
    for offsets, _ in sides:
        for o in offsets:
            used |= o
    chosen: dict[int, int] = {}

    def swizzled(o: int) -> int:
        for bit, value in chosen.items():
            if o >> bit & 1:
                o ^= value << lo
        return o

    def cost() -> int:
        return sum(
            wavefronts_log2([swizzled(o) for o in offsets], elem_bytes, vec)
            for offsets, vec in sides
        )

    for bit in range(hi, total_bits):
        if not used >> bit & 1:
            continue
        best, best_cost = 0, None
        for value in range(1 << (hi - lo)):
            chosen[bit] = value
            c = cost()
            if best_cost is None or c < best_cost:
                best, best_cost = value, c
        chosen[bit] = best
    out = list(columns)
    for bit, value in chosen.items():
        for i in range(hi - lo):
            if value >> i & 1:
                out[bit] ^= columns[lo + i]
    return out


def choose_shared_layout(
    src: LinearLayout, dst: LinearLayout, elem_bytes: int, rounds: tuple[int, ...] = ()
) -> SharedLayout:
    """The vectorized, swizzled shared layout of a round trip from `src` to `dst` (see the
    module doc): with or without the one-sided widening, and with either side's lanes first,
    the one whose accesses take the fewest wavefronts in all. The `rounds` bases
    (convert_rounds.py) take the highest offset bits, unswizzled: a round's accesses differ
    from another's only there."""
    best = None
    for extend in (True, False):
        for first in (src, dst):
            layout = _candidate(src, dst, elem_bytes, extend, first, rounds)
            cost = _wavefronts(src, dst, layout, elem_bytes)
            if best is None or cost < best[0]:
                best = (cost, layout)
    return best[1]


def _candidate(src, dst, elem_bytes: int, extend: bool, first, rounds) -> SharedLayout:
    shape = src.out_shape
    total_bits = sum(size.bit_length() - 1 for size in shape.values())
    vectors = (MAX_VECTOR_BYTES // elem_bytes).bit_length() - 1
    while True:
        bases, store, load = _vectors(src, dst, vectors, extend, rounds)
        columns = _unswizzled(first, total_bits, bases, rounds)
        offsets = _layout(columns, shape)
        if _aligned(src, offsets, store) and _aligned(dst, offsets, load):
            break
        vectors -= 1  # a lane or warp repeats a vector register: narrower vectors
    sides = []
    for layout, bits in ((src, store), (dst, load)):
        vec = 1 << len(bits)
        sides.append((_group_offsets(layout, offsets, group_lanes(elem_bytes, vec)), vec))
    columns = _swizzle(columns, sides, elem_bytes, total_bits)
    return SharedLayout(_layout(columns, shape), tuple(store), tuple(load))


def _wavefronts(src, dst, shared: SharedLayout, elem_bytes: int) -> int:
    """The wavefronts of a thread's stores and loads of the round trip through `shared`."""
    total = 0
    for layout, bits in ((src, shared.store_bits), (dst, shared.load_bits)):
        vec = 1 << len(bits)
        lanes = _group_offsets(layout, shared.offsets, group_lanes(elem_bytes, vec))
        accesses = 1 << (len(independent_registers(layout)) - len(bits))
        total += accesses << wavefronts_log2(lanes, elem_bytes, vec)
    return total


def stmatrix_rows(src: LinearLayout, trans: bool) -> list[int]:
    """The packed bases of `src` that step the 8 rows of one `stmatrix` matrix: lane bits 2-4,
    or with `.trans` register bit 0 and lane bits 0, 1; the other three run along a row."""
    registers, lanes = src.packed_bases("register"), src.packed_bases("lane")
    return [registers[0], lanes[0], lanes[1]] if trans else list(lanes[2:])


def stmatrix_layout(src: LinearLayout, dst: LinearLayout, elem_bytes: int, trans: bool, rounds=()):
    """A shared layout whose stores can be `stmatrix` (16-bit elements): the lowest offset
    bits are the three bases of `src` along a row of a matrix (register bit 0 and lane bits
    0, 1; lane bits 2-4 with `.trans`), the destination's registers along them its load
    vector; then the destination's lanes, registers and warps, each bit above the 128-byte row
    swizzled as `_swizzle` does, the stores modelled as the 16-byte rows of one matrix. None
    where those bases are not three independent ones; whether the stores fit is
    `plan_stmatrix`'s to say. The `rounds` bases take the top offset bits, as in
    `choose_shared_layout`."""
    if elem_bytes != 2 or len(src.packed_bases("lane")) != 5 or not src.packed_bases("register"):
        return None
    rows = stmatrix_rows(src, trans)
    bases = stmatrix_rows(src, not trans)
    if _rank(bases) != 3:
        return None
    dst_bits = independent_registers(dst)
    load = []
    for basis in bases:
        if basis not in dst_bits:
            break
        load.append(dst_bits[basis])
    shape = src.out_shape
    total_bits = sum(size.bit_length() - 1 for size in shape.values())
    columns = _unswizzled(dst, total_bits, bases, rounds)
    offsets = _layout(columns, shape)
    while not _aligned(dst, offsets, load):
        load.pop()  # a lane or warp of the destination repeats a vector register
    vec = 1 << len(load)
    row_offsets = [offsets.apply_flat(basis) for basis in rows]
    loads = _group_offsets(dst, offsets, group_lanes(elem_bytes, vec))
    columns = _swizzle(columns, [(row_offsets, 8), (loads, vec)], elem_bytes, total_bits)
    return SharedLayout(_layout(columns, shape), (0,) if not trans else (), tuple(load))


def access_wavefronts(layout, offsets: LinearLayout, bits, elem_bytes: int) -> int:
    """The wavefronts of one side's vector accesses along register `bits`: each access of a
    warp moves 32 vectors in 128-byte wavefronts, more where a lane group conflicts."""
    vec = 1 << len(bits)
    lanes = _group_offsets(layout, offsets, group_lanes(elem_bytes, vec))
    accesses = 1 << (len(independent_registers(layout)) - len(bits))
    per_access = max(1, 32 * vec * elem_bytes // _ROW_BYTES)
    return accesses * per_access << wavefronts_log2(lanes, elem_bytes, vec)


def stmatrix_wavefronts(src: LinearLayout, offsets: LinearLayout, matrices: int, trans: bool):
    """The wavefronts of `matrices` 8 x 8 matrices of 16-bit elements stored by `stmatrix`
    from `src` into `offsets`: one each (128 bytes), more where its rows conflict."""
    rows = [offsets.apply_flat(basis) for basis in stmatrix_rows(src, trans)]
    return matrices << wavefronts_log2(rows, 2, 8)
