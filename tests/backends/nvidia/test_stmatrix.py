"""Stores into shared memory with `stmatrix` (sm_90), without a GPU: the plans
(`lowering/stmatrix.py`, and the round trips of `convert_plan.py`) run through a simulator of
the instruction as the PTX manual defines it, thread by thread, for `#ttg.nvidia_mma` versions
2 and 3 over many tile shapes and warps: into swizzled and `nvmma_shared` buffers of either
order every element must land at the offset the buffer's layout gives it (a matrix's rows in
distinct bank groups where the buffer is swizzled); through a conversion's round trip every
destination register must get its element, by the plan and by the emitted LLVM IR executed
for every thread. Layouts the instruction does not fit keep the vector stores. Then kernels
whose epilogue stores an accumulator, through PTX that ptxas assembles for sm_90a. Values on
the GPU: tests/gpu/test_stmatrix_gpu.py.
"""

import random
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from module_files import module_from_file
from test_convert_emission import run_conversion
from test_lowering import assemble, count
from test_toolchain import needs_ptxas

import naiad
import naiad.language as tl
from naiad.backends.nvidia import link
from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.lowering.convert_plan import Shared, plan_convert
from naiad.backends.nvidia.lowering.indexing import evaluate, thread_plan
from naiad.backends.nvidia.lowering.ldmatrix import shared_offsets, swizzled_encoding
from naiad.backends.nvidia.lowering.stmatrix import plan_stmatrix
from naiad.dialects.ttg.attributes import (
    BlockedEncodingAttr,
    NvidiaMmaEncodingAttr,
    NVMMASharedEncodingAttr,
    SwizzledSharedEncodingAttr,
)
from naiad.ir import FloatType, RankedTensorType
from naiad.tools.tensor_descriptor import TensorDescriptor

ROOT = Path(__file__).resolve().parents[3]
STMATRIX = r"stmatrix\.sync\.aligned\.m8n8\.x(\d)(\.trans)?\.shared\.b16"


# -- the simulator ------------------------------------------------------------------------------
def _rows_conflict_free(rows: list[int]) -> bool:
    """Whether the distinct 16-byte rows of one matrix (element offsets) meet distinct bank
    groups: one wavefront."""
    distinct = sorted(set(rows))
    return len({(r * 2 // 16) % 8 for r in distinct}) == len(distinct)


def _stmatrix_stores(src, plan, size: int, skip_mask: int = 0):
    """The scratch (element ids, -1 where nothing was stored) after every thread not in
    `skip_mask` ran the `stmatrix` plan, and whether every matrix's rows met distinct bank
    groups."""
    shape = tuple(src.out_shape.values())
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    scratch = np.full(size, -1, dtype=np.int64)
    warps = src.in_dim_size("warp")
    thread = [evaluate(thread_plan(plan.address), tid)[0] for tid in range(32 * warps)]
    conflict_free = True
    for instruction, firsts in enumerate(plan.words):
        constant = plan.address.apply(register=instruction)[0]
        for warp in (w for w in range(warps) if not (32 * w) & skip_mask):
            address = [thread[32 * warp + lane] ^ constant for lane in range(32)]
            for m, first in enumerate(firsts):
                rows = address[8 * m : 8 * m + 8]
                assert all(r % 8 == 0 for r in rows)  # each row 16 aligned bytes
                conflict_free &= _rows_conflict_free(rows)
                for lane in range(32):
                    word = [
                        ids[src.apply(register=first + i, lane=lane, warp=warp)] for i in (0, 1)
                    ]
                    for i, value in enumerate(word):
                        if plan.trans:
                            at = rows[2 * (lane % 4) + i] + lane // 4
                        else:
                            at = rows[lane // 4] + 2 * (lane % 4) + i
                        assert scratch[at] in (-1, value)
                        scratch[at] = value
    return scratch, conflict_free


def simulate(src, to_offset):
    """Run the `stmatrix` plan of the register layout `src` into a buffer whose element ->
    offset map is `to_offset`, for every thread; check the buffer holds every element where
    `to_offset` puts it. Returns the plan (None when it does not apply) and whether every
    matrix's rows met distinct bank groups."""
    plan = plan_stmatrix(src.compose(to_offset), 16)
    if plan is None:
        return None, True
    scratch, conflict_free = _stmatrix_stores(src, plan, to_offset.out_dim_size("offset"))
    shape = tuple(src.out_shape.values())
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    for coords in np.ndindex(*shape):
        assert scratch[to_offset.apply(**dict(zip(to_offset.in_dims, coords)))[0]] == ids[coords]
    return plan, conflict_free


def simulate_round_trip(src, dst):
    """Run the 16-bit conversion plan of `src` -> `dst` on sm_90 for every thread: its
    `stmatrix` stores, then its vector loads; every destination register must hold the element
    `dst` names. Returns the plan."""
    plan = plan_convert(src, dst, 16, stmatrix=True)
    if not isinstance(plan, Shared) or plan.stmatrix is None:
        return plan
    shape = tuple(src.out_shape.values())
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    scratch, _ = _stmatrix_stores(src, plan.stmatrix, ids.size, plan.skip_mask)
    warps = dst.in_dim_size("warp")
    thread = [evaluate(thread_plan(plan.load_offsets), tid)[0] for tid in range(32 * warps)]
    for tid in range(32 * warps):
        loaded = {}
        for access in plan.loads:
            offset = thread[tid] ^ access.offset
            for i, r in enumerate(access.registers):
                loaded[r] = scratch[offset + i]
        for r, copy in enumerate(plan.copies):
            assert loaded[copy] == ids[dst.apply(register=r, lane=tid % 32, warp=tid // 32)]
    return plan


def _mma_encoding(version: int, warps, shape):
    instr = [16, 8] if version == 2 else [16, min(shape[1] // warps[1], 256), 16]
    return NvidiaMmaEncodingAttr(version, 0, warps, instr)


def _mma(version: int, warps, shape):
    return to_linear_layout(_mma_encoding(version, warps, shape), shape)


def _targets(shape):
    """(name, encoding, swizzled) of the buffers an accumulator of `shape` may be stored in."""
    rows, columns = shape
    targets = [
        ("rows", swizzled_encoding(shape, 1, 0, 2), True),
        ("columns", swizzled_encoding(shape, 0, 1, 2), True),
        ("columns unswizzled", SwizzledSharedEncodingAttr(1, 1, 1, [0, 1]), False),
    ]
    for name, extent, transposed in (("nvmma", columns, False), ("nvmma transposed", rows, True)):
        swizzle = min(128, 2 * extent)
        if swizzle >= 32:
            targets.append((name, NVMMASharedEncodingAttr(swizzle, transposed, 16), True))
    return targets


# (mma version, warps, accumulator shape): x1 and x2 tiles, one warp to eight, copies
ACCUMULATORS = [
    (2, [1, 1], (8, 8)),
    (2, [1, 1], (16, 8)),
    (2, [1, 1], (16, 32)),
    (2, [2, 2], (32, 32)),
    (2, [2, 2], (64, 64)),
    (2, [4, 1], (128, 64)),
    (2, [2, 4], (64, 128)),
    (2, [4, 1], (32, 16)),
    (3, [4, 1], (64, 16)),
    (3, [4, 1], (64, 64)),
    (3, [8, 1], (128, 128)),
    (3, [4, 2], (128, 256)),
    (3, [4, 1], (128, 64)),
]


@pytest.mark.parametrize(("version", "warps", "shape"), ACCUMULATORS)
def test_every_element_lands_where_the_buffer_puts_it(version, warps, shape):
    """Plain `stmatrix` into row-major buffers, `.trans` into column-major ones; x4 wherever a
    warp holds four 8 x 8 blocks a row apart or beside, fewer below that."""
    src = _mma(version, warps, shape)
    for name, encoding, swizzled in _targets(shape):
        to_offset = shared_offsets(encoding, shape).invert()
        plan, conflict_free = simulate(src, to_offset)
        assert plan is not None, name
        assert plan.trans == ("columns" in name or "transposed" in name), name
        assert conflict_free or not swizzled, name
        assert plan.matrices == min(4, _blocks_per_warp(src)), name


def _blocks_per_warp(src) -> int:
    """The 8 x 8 blocks of distinct elements warp 0 holds."""
    held = {
        src.apply(register=r, lane=lane, warp=0)
        for r in range(src.in_dim_size("register"))
        for lane in range(32)
    }
    return len(held) // 64


ROWS_OF_8 = SwizzledSharedEncodingAttr(8, 1, 8, [1, 0])
SINGLE_ELEMENTS = SwizzledSharedEncodingAttr(1, 1, 8, [1, 0])


@pytest.mark.parametrize(
    ("src_encoding", "target"),
    [
        # 16-byte vectors along the rows: st.shared.v4 already writes 16 bytes a thread
        (BlockedEncodingAttr([1, 8], [8, 4], [4, 1], [1, 0]), ROWS_OF_8),
        # a swizzle of single elements: a row of a matrix is not 8 consecutive offsets
        (NvidiaMmaEncodingAttr(2, 0, [2, 2], [16, 8]), SINGLE_ELEMENTS),
    ],
)
def test_layouts_it_does_not_fit(src_encoding, target):
    shape = (64, 64)
    src = to_linear_layout(src_encoding, shape)
    assert simulate(src, shared_offsets(target, shape).invert())[0] is None


def test_only_16_bit_elements():
    src = _mma(3, [4, 1], (64, 64))
    offsets = src.compose(shared_offsets(ROWS_OF_8, (64, 64)).invert())
    assert plan_stmatrix(offsets, 16) is not None
    assert plan_stmatrix(offsets, 32) is None and plan_stmatrix(offsets, 8) is None


# -- conversions through shared memory --------------------------------------------------------
# (accumulator, destination, shape, stores by stmatrix (None: not), .trans)
ROUND_TRIPS = [
    ((3, [8, 1]), BlockedEncodingAttr([1, 8], [4, 8], [8, 1], [1, 0]), (128, 128), True, False),
    ((3, [4, 1]), BlockedEncodingAttr([1, 8], [8, 4], [4, 1], [1, 0]), (64, 64), True, False),
    ((3, [4, 1]), BlockedEncodingAttr([8, 1], [4, 8], [1, 4], [0, 1]), (64, 64), True, True),
    # 4 elements a thread, its lanes along the rows: the loads would be 4 bytes, not 8
    ((3, [4, 2]), BlockedEncodingAttr([1, 4], [2, 16], [8, 1], [1, 0]), (128, 256), False, False),
    ((2, [2, 2]), BlockedEncodingAttr([1, 8], [8, 4], [4, 1], [1, 0]), (64, 64), True, False),
    # the general layout stores 2 vectors and loads 2 of 16 bytes: stmatrix would load 4
    ((2, [2, 2]), BlockedEncodingAttr([1, 4], [2, 16], [4, 1], [1, 0]), (32, 32), False, False),
    ((2, [4, 1]), BlockedEncodingAttr([1, 8], [16, 2], [4, 1], [1, 0]), (16, 16), True, False),
    # a destination of single elements along the rows: 16-byte stores, 4-byte loads stay
    ((3, [8, 1]), BlockedEncodingAttr([1, 1], [1, 32], [2, 4], [1, 0]), (128, 128), False, False),
]


@pytest.mark.parametrize(("mma", "dst", "shape", "stmatrix", "trans"), ROUND_TRIPS)
def test_round_trips_store_by_stmatrix(mma, dst, shape, stmatrix, trans):
    """A conversion from an accumulator stores by `stmatrix` where a layout allowing it costs no
    more wavefronts nor instructions, its loads vectors of the blocked layout's rows (or
    columns)."""
    src = _mma(*mma, shape)
    plan = simulate_round_trip(src, to_linear_layout(dst, shape))
    assert isinstance(plan, Shared)
    assert (plan.stmatrix is not None) == stmatrix
    if stmatrix:
        assert plan.stmatrix.trans == trans
        assert plan.cost <= plan_convert(src, to_linear_layout(dst, shape), 16).cost


@pytest.mark.parametrize("element", ["f16", "bf16"])
@pytest.mark.parametrize(("mma", "dst", "shape"), [r[:3] for r in ROUND_TRIPS if r[3]])
def test_emitted_round_trips(mma, dst, shape, element):
    """The LLVM IR of those conversions on sm_90, executed for every thread (`stmatrix` as
    the PTX manual defines it, test_convert_emission.py): every register gets its element."""
    src_t = RankedTensorType(list(shape), FloatType(element), _mma_encoding(*mma, shape))
    got, expected = run_conversion(src_t, src_t.clone(encoding=dst))
    assert got == expected


def test_random_destinations_round_trip():
    """Random blocked destinations of accumulators: whichever stores the plan takes, every
    register receives its element."""
    rng = random.Random(15)
    chosen = 0
    for _ in range(60):
        version, warps = rng.choice([(2, 4), (3, 4), (3, 8), (2, 8)])
        shape = rng.choice([(64, 64), (128, 64), (64, 128)] if warps == 4 else [(128, 128)])
        mma_warps = [warps, 1] if version == 3 else rng.choice([[warps, 1], [2, warps // 2]])
        order = rng.choice([[1, 0], [0, 1]])
        per_thread = [1, 1]
        per_thread[order[0]] = rng.choice([1, 2, 4, 8])
        dst = BlockedEncodingAttr.for_shape(list(shape), per_thread, order, warps)
        plan = simulate_round_trip(_mma(version, mma_warps, shape), to_linear_layout(dst, shape))
        chosen += isinstance(plan, Shared) and plan.stmatrix is not None
    assert chosen >= 20, chosen


# -- epilogues through ptxas --------------------------------------------------------------------
@naiad.jit
def dot_store(a_desc, b_desc, c_desc, TRANSPOSE: tl.constexpr):
    """One tile of A @ B stored through a descriptor (the TMA store of an epilogue), C^T when
    TRANSPOSE."""
    out = tl.dot(a_desc.load([0, 0]), b_desc.load([0, 0])).to(c_desc.dtype)
    if TRANSPOSE:
        out = tl.trans(out)
    c_desc.store([0, 0], out)


def _dot_store_ptx(dtype, m, n, k, warps, transpose, arch, tmp_path) -> str:
    a, b = np.zeros((m, k), dtype), np.zeros((k, n), dtype)
    c = np.zeros((n, m) if transpose else (m, n), dtype)
    descriptors = [TensorDescriptor.from_tensor(x, list(x.shape)) for x in (a, b, c)]
    compiled = dot_store.warmup(
        *descriptors, TRANSPOSE=transpose, num_warps=warps, grid=(1,), target=f"cuda:{arch}"
    )
    text = compiled.asm["ptx"]
    assemble(text, arch, tmp_path)
    return text


def _stmatrix_counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for x, trans in re.findall(STMATRIX, text):
        key = f"x{x}{trans}"
        counts[key] = counts.get(key, 0) + 1
    return counts


@needs_ptxas
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize(
    ("m", "n", "k", "warps", "epilogue"),
    [
        (64, 64, 32, 4, 4),  # wgmma, 16 x 64 a warp: four x4
        (128, 128, 64, 8, 8),  # wgmma, 16 x 128 a warp: eight x4
        (32, 32, 32, 4, 1),  # mma.sync on 2 x 2 warps, 16 x 16 a warp: one x4
    ],
)
def test_accumulator_epilogues(dtype, transpose, m, n, k, warps, epilogue, tmp_path):
    """The accumulator goes to the TMA store's buffer by `stmatrix` x4, transposed into C^T's."""
    text = _dot_store_ptx(dtype, m, n, k, warps, transpose, "sm_90a", tmp_path)
    assert ("wgmma.mma_async" in text) == (m >= 64)
    assert _stmatrix_counts(text).get("x4.trans" if transpose else "x4") == epilogue


@needs_ptxas
def test_small_tiles_store_fewer_matrices(tmp_path):
    """mma.sync on 2 x 2 warps of a 16 x 16 tile: the warps along M hold copies of 16 x 8,
    one x2; the operands' 16 x 16 blocks (two elements a thread, a warp's 8 x 8) one x1 each."""
    text = _dot_store_ptx(np.float16, 16, 16, 16, 4, False, "sm_90a", tmp_path)
    assert _stmatrix_counts(text) == {"x2": 1, "x1": 2}


@needs_ptxas
def test_not_before_sm90(tmp_path):
    text = _dot_store_ptx(np.float16, 64, 64, 32, 4, False, "sm_80", tmp_path)
    assert "stmatrix.sync" not in text  # (the `.file` line names this file)


@naiad.jit
def chained_dots(a, b, x, out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """out = X @ (A @ B): the first accumulator is the second wgmma's B, read from a buffer."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    ab = tl.dot(
        tl.load(a + rm[:, None] * K + rk[None, :]), tl.load(b + rk[:, None] * N + rn[None, :])
    )
    y = tl.dot(tl.load(x + rm[:, None] * M + rm[None, :]), ab.to(tl.float16))
    tl.store(out + rm[:, None] * N + rn[None, :], y)


@needs_ptxas
def test_accumulator_buffers(tmp_path):
    """The buffer of a chained wgmma's B is stored from the accumulator itself (no conversion
    before `ttg.local_alloc`): 64 x 64 on 4 warps, four `stmatrix` x4 a thread."""
    compiled = chained_dots.warmup(
        "*fp16", "*fp16", "*fp16", "*fp32", M=64, N=64, K=64, num_warps=4, grid=(1,),
        target="cuda:sm_90a",
    )  # fmt: skip
    assert re.search(r"ttg\.local_alloc %\S+ : \(tensor<64x64xf16, #mma>\)", compiled.asm["ttgir"])
    text = compiled.asm["ptx"]
    assemble(text, "sm_90a", tmp_path)
    assert count(r"wgmma\.mma_async", text) == 8
    assert _stmatrix_counts(text) == {"x4": 4}


@needs_ptxas
@pytest.mark.skipif(link.linker_version() is None, reason="nvJitLink is not installed")
@pytest.mark.parametrize(
    ("variant", "loads"),
    [
        ("descriptor", 0),  # the TMA store's buffer, stored by stmatrix
        ("persistent", 8),  # masked pointer stores: a round trip, stmatrix then 16-byte loads
    ],
)
def test_tutorial_09_epilogues(variant, loads, tmp_path):
    """examples/09's kernels at the GPU's config (128 x 128 x 64, 8 warps): the epilogue's
    stores into shared memory are eight `stmatrix` x4 a thread, no `st.shared` left (there were
    32), and no register spilled."""
    tutorial = module_from_file(
        "naiad_example_09_stmatrix", ROOT / "examples" / "09_persistent_matmul.py"
    )
    meta = dict(PROGRAMS=132, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8)
    options = dict(num_warps=8, num_stages=3, grid=(1,), target="cuda:sm_90a")
    if variant == "descriptor":
        a, b, c = (np.zeros((4096, 4096), np.float16) for _ in range(3))
        arguments = [
            TensorDescriptor.from_tensor(x, block)
            for x, block in ((a, [128, 64]), (b, [64, 128]), (c, [128, 128]))
        ]
        kernel = tutorial.matmul_descriptor_kernel
    else:
        arguments = ["*fp16"] * 3
        kernel = tutorial.matmul_persistent_kernel
    compiled = kernel.warmup(*arguments, 4096, 4096, 4096, **meta, **options)
    text = compiled.asm["ptx"]
    assemble(text, "sm_90a", tmp_path)
    assert _stmatrix_counts(text) == {"x4": 8}
    assert "st.shared" not in text
    assert count(r"ld\.shared\.v4", text) == loads
    assert compiled.n_spills == 0
