"""Planning a `ttg.convert_layout` within warps: rounds of `shfl.sync.idx` (`convert_plan.py`
weighs it against a round trip through shared memory; `convert_shuffle.py` emits it).

The warp bases of both layouts agree, so every element a thread needs is in a lane of its own
warp. Solving the destination's (register, lane) bases against the source's gives a linear
map: register r of lane l needs source register `Cr(r) ^ Cl(l)` of lane `Lr(r) ^ Ll(l)`. One
round per destination register: each lane reads lane `Lr(r) ^ Ll(l)`, and each lane sends
the register its readers need, chosen by selects on bits of its own lane (a register index
`base ^ G(lane)`, G linear). Two readers of one sender must not need different registers
(lanes in the kernel of Ll that Cl tells apart): the planner first picks, among the copies the
source holds, senders that keep Ll injective, then lets lanes fill their registers in a
rotated order (round k fills register `k ^ h(l)`, which adds `Lr(h(l))` to the sender) where
that makes it injective; what remains takes one round per distinct need, each reader keeping
its round by a select. Narrow values read from the same lane share a shuffle (`packs`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ....errors import InternalError
from ..layouts import LinearLayout
from ..layouts.bits import GF2Solver, xor_bits
from .indexing import register_coords

_LANE_BITS = 5
# Copies of an element the planner weighs as its sender (2**bits candidates).
_MAX_COPY_BITS = 6


@dataclass(frozen=True)
class LaneMux:
    """A per-lane choice among `2 ** len(steps)` candidates: lane `l` takes candidate
    `base ^ XOR(steps[i] for the set bits i of select(l))`, with `select(l)` the XOR of
    `select_bases[b]` over the set bits b of l (linear, so it is a few shifts of the lane)."""

    steps: tuple[int, ...]
    select_bases: tuple[int, ...]

    def selector(self, lane: int) -> int:
        return xor_bits(self.select_bases, lane)

    def pick(self, base: int, lane: int) -> int:
        return base ^ xor_bits(self.steps, self.selector(lane))

    @property
    def selects(self) -> int:
        """Selects per choice (a binary tree over the candidates)."""
        return (1 << len(self.steps)) - 1


@dataclass(frozen=True)
class ShuffleRound:
    """One `shfl.sync.idx`: lane l reads lane `lane ^ Ll(l)`, each lane sending its register
    `send.pick(register, own lane)`."""

    lane: int
    register: int


@dataclass(frozen=True)
class Shuffle:
    """Exchanges within each warp (see the module doc). Round set `rounds[i]` is for the
    distinct destination register `targets[i]`: a reader keeps its round
    `accept.pick(0, lane)` as the value of register `rotate.pick(targets[i], lane)`;
    destination register r then holds the value of register `copies[r]`."""

    lane_bases: tuple[int, ...]  # the source-lane part of each lane bit of the reader
    send: LaneMux
    accept: LaneMux
    rotate: LaneMux
    targets: tuple[int, ...]
    rounds: tuple[tuple[ShuffleRound, ...], ...]
    copies: tuple[int, ...]
    bits: int  # of an element as it travels (i1 as 8)

    def packs(self) -> list[list[tuple[int, int]]]:
        """The shuffles: (round set, round) pairs reading the same lane, as many as fit in 32
        bits (narrow elements travel packed; 64-bit ones as two words)."""
        per_word = max(32 // self.bits, 1)
        by_lane: dict[int, list[tuple[int, int]]] = {}
        for i, rounds in enumerate(self.rounds):
            for t, one in enumerate(rounds):
                by_lane.setdefault(one.lane, []).append((i, t))
        return [
            items[j : j + per_word]
            for items in by_lane.values()
            for j in range(0, len(items), per_word)
        ]

    @property
    def cost(self) -> float:
        words = max(self.bits // 32, 1)
        count = sum(len(r) for r in self.rounds)
        shuffles = len(self.packs())
        packing = count if shuffles < count else 0  # shifts in and out of the words
        per_register = self.accept.selects + self.rotate.selects
        selects = count * self.send.selects + len(self.rounds) * per_register
        return shuffles * (words + 1) + packing + selects * words / 2


def _distinct_registers(layout: LinearLayout) -> tuple[list[int], tuple[int, ...]]:
    """The registers holding each element of a thread first, and for every register the one
    holding its element first."""
    first: dict[tuple[int, ...], int] = {}
    copies = []
    for r, coords in enumerate(register_coords(layout)):
        copies.append(first.setdefault(coords, r))
    return sorted(set(copies)), tuple(copies)


def _source_kernel(columns: list[int]) -> list[int]:
    """A basis of the inputs (packed bits) that `columns` map to zero: the source's copies."""
    solver = GF2Solver([])
    kernel = []
    for bit, column in enumerate(columns):
        x = solver.solve(column)
        if not solver.add(column):
            kernel.append(x | (1 << bit))
    return kernel


def _solutions(src: LinearLayout, dst: LinearLayout):
    """(register solutions, lane solutions, rotation): for each register bit of `dst` the
    (source register, source lane) holding its element in the same warp; for each lane bit,
    the same with the rotation `h(bit)` (a register of `dst`) folded in; None when some
    element is not in the warp.

    An element may have several holders (the source's copies: lanes whose basis is zero,
    repeated registers). Each lane bit takes, among the holders and the rotations, one whose
    source lane is independent of the earlier bits' where it can (every reader of a round
    then reads a distinct sender), with no rotation and the fewest register bits if it can
    (smaller select trees)."""
    registers = src.in_dim_size_log2("register")
    low = (1 << registers) - 1
    columns = list(src.packed_bases("register")) + list(src.packed_bases("lane"))
    solver = GF2Solver(columns)
    copies = _source_kernel(columns)[:_MAX_COPY_BITS]
    by_register = []
    for basis in dst.packed_bases("register"):
        x = solver.solve(basis)
        if x is None:
            return None
        by_register.append(x)
    free = dst.free_variable_masks().get("register", 0)
    spans = [1 << b for b in range(len(by_register)) if not free >> b & 1][:_MAX_COPY_BITS]
    rotations = sorted(
        (xor_bits(spans, c) for c in range(1 << len(spans))), key=lambda v: v.bit_count()
    )
    by_lane, rotation = [], []
    lanes = GF2Solver([])
    for basis in dst.packed_bases("lane"):
        x = solver.solve(basis)
        if x is None:
            return None
        best = None
        for v in rotations:
            moved = x ^ xor_bits(by_register, v)
            for c in range(1 << len(copies)):
                h = moved ^ xor_bits(copies, c)
                key = (
                    lanes.solve(h >> registers) is not None,
                    v.bit_count(),
                    (h & low).bit_count(),
                )
                if best is None or key < best[0]:
                    best = (key, h, v)
            if not best[0][0]:
                break
        _, h, v = best
        lanes.add(h >> registers)
        by_lane.append((h & low, h >> registers))
        rotation.append(v)
    split = [(x & low, x >> registers) for x in by_register]
    return split, by_lane, rotation


def _kernel_split(lane_bases: list[int]) -> tuple[list[int], dict[int, int]]:
    """The lane bits whose source lanes are independent (a complement of the kernel of Ll),
    and for each other lane bit b its kernel vector (bit b plus independent bits)."""
    solver = GF2Solver([])
    independent, kernel = [], {}
    for bit, basis in enumerate(lane_bases):
        x = solver.solve(basis)
        if solver.add(basis):
            independent.append(bit)
        else:
            kernel[bit] = x | (1 << bit)
    return independent, kernel


def _coordinates(vectors: list[int], basis: list[int]) -> list[int]:
    """Each vector written in `basis` (packed coefficients), the vectors in its span."""
    solver = GF2Solver(basis)
    return [solver.solve(v) for v in vectors]


def _echelon(vectors: list[int]) -> list[int]:
    """A basis of the span of `vectors`, taken from them."""
    solver = GF2Solver([])
    return [v for v in vectors if solver.add(v)]


def plan_shuffle(src: LinearLayout, dst: LinearLayout, bits: int) -> Shuffle | None:
    """The exchange within warps, or None when the warp bases differ or an element a thread
    needs is not in its warp."""
    if src.bases("warp") != dst.bases("warp"):
        return None
    if src.in_dim_size_log2("lane") != _LANE_BITS or dst.in_dim_size_log2("lane") != _LANE_BITS:
        raise InternalError("a layout whose warps are not 32 lanes")
    solved = _solutions(src, dst)
    if solved is None:
        return None
    by_register, by_lane, rotation = solved
    cl = [c for c, _ in by_lane]
    ll = [lane for _, lane in by_lane]
    accept, needs = _accept(cl, ll)
    # G: the sender's register part, Ll(e_b) -> Cl(e_b) on the independent bits, 0 beyond.
    independent, _ = _kernel_split(ll)
    lane_basis = [ll[b] for b in independent]
    completion = _echelon(lane_basis + [1 << i for i in range(_LANE_BITS)])
    values = [cl[b] for b in independent] + [0] * (_LANE_BITS - len(independent))
    units = [1 << i for i in range(_LANE_BITS)]
    g = [xor_bits(values, x) for x in _coordinates(units, completion)]
    targets, copies = _distinct_registers(dst)
    rounds = []
    for r in targets:
        base = xor_bits([c for c, _ in by_register], r)
        lane = xor_bits([lane for _, lane in by_register], r)
        base ^= xor_bits(g, lane)
        choices = range(1 << len(needs))
        rounds.append(tuple(ShuffleRound(lane, base ^ xor_bits(needs, t)) for t in choices))
    return Shuffle(
        tuple(ll),
        _mux(g),
        accept,
        _mux(rotation),
        tuple(targets),
        tuple(rounds),
        copies,
        bits,
    )


def _accept(cl: list[int], ll: list[int]) -> tuple[LaneMux, list[int]]:
    """(the reader's choice of round, the register each round adds): readers of one sender
    differ by kernel vectors of Ll, and Cl of those tells their needs apart."""
    _, kernel = _kernel_split(ll)
    differences = [xor_bits(cl, kernel[b]) for b in sorted(kernel)]
    needs = _echelon(differences)
    select = [0] * _LANE_BITS
    for b, coords in zip(sorted(kernel), _coordinates(differences, needs)):
        select[b] = coords
    return LaneMux(tuple(1 << i for i in range(len(needs))), tuple(select)), needs


def _mux(values: list[int]) -> LaneMux:
    """The LaneMux choosing `base ^ XOR(values[b] for the set bits b of the lane)`."""
    steps = _echelon(values)
    return LaneMux(tuple(steps), tuple(_coordinates(values, steps)))
