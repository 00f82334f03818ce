"""`ttg.convert_layout` to an `mma.sync` operand through `ldmatrix`, without a GPU: the plan
(`lowering/ldmatrix.py`) run through a simulator of the swizzled stores and of `ldmatrix` as
the PTX manual defines it, thread by thread, for many operand shapes, warps, element widths
and both operands: every destination register must hold the element its dot_op layout says,
every matrix row read must be bank-conflict free, and the stores of the layouts the
pipeline chooses too. Then dot kernels through PTX that ptxas assembles for sm_80 and sm_90a.
Values on the GPU: tests/gpu/test_ldmatrix_gpu.py.
"""

import numpy as np
import pytest
from test_dot_lowering import (
    DOT_KERNELS,
    ROOT,
    _case_call,
    _case_module,
    _dots,
    _load,
    _ptx_of,
    _ttgir,
)
from test_lowering import ARCHES, count
from test_toolchain import needs_ptxas

from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.lowering.indexing import evaluate, thread_plan
from naiad.backends.nvidia.lowering.ldmatrix import plan_ldmatrix
from naiad.dialects.ttg.attributes import (
    BlockedEncodingAttr,
    DotOperandEncodingAttr,
    NvidiaMmaEncodingAttr,
)
from naiad.ir import FloatType, IntegerType, RankedTensorType

# name: (element type, kWidth)
ELEMENTS = {
    "f16": (FloatType("f16"), 2),
    "bf16": (FloatType("bf16"), 2),
    "i8": (IntegerType(8), 4),
    "e4m3": (FloatType("f8E4M3FN"), 4),
    "f32": (FloatType("f32"), 1),
}


# -- the simulator ------------------------------------------------------------------------------
def _thread_offsets(layout, threads: int) -> list[int]:
    """The thread part of `layout`'s offset for every thread, as the emitted code computes."""
    plan = thread_plan(layout)
    return [evaluate(plan, tid)[0] for tid in range(threads)]


def _conflict_free(chunks: list[tuple[int, int]]) -> bool:
    """Whether one phase of shared-memory accesses, (byte address, bytes) each, touches no
    bank twice at different words (each bank serves one 4-byte word per wavefront)."""
    words: dict[int, set[int]] = {}
    for address, nbytes in chunks:
        for word in range(address // 4, (address + max(nbytes, 4) - 1) // 4 + 1):
            words.setdefault(word % 32, set()).add(word)
    return all(len(w) == 1 for w in words.values())


def _store(plan, src, threads: int, ids, store_conflicts: list) -> np.ndarray:
    """The scratch (element ids, -1 where nothing was stored) after every thread's stores."""
    scratch = np.full(plan.shared.in_dim_size("offset"), -1, dtype=np.int64)
    thread = _thread_offsets(plan.store_offsets, threads)
    nbytes = plan.element_bytes
    for first in plan.store_registers:
        constant = plan.store_offsets.apply(register=first)[0]
        offsets = [thread[tid] ^ constant for tid in range(threads)]
        for tid, offset in enumerate(offsets):
            assert offset % plan.vector == 0  # aligned vectors
            for i in range(plan.vector):
                held = ids[src.apply(register=first + i, lane=tid % 32, warp=tid // 32)]
                assert scratch[offset + i] in (-1, held)
                scratch[offset + i] = held
        # 16-byte stores go in phases of 8 threads, 8-byte ones of 16, narrower of 32
        phase = 32 // max(1, plan.vector * nbytes // 4)
        for start in range(0, threads, phase):
            chunks = [(o * nbytes, plan.vector * nbytes) for o in offsets[start : start + phase]]
            store_conflicts.append(not _conflict_free(chunks))
    return scratch


def _ldmatrix(scratch, rows: list[int], plan, lane: int) -> list[int]:
    """What `lane` receives from one matrix whose rows start at `rows` (element offsets):
    the elements of its 32-bit word, lowest first."""
    per_row = 16 // plan.element_bytes
    for start in rows:
        assert start % per_row == 0  # each row is 16 aligned bytes
    if not plan.trans:
        row = rows[lane // 4]
        return [int(scratch[row + plan.per_word * (lane % 4) + i]) for i in range(plan.per_word)]
    return [int(scratch[rows[2 * (lane % 4) + i] + lane // 4]) for i in range(2)]


def simulate(src_t, dst_t):
    """Run the plan of `src_t -> dst_t` for every thread; return the plan (None when it does
    not apply) and whether any store phase had a bank conflict."""
    plan = plan_ldmatrix(src_t, dst_t)
    if plan is None:
        return None, False
    src, dst = (to_linear_layout(t.encoding, t.shape) for t in (src_t, dst_t))
    ids = np.arange(int(np.prod(src_t.shape))).reshape(src_t.shape)
    warps = dst.in_dim_size("warp")
    threads = 32 * warps
    conflicts: list = []
    scratch = _store(plan, src, threads, ids, conflicts)
    thread = _thread_offsets(plan.load_offsets, threads)
    for instruction in range(plan.instructions):
        constant = plan.load_offsets.apply(register=instruction)[0]
        for warp in range(warps):
            address = [thread[32 * warp + lane] ^ constant for lane in range(32)]
            for m in range(plan.matrices):
                rows = address[8 * m : 8 * m + 8]
                distinct = sorted(set(rows))
                groups = {(r * plan.element_bytes // 16) % 8 for r in distinct}
                assert len(groups) == len(distinct), "ldmatrix rows share banks"
    received = {}
    for warp in range(warps):
        for lane in range(32):
            for w, (instruction, matrix) in enumerate(plan.words):
                constant = plan.load_offsets.apply(register=instruction)[0]
                base = 32 * warp + 8 * matrix
                rows = [thread[base + i] ^ constant for i in range(8)]
                for i, value in enumerate(_ldmatrix(scratch, rows, plan, lane)):
                    received[(warp, lane, w * plan.per_word + i)] = value
    for (warp, lane, r), value in received.items():
        assert value == ids[dst.apply(register=r, lane=lane, warp=warp)], (warp, lane, r)
    assert len(received) == threads * dst.in_dim_size("register")
    return plan, any(conflicts)


def _types(element: str, op_idx: int, shape, mma_warps, src_order, vector: int):
    elem, k_width = ELEMENTS[element]
    rank = len(shape)
    mma = NvidiaMmaEncodingAttr(2, 0, mma_warps, [16, 8] if rank == 2 else [1, 16, 8])
    dst = DotOperandEncodingAttr(op_idx, mma, k_width)
    per_thread = [1] * rank
    per_thread[src_order[0]] = min(vector, shape[src_order[0]])
    blocked = BlockedEncodingAttr.for_shape(shape, per_thread, src_order, int(np.prod(mma_warps)))
    return RankedTensorType(shape, elem, blocked), RankedTensorType(shape, elem, dst)


# (operand shape, mma warps): one warp to eight; tiles smaller than the warps (copies)
SHAPES = [
    ((16, 16), [1, 1]),
    ((16, 32), [1, 1]),
    ((64, 32), [2, 2]),
    ((32, 64), [2, 2]),
    ((128, 64), [4, 1]),
    ((64, 128), [1, 4]),
    ((128, 128), [4, 2]),
    ((64, 64), [2, 4]),
    ((16, 16), [2, 2]),
    ((32, 16), [1, 4]),
    ((2, 32, 32), [4, 1, 1]),
]


def _fits(shape, element: str) -> bool:
    """Whether K of either operand of `shape` holds one instruction of `element`."""
    return min(shape[-2:]) >= 8 * ELEMENTS[element][1]


@pytest.mark.parametrize("order", ["k_fastest", "mn_fastest"])
@pytest.mark.parametrize("op_idx", [0, 1])
@pytest.mark.parametrize(
    ("shape", "warps", "element"),
    [(s, w, e) for s, w in SHAPES for e in sorted(ELEMENTS) if _fits(s, e)],
)
def test_registers_hold_the_dot_operand(shape, warps, element, op_idx, order):
    """Every register of every thread holds the element the dot_op layout says, read by
    bank-conflict-free ldmatrix rows; 8- and 32-bit operands only along K (no `.trans`)."""
    rank = len(shape)
    k_dim = rank - 1 if op_idx == 0 else rank - 2
    mn_dim = 2 * rank - 3 - k_dim
    fastest = k_dim if order == "k_fastest" else mn_dim
    src_order = [fastest, 2 * rank - 3 - fastest, *range(rank - 3, -1, -1)]
    vector = 16 // (ELEMENTS[element][0].width // 8)
    src_t, dst_t = _types(element, op_idx, shape, warps, src_order, vector)
    plan, _ = simulate(src_t, dst_t)
    if order == "mn_fastest" and element not in ("f16", "bf16"):
        assert plan is None
        return
    assert plan is not None
    assert plan.trans == (order == "mn_fastest")


@pytest.mark.parametrize("vector", [1, 2, 4, 8])
@pytest.mark.parametrize("order", [[1, 0], [0, 1]])
def test_narrow_source_vectors(vector, order):
    """Sources holding fewer contiguous elements per thread store narrower vectors."""
    src_t, dst_t = _types("f16", 0, (64, 64), [2, 2], order, vector)
    plan, _ = simulate(src_t, dst_t)
    assert plan.vector == vector


@pytest.mark.parametrize(
    ("case", "m", "n", "k", "num_warps"),
    [("f16", 64, 64, 32, 4), ("f16", 128, 128, 64, 8), ("bf16", 32, 32, 32, 4)],
)
def test_pipeline_layouts_store_without_conflicts(case, m, n, k, num_warps):
    """The layouts coalesce gives the dot kernel's loads store conflict-free into the operand
    buffers (`ttg.local_alloc`, read by `ttg.local_load`s of K slices)."""
    module = _dot_module(case, m, n, k, num_warps)
    allocs = [op for op in module.walk() if op.name == "ttg.local_alloc"]
    assert len(allocs) == 2
    for alloc in allocs:
        load = next(
            op
            for op in module.walk()
            if op.name == "ttg.local_load" and _buffer_of(op.src) is alloc.result
        )
        dst_t = load.result.type.clone(shape=alloc.result.type.shape)
        plan, conflicts = simulate(alloc.src.type, dst_t)
        assert plan is not None
        assert not conflicts


def _buffer_of(view):
    """The buffer a memdesc view reads."""
    while view.defining_op.name != "ttg.local_alloc":
        view = view.defining_op.operands[0]
    return view


def test_not_for_accumulators_or_other_layouts():
    """An mma accumulator feeding the next dot, and FMA operands, keep their own paths."""
    src_t, dst_t = _types("f16", 0, (64, 32), [2, 2], [1, 0], 8)
    mma = dst_t.encoding.parent
    acc = RankedTensorType(dst_t.shape, dst_t.element_type, mma)
    assert plan_ldmatrix(acc, dst_t) is None
    fma = DotOperandEncodingAttr(0, src_t.encoding, 0)
    assert plan_ldmatrix(src_t, RankedTensorType(src_t.shape, src_t.element_type, fma)) is None


# -- dot kernels through ptxas ------------------------------------------------------------------
def _dot_module(case, m, n, k, num_warps, arch="sm_80"):
    return _ttgir(DOT_KERNELS.dot, *_case_call(case, m, n, k), arch, num_warps)


def _ldmatrix_counts(text: str) -> tuple[int, int]:
    plain = count(r"ldmatrix\.sync\.aligned\.m8n8\.x\d\.shared\.b16", text)
    return plain, count(r"ldmatrix\.sync\.aligned\.m8n8\.x\d\.trans\.shared\.b16", text)


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize(
    ("case", "plain", "trans"),
    [
        # 32 x 32 x 32 on 2 x 2 warps: A 16 x 32 per warp (two x4), B 32 x 16 (two x4)
        ("f16", 2, 2),
        ("bf16", 2, 2),
        ("f16_acc16", 2, 2),
        ("tf32", 4, 0),  # A: f32 rows along K; B (N contiguous) has no `.trans` of 32 bits
        ("int8", 1, 0),
        ("e4m3", 1, 0),  # as int8: words of four bytes, upcast to f16 at the dot
        ("bf16x3", 0, 0),  # f32 split into bf16 after the conversion
    ],
)
def test_dot_kernels_use_ldmatrix(case, plain, trans, arch, tmp_path):
    text = _ptx_of(_case_module(case, arch), arch, tmp_path)
    assert _ldmatrix_counts(text) == (plain, trans)


@needs_ptxas
def test_native_fp8_dots_use_ldmatrix(tmp_path):
    """sm_89 has an fp8 mma.sync of its own, whose operands go through ldmatrix."""
    text = _ptx_of(_case_module("e4m3", "sm_89"), "sm_89", tmp_path)
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32" in text
    assert _ldmatrix_counts(text) == (1, 0)


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize(
    ("a_k_major", "b_k_major", "plain", "trans"),
    [(True, True, 4, 0), (False, False, 0, 4), (False, True, 2, 2)],
)
def test_operand_majors(a_k_major, b_k_major, plain, trans, arch, tmp_path):
    """`.trans` exactly for the operands stored with M or N contiguous."""
    args = ("*fp16", "*fp16", "*fp32")
    kwargs = {"M": 32, "N": 32, "K": 32, "A_K_MAJOR": a_k_major, "B_K_MAJOR": b_k_major}
    module = _ttgir(DOT_KERNELS.dot_majors, args, kwargs, arch)
    text = _ptx_of(module, arch, tmp_path)
    assert _ldmatrix_counts(text) == (plain, trans)
    assert count(r"mma\.sync", text) == 4


@needs_ptxas
@pytest.mark.parametrize(
    ("m", "n", "k", "num_warps", "x1_x2_x4", "arch"),
    [
        # 2 x 2 warps: A 16 x 16, one x4 (the warps along M hold copies); B 16 x 8 a warp: x2
        *((16, 16, 16, 4, (0, 1, 1), arch) for arch in ARCHES),
        *((16, 8, 16, 1, (0, 1, 1), arch) for arch in ARCHES),
        # 4 x 2 warps: A 32 x 64 a warp, 32 words (8 x4); B 64 x 64, 64 words (16 x4). On
        # sm_90a this dot takes wgmma (test_wgmma.py).
        (128, 128, 64, 8, (0, 0, 24), "sm_80"),
    ],
)
def test_small_and_large_tiles(m, n, k, num_warps, x1_x2_x4, arch, tmp_path):
    module = _dot_module("f16", m, n, k, num_warps, arch)
    assert len(_dots(module)) == max(1, k // 16)  # cut along K, one instruction deep
    text = _ptx_of(module, arch, tmp_path)
    got = tuple(count(rf"ldmatrix\.sync\.aligned\.m8n8\.x{x}\.", text) for x in (1, 2, 4))
    assert got == x1_x2_x4


@needs_ptxas
def test_tutorial_matmul_operands(tmp_path):
    """The tutorial's K loop: 64 x 32 A (K contiguous) and 32 x 64 B (N contiguous) a step, on
    2 x 2 warps: four x4 of each, B's transposed (sm_80; sm_90a takes wgmma)."""
    arch = "sm_80"
    tutorial = _load(ROOT / "examples" / "03_matmul.py", "ldmatrix_matmul")
    args = ("*fp16", "*fp16", "*fp16", 512, 512, 512, 512, 1, 512, 1, 512, 1)
    sizes = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}
    module = _ttgir(tutorial.matmul_kernel.fn, args, {**sizes, "ACTIVATION": "leaky_relu"}, arch)
    text = _ptx_of(module, arch, tmp_path)
    assert _ldmatrix_counts(text) == (4, 4)
