"""A 16-bit accumulator's conversion through shared memory in rounds, its stores by `stmatrix`
(sm_90): the round bases are then any register both layouts hold but the three along a matrix's
row, so tutorial 09's 128 x 256 f16 epilogue (wgmma accumulator to the store's rows of 8) goes in
two rounds of 32 KiB along its row +8 register, as Triton's does, where the general layout
keeps that register for its vectors and cannot split. Plans run thread by thread (each round's
`stmatrix` as the PTX manual defines it into a scratch of its part, then its loads); the
emitted LLVM IR runs the same way within the scratch (test_convert_emission.py)."""

import random

import numpy as np
import pytest
from test_convert_emission import run_conversion
from test_stmatrix import _mma, _mma_encoding

from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.lowering.convert_plan import plan_shared
from naiad.backends.nvidia.lowering.convert_rounds import most_rounds, round_bases
from naiad.backends.nvidia.lowering.indexing import evaluate, thread_plan
from naiad.dialects.ttg.attributes import BlockedEncodingAttr
from naiad.ir import FloatType, RankedTensorType

TUTORIAL_09 = ((3, [8, 1]), BlockedEncodingAttr([1, 8], [1, 32], [8, 1], [1, 0]), (128, 256))


def _stores(src, plan, round_: int, scratch: int, ids) -> np.ndarray:
    """The scratch of `scratch` elements after every thread ran the `stmatrix` instructions of
    `round_` (plain or `.trans`), each at its offset within the round's part."""
    memory = np.full(scratch, -1, dtype=np.int64)
    stores = plan.stmatrix
    per_round = len(stores.words) // stores.rounds
    warps = src.in_dim_size("warp")
    thread = [evaluate(thread_plan(stores.address), tid)[0] for tid in range(32 * warps)]
    for instruction in range(round_ * per_round, (round_ + 1) * per_round):
        constant = stores.address.apply(register=instruction)[0] % scratch
        for warp in range(warps):
            address = [thread[32 * warp + lane] ^ constant for lane in range(32)]
            for m, first in enumerate(stores.words[instruction]):
                rows = address[8 * m : 8 * m + 8]
                for lane in range(32):
                    for i in (0, 1):
                        value = ids[src.apply(register=first + i, lane=lane, warp=warp)]
                        if stores.trans:
                            at = rows[2 * (lane % 4) + i] + lane // 4
                        else:
                            at = rows[lane // 4] + 2 * (lane % 4) + i
                        assert 0 <= at < scratch and memory[at] in (-1, value)
                        memory[at] = value
    return memory


def simulate_in_rounds(src, dst, rounds: int):
    """Run the `stmatrix` round trip of `src` -> `dst` in `rounds` for every thread; every
    destination register must hold the element `dst` names. Returns the plan."""
    plan = plan_shared(src, dst, 2, stmatrix=True, rounds=rounds)
    assert plan.stmatrix is not None and plan.stmatrix.rounds == rounds
    shape = tuple(src.out_shape.values())
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    scratch = ids.size // rounds
    assert plan.nbytes == 2 * scratch
    warps = dst.in_dim_size("warp")
    thread = [evaluate(thread_plan(plan.load_offsets), tid)[0] for tid in range(32 * warps)]
    loaded = [{} for _ in range(32 * warps)]
    for round_ in range(rounds):
        memory = _stores(src, plan, round_, scratch, ids)
        for tid in range(32 * warps):
            for access in (a for a in plan.loads if a.round == round_):
                for i, r in enumerate(access.registers):
                    loaded[tid][r] = memory[(thread[tid] ^ access.offset) + i]
    for tid in range(32 * warps):
        for r, copy in enumerate(plan.copies):
            assert loaded[tid][copy] == ids[dst.apply(register=r, lane=tid % 32, warp=tid // 32)]
    return plan


def test_tutorial_09_epilogue_goes_in_two_rounds():
    """The general layout keeps rows +8 for its vectors (one round at most); `stmatrix` stores
    rows of 8 columns along register bit 0 and lanes 0-1, so rows +8 is a round: 8 `stmatrix`
    x4 and 8 16-byte loads a round, through 32 KiB."""
    mma, dst, shape = TUTORIAL_09
    src, dst = _mma(*mma, shape), to_linear_layout(dst, shape)
    assert most_rounds(src, dst, 2) == 1
    assert most_rounds(src, dst, 2, stmatrix=False) == 2
    plan = simulate_in_rounds(src, dst, 2)
    assert (len(plan.stmatrix.words), plan.stmatrix.matrices, plan.load_vec) == (16, 4, 8)
    assert sorted(access.round for access in plan.loads) == [0] * 8 + [1] * 8


def test_random_destinations_in_rounds():
    """Random blocked destinations of wgmma accumulators, in every number of rounds their
    `stmatrix` plan allows."""
    rng = random.Random(33)
    split = 0
    for _ in range(40):
        warps = rng.choice([4, 8])
        shape = (rng.choice([64, 128]) * warps // 4, rng.choice([64, 128, 256]))
        per_thread = rng.choice([2, 4, 8])
        lanes_n = min(32, shape[1] // per_thread)
        dst = BlockedEncodingAttr([1, per_thread], [32 // lanes_n, lanes_n], [warps, 1], [1, 0])
        src, dst = _mma(3, [warps, 1], shape), to_linear_layout(dst, shape)
        plan = plan_shared(src, dst, 2, stmatrix=True)
        if plan.stmatrix is None:
            continue
        most = most_rounds(src, dst, 2, plan.stmatrix.trans)
        for rounds in sorted({2, most}) if most > 1 else ():
            simulate_in_rounds(src, dst, rounds)
            split += 1
    assert split >= 10


@pytest.mark.parametrize("element", ["f16", "bf16"])
def test_emitted_epilogue_in_two_rounds(element):
    """The LLVM IR of tutorial 09's epilogue conversion given 32 KiB (allocate-shared-memory's
    choice beside the rings), run for every thread within that scratch."""
    mma, dst, shape = TUTORIAL_09
    src_t = RankedTensorType(list(shape), FloatType(element), _mma_encoding(*mma, shape))
    got, expected = run_conversion(src_t, src_t.clone(encoding=dst), scratch=32768)
    assert got == expected


def test_no_stmatrix_rounds_without_registers():
    """A source holding one element a thread has no row for `stmatrix` (a scaled dot's scales
    on sm_90a reached this): no round bases, the general rule's answer kept."""
    shape = (32, 4)
    src = to_linear_layout(BlockedEncodingAttr([1, 1], [8, 4], [4, 1], [1, 0]), shape)
    dst = to_linear_layout(BlockedEncodingAttr([1, 1], [32, 1], [1, 4], [0, 1]), shape)
    assert not src.packed_bases("register")
    assert round_bases(src, dst, 2, False) == round_bases(src, dst, 2, True) == ()
    assert plan_shared(src, dst, 2, stmatrix=True).stmatrix is None
