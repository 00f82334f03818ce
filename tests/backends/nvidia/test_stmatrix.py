"""Stores of tensor-core accumulators into shared buffers with `stmatrix` (sm_90), without a GPU:
the plan (`lowering/stmatrix.py`) run through a simulator of the instruction as the PTX manual
defines it, thread by thread, for `#ttg.nvidia_mma` versions 2 and 3 over many tile shapes and
warps, into swizzled and `nvmma_shared` buffers of either order: every element must land at the
offset the buffer's layout gives it, the rows of one matrix in distinct bank groups where the
buffer is swizzled; layouts the instruction does not fit keep the vector stores. Then kernels
whose epilogue stores an accumulator, through PTX that ptxas assembles for sm_90a. Values on the
GPU: tests/gpu/test_stmatrix_gpu.py.
"""

import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from module_files import module_from_file
from test_lowering import assemble
from test_toolchain import needs_ptxas

import naiad
import naiad.language as tl
from naiad.backends.nvidia import link
from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.lowering.indexing import evaluate, thread_plan
from naiad.backends.nvidia.lowering.ldmatrix import shared_offsets, swizzled_encoding
from naiad.backends.nvidia.lowering.stmatrix import plan_stmatrix
from naiad.dialects.ttg.attributes import (
    BlockedEncodingAttr,
    NvidiaMmaEncodingAttr,
    NVMMASharedEncodingAttr,
    SwizzledSharedEncodingAttr,
)
from naiad.tools.tensor_descriptor import TensorDescriptor

ROOT = Path(__file__).resolve().parents[3]
STMATRIX = r"stmatrix\.sync\.aligned\.m8n8\.x(\d)(\.trans)?\.shared\.b16"


# -- the simulator ------------------------------------------------------------------------------
def _rows_conflict_free(rows: list[int]) -> bool:
    """Whether the distinct 16-byte rows of one matrix (element offsets) meet distinct bank
    groups: one wavefront."""
    distinct = sorted(set(rows))
    return len({(r * 2 // 16) % 8 for r in distinct}) == len(distinct)


def simulate(src, to_offset):
    """Run the `stmatrix` plan of the register layout `src` into a buffer whose element ->
    offset map is `to_offset`, for every thread; check the buffer holds every element where
    `to_offset` puts it. Returns the plan (None when it does not apply) and whether every
    matrix's rows met distinct bank groups."""
    plan = plan_stmatrix(src.compose(to_offset), 16)
    if plan is None:
        return None, True
    shape = tuple(src.out_shape.values())
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    scratch = np.full(to_offset.out_dim_size("offset"), -1, dtype=np.int64)
    warps = src.in_dim_size("warp")
    thread = [evaluate(thread_plan(plan.address), tid)[0] for tid in range(32 * warps)]
    conflict_free = True
    for instruction, firsts in enumerate(plan.words):
        constant = plan.address.apply(register=instruction)[0]
        for warp in range(warps):
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
    for coords in np.ndindex(*shape):
        assert scratch[to_offset.apply(**dict(zip(to_offset.in_dims, coords)))[0]] == ids[coords]
    return plan, conflict_free


def _mma(version: int, warps, shape):
    instr = [16, 8] if version == 2 else [16, min(shape[1] // warps[1], 256), 16]
    return to_linear_layout(NvidiaMmaEncodingAttr(version, 0, warps, instr), shape)


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
    assert "stmatrix" not in text


@needs_ptxas
@pytest.mark.skipif(link.linker_version() is None, reason="nvJitLink is not installed")
def test_tutorial_09_epilogue(tmp_path):
    """examples/09's descriptor kernel at the GPU's config: its TMA-store epilogue is eight
    `stmatrix` x4 a thread, no `st.shared` left, and no register spilled."""
    tutorial = module_from_file(
        "naiad_example_09_stmatrix", ROOT / "examples" / "09_persistent_matmul.py"
    )
    a, b, c = (np.zeros((4096, 4096), np.float16) for _ in range(3))
    descriptors = [
        TensorDescriptor.from_tensor(x, block)
        for x, block in ((a, [128, 64]), (b, [64, 128]), (c, [128, 128]))
    ]
    compiled = tutorial.matmul_descriptor_kernel.warmup(
        *descriptors, 4096, 4096, 4096, PROGRAMS=132, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
        GROUP_M=8, num_warps=8, num_stages=3, grid=(1,), target="cuda:sm_90a",
    )  # fmt: skip
    text = compiled.asm["ptx"]
    assemble(text, "sm_90a", tmp_path)
    assert _stmatrix_counts(text) == {"x4": 8}
    assert "st.shared" not in text
    assert compiled.n_spills == 0
