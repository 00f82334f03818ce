"""convert_layout plans (lowering/convert_plan.py, convert_lanes.py) run by a simulator of
every thread.

Each plan is executed in Python as the lowering emits it - per-thread register arrays, rounds
of `shfl.sync.idx` with the sender's and the reader's selects, a shared-memory array written
by vector stores and read by vector loads - for hundreds of seeded random layout pairs
(blocked, slice, mma v2, dot_op, linear; shapes of rank 1-3; 1-8 warps; elements of 1-64
bits). Every destination register of every thread must receive exactly the element the
destination layout names; stores must not write one address with two elements, nor load an
address nobody wrote, and a round trip in rounds stays within its part of the scratch and
loads what its round stored. The bank-conflict model is checked on conversions whose answer
is known by hand.
"""

import random

import pytest
from test_encodings import _split

from naiad.backends.nvidia.layouts import LinearLayout, to_linear_layout
from naiad.backends.nvidia.lowering.convert_lanes import Shuffle, plan_shuffle
from naiad.backends.nvidia.lowering.convert_plan import Renumber, Shared, plan_convert, plan_shared
from naiad.backends.nvidia.lowering.convert_rounds import most_rounds, round_bases
from naiad.backends.nvidia.lowering.convert_swizzle import group_lanes, wavefronts_log2
from naiad.backends.nvidia.lowering.indexing import evaluate, thread_plan
from naiad.dialects.ttg import attributes as attrs

BITS = (8, 8, 16, 32, 64)  # i1 travels as a byte
LANES = 32


def _blocked(rng, rank, warps):
    order = list(range(rank))
    rng.shuffle(order)
    return attrs.BlockedEncodingAttr(
        [1 << rng.randrange(3) for _ in range(rank)],
        _split(rng, LANES, rank),
        _split(rng, warps, rank),
        order,
    )


def _linear(rng, shape, warps):
    """A random `#ttg.linear` covering `shape`: an invertible matrix's columns spread over
    registers, lanes and warps, the missing lane or warp bits zero (copies) or repeats."""
    sizes = [s.bit_length() - 1 for s in shape]
    units = [
        [1 << i if d == k else 0 for d in range(len(shape))]
        for k in range(len(shape))
        for i in range(sizes[k])
    ]
    columns = []
    for vector in units:  # a random invertible combination: each unit XOR some earlier ones
        mixed = list(vector)
        for other in columns:
            if rng.random() < 0.25:
                mixed = [a ^ b for a, b in zip(mixed, other)]
        columns.append(mixed)
    rng.shuffle(columns)
    want = {"lane": 5, "warp": warps.bit_length() - 1}
    bases = {"register": [], "lane": [], "warp": []}
    for column in columns:
        open_ = [n for n in ("lane", "warp") if len(bases[n]) < want[n]]
        name = rng.choice(open_ + ["register"]) if open_ else "register"
        bases[name].append(column)
    zero = [0] * len(shape)
    for name in ("lane", "warp"):
        while len(bases[name]) < want[name]:
            copy = rng.choice(columns) if rng.random() < 0.3 else zero
            bases[name].insert(rng.randrange(len(bases[name]) + 1), copy)
    if rng.random() < 0.2:
        bases["register"].append(zero)
    return attrs.LinearEncodingAttr(bases["register"], bases["lane"], bases["warp"], [])


def random_encoding(rng, shape, warps):
    rank = len(shape)
    families = ["blocked", "linear"] + (["slice", "mma", "dot"] if rank == 2 else [])
    families += ["slice"] if rank == 1 else []
    family = rng.choice(families)
    if family == "blocked":
        return _blocked(rng, rank, warps)
    if family == "linear":
        return _linear(rng, shape, warps)
    if family == "slice":
        return attrs.SliceEncodingAttr(rng.randrange(rank + 1), _blocked(rng, rank + 1, warps))
    mma = attrs.NvidiaMmaEncodingAttr(2, 0, _split(rng, warps, 2), [16, 8])
    if family == "mma":
        return mma
    parent = mma if rng.random() < 0.7 else _blocked(rng, 2, warps)
    k_width = rng.choice([1, 2, 4]) if parent is mma else 0
    return attrs.DotOperandEncodingAttr(rng.randrange(2), parent, k_width)


def random_pair(rng):
    rank = rng.choice([1, 2, 2, 2, 3])
    warps = 1 << rng.randrange(4)
    shape = [1 << rng.randrange(1, 7 if rank < 3 else 4) for _ in range(rank)]
    if rank == 2 and rng.random() < 0.5:
        shape = [1 << rng.randrange(4, 7), 1 << rng.randrange(3, 7)]
    while True:
        try:
            src = to_linear_layout(random_encoding(rng, shape, warps), shape)
            dst = to_linear_layout(random_encoding(rng, shape, warps), shape)
        except ValueError:
            continue
        if src.in_dim_size("warp") == dst.in_dim_size("warp"):
            return src, dst


def held(layout, tid):
    return [
        layout.apply_packed({"register": r, "lane": tid % LANES, "warp": tid // LANES})
        for r in range(layout.in_dim_size("register"))
    ]


def simulate(plan, src, dst):
    """Every thread's destination registers after the plan (elements as packed coords)."""
    threads = LANES * src.in_dim_size("warp")
    registers = [held(src, tid) for tid in range(threads)]
    if isinstance(plan, Renumber):
        return [[regs[s] for s in plan.sources] for regs in registers]
    if isinstance(plan, Shuffle):
        return [_shuffled(plan, registers, tid) for tid in range(threads)]
    numel = 1
    for size in src.out_shape.values():
        numel *= size
    return _round_trip(plan, registers, threads, numel)


def _shuffled(plan: Shuffle, registers, tid):
    lane, warp_start = tid % LANES, tid - tid % LANES
    reading = 0
    for b, part in enumerate(plan.lane_bases):
        if lane >> b & 1:
            reading ^= part
    received = {}
    for target, rounds in zip(plan.targets, plan.rounds):
        got = []
        for one in rounds:
            sender = reading ^ one.lane
            got.append(registers[warp_start + sender][plan.send.pick(one.register, sender)])
        received[target] = got[plan.accept.pick(0, lane)]
    values = {r: received[plan.rotate.pick(r, lane)] for r in plan.targets}
    return [values[c] for c in plan.copies]


def _round_trip(plan: Shared, registers, threads, numel):
    """The stores, then the loads, of each round in turn through a scratch of `numel /
    rounds` elements, emptied between rounds: a load must find what its round stored."""
    store_plan = thread_plan(plan.store_offsets)
    load_plan = thread_plan(plan.load_offsets)
    out = [{} for _ in range(threads)]
    for round_ in range(plan.rounds):
        memory = {}
        for tid in range(threads):
            if tid & plan.skip_mask:
                continue
            (base,) = evaluate(store_plan, tid)
            for access in plan.stores:
                if access.round != round_:
                    continue
                start = base ^ access.offset
                assert start % plan.store_vec == 0
                for i, r in enumerate(access.registers):
                    assert start + i < numel // plan.rounds
                    value = (registers[tid][r], tid // LANES)
                    assert memory.setdefault(start + i, value)[0] == value[0], "two elements"
        for tid in range(threads):
            (base,) = evaluate(load_plan, tid)
            for access in plan.loads:
                if access.round != round_:
                    continue
                start = base ^ access.offset
                assert start % plan.load_vec == 0
                for i, r in enumerate(access.registers):
                    out[tid][r], writer = memory[start + i]
                    assert not plan.warp_local or writer == tid // LANES, "written by another warp"
    return [[loaded[c] for c in plan.copies] for loaded in out]


def expected(dst):
    return [held(dst, tid) for tid in range(LANES * dst.in_dim_size("warp"))]


def test_every_plan_delivers_the_destination_layout():
    rng = random.Random(2026)
    kinds = {Renumber: 0, Shuffle: 0, Shared: 0}
    for _ in range(300):
        src, dst = random_pair(rng)
        bits = rng.choice(BITS)
        plan = plan_convert(src, dst, bits)
        kinds[type(plan)] += 1
        assert simulate(plan, src, dst) == expected(dst), (src, dst, bits)
    assert min(kinds.values()) >= 10, kinds


def test_both_general_plans_are_correct_even_when_not_chosen():
    """The shuffle plan (where the warps agree) and the round trip, each forced."""
    rng = random.Random(7)
    shuffles = warp_local = 0
    for _ in range(200):
        src, dst = random_pair(rng)
        bits = rng.choice(BITS)
        shared = plan_shared(src, dst, bits // 8)
        warp_local += shared.warp_local  # the simulator checks no warp reads another's
        assert simulate(shared, src, dst) == expected(dst)
        shuffle = plan_shuffle(src, dst, bits)
        if shuffle is not None:
            shuffles += 1
            assert simulate(shuffle, src, dst) == expected(dst), (src, dst)
    assert shuffles >= 40 and warp_local >= 20


def _wavefronts(plan: Shared, bits: int):
    """log2 of the wavefronts of the stores and of the loads (first lane group)."""
    return tuple(
        wavefronts_log2(
            list(layout.packed_bases("lane")[: group_lanes(bits // 8, vec)]), bits // 8, vec
        )
        for layout, vec in (
            (plan.store_offsets, plan.store_vec),
            (plan.load_offsets, plan.load_vec),
        )
    )


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_transposition_is_conflict_free(bits):
    """Rows of 4 per thread to columns of 4 per thread: no common vector, and without the
    swizzle the reads would hit one bank 8 times; swizzled, both sides take one wavefront."""
    shape = [64, 64]
    src = to_linear_layout(attrs.BlockedEncodingAttr([1, 4], [4, 8], [4, 1], [1, 0]), shape)
    dst = to_linear_layout(attrs.BlockedEncodingAttr([4, 1], [8, 4], [1, 4], [0, 1]), shape)
    plan = plan_shared(src, dst, bits // 8)
    assert simulate(plan, src, dst) == expected(dst)
    assert _wavefronts(plan, bits) == (0, 0)


def test_mma_accumulator_to_blocked_is_vectorized_and_conflict_free():
    """The mma.sync accumulator's register pairs are the blocked layout's first register
    basis, and so are the next 16 columns: 16-byte vectors of f32 on both sides."""
    shape = [128, 64]
    src = to_linear_layout(attrs.NvidiaMmaEncodingAttr(2, 0, [4, 1], [16, 8]), shape)
    dst = to_linear_layout(attrs.BlockedEncodingAttr([1, 4], [4, 8], [4, 1], [1, 0]), shape)
    plan = plan_convert(src, dst, 32)
    assert isinstance(plan, Shared) and plan.store_vec == plan.load_vec == 4
    assert simulate(plan, src, dst) == expected(dst)
    assert _wavefronts(plan, 32) == (0, 0)


def test_reduction_result_to_blocked_shuffles():
    """A row reduction's slice layout to a 1-D blocked layout in one warp: the elements are
    in the warp, a few shuffles beat a round trip."""
    parent = attrs.BlockedEncodingAttr([1, 4], [4, 8], [1, 1], [1, 0])
    src = to_linear_layout(attrs.SliceEncodingAttr(1, parent), [32])
    dst = to_linear_layout(attrs.BlockedEncodingAttr([1], [32], [1], [0]), [32])
    plan = plan_convert(src, dst, 32)
    assert isinstance(plan, Shuffle)
    assert sum(len(r) for r in plan.rounds) == 1
    assert simulate(plan, src, dst) == expected(dst)


def test_copies_are_stored_once():
    """A 16-element tensor held by every warp: only warp 0's distinct lanes store."""
    src = to_linear_layout(attrs.BlockedEncodingAttr([1], [32], [4], [0]), [16])
    dst = to_linear_layout(attrs.BlockedEncodingAttr([2], [32], [4], [0]), [16])
    plan = plan_shared(src, dst, 4)
    writers = [tid for tid in range(128) if not tid & plan.skip_mask]
    assert writers == list(range(16))
    assert simulate(plan, src, dst) == expected(dst)


def test_round_trips_in_rounds_deliver_the_destination_layout():
    """Random pairs whose round trip can go in rounds, in two and in the most: each round's
    loads find what its stores wrote in a scratch of `1 / rounds` of the tile."""
    rng = random.Random(5)
    split = 0
    for _ in range(300):
        src, dst = random_pair(rng)
        bits = rng.choice(BITS)
        most = most_rounds(src, dst, bits // 8)
        for rounds in sorted({2, most}) if most > 1 else ():
            plan = plan_shared(src, dst, bits // 8, rounds=rounds)
            assert plan.nbytes * rounds == plan_shared(src, dst, bits // 8).nbytes
            assert {a.round for a in plan.stores} == set(range(rounds))
            assert simulate(plan, src, dst) == expected(dst), (src, dst, bits, rounds)
            split += 1
    assert split >= 30


def test_matmul_accumulator_goes_in_rounds_of_its_row_repetitions():
    """Tutorial 03's 128 x 256 f32 accumulator (8 warps) to its store layout: rows 32 and 64
    are register bases of both layouts, so up to 4 rounds of 32 KiB instead of 128 KiB, the
    16-byte vectors kept."""
    shape = [128, 256]
    src = to_linear_layout(attrs.NvidiaMmaEncodingAttr(2, 0, [2, 4], [16, 8]), shape)
    dst = to_linear_layout(attrs.BlockedEncodingAttr([1, 4], [1, 32], [4, 2], [1, 0]), shape)
    assert isinstance(plan_convert(src, dst, 32), Shared)
    assert most_rounds(src, dst, 4) == 4
    for rounds in (1, 2, 4):
        plan = plan_shared(src, dst, 4, rounds=rounds)
        assert plan.nbytes == 128 * 256 * 4 // rounds
        assert plan.store_vec == plan.load_vec == 4
        assert _wavefronts(plan, 32) == (0, 0)
        assert simulate(plan, src, dst) == expected(dst)


def test_no_rounds_where_a_lane_holds_a_round_basis():
    """Columns 16 apart are a register basis of both layouts, which a lane of the destination
    also steps (those lanes hold copies): in rounds along it, a thread would load in one round
    an element stored in the other."""
    src = to_linear_layout(attrs.BlockedEncodingAttr([2, 2], [8, 4], [1, 1], [1, 0]), [16, 32])
    dst = LinearLayout(
        {
            "register": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [8, 0]],
            "lane": [[1, 0], [2, 0], [4, 0], [0, 16], [0, 0]],
            "warp": [],
        },
        {"dim0": 16, "dim1": 32},
    )
    assert round_bases(src, dst, 4) == ()
