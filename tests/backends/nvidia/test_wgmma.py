"""Hopper's `wgmma` without a GPU: the `#ttg.nvmma_shared` layout is the hardware's swizzle,
every element an instruction reads through the lowering's matrix descriptors is the operand
element it multiplies (the PTX manual's canonical layouts, simulated), the version 3
accumulator holds the instruction's fragment, and pipelined wgmma TTGIR computes what its
TTIR did (in the evaluator). Values on the GPU: tests/gpu/test_dot_gpu.py.
"""

import itertools
import re

import ml_dtypes
import numpy as np
import pytest
from test_lowering import assemble
from test_pipeline_loads import (
    DOT_KERNELS,
    TUTORIAL_CONFIGS,
    _loop_ops,
    _modules,
    _run,
    _tutorial_matmul,
)
from test_toolchain import needs_ptxas

import naiad.language as tl
from naiad.backends.nvidia import ptx
from naiad.backends.nvidia import target as nv_target
from naiad.backends.nvidia.compiler import LLIR_PIPELINE
from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.lowering import lower_module
from naiad.backends.nvidia.lowering.matrix_descriptors import matrix_descriptor
from naiad.dialects.ttg.attributes import NvidiaMmaEncodingAttr, NVMMASharedEncodingAttr
from naiad.dialects.ttg.types import MemDescType
from naiad.passes.pipeline import run_pipeline
from naiad.runtime.evaluator import evaluate

_MODES = {1: 128, 2: 64, 3: 32}


def _element_to_offset(encoding, shape):
    return to_linear_layout(encoding, shape).invert()


def _swizzled(address: int, swizzle: int) -> int:
    """The hardware's swizzle of a byte address: bits [4, 4 + log2(swizzle / 16)) XOR-ed with
    the bits three above them."""
    mask = swizzle // 16 - 1
    return address ^ (((address >> 7) & mask) << 4)


def _decode(bits: int) -> tuple[int, int, int]:
    """(LBO bytes, SBO bytes, swizzle bytes) of a descriptor's constant part."""
    lbo = ((bits >> 16) & 0x3FFF) << 4
    sbo = ((bits >> 32) & 0x3FFF) << 4
    return lbo, sbo, _MODES[bits >> 62]


def _hardware_address(start, lbo, sbo, swizzle, nbytes, mn, k, mn_major):
    """The byte the instruction reads for element (mn, k) of its operand block (M or N row
    `mn`, K column `k`), by the canonical layouts of the PTX manual."""
    if mn_major:
        along = mn * nbytes
        linear = (along // swizzle) * lbo + along % swizzle + (k % 8) * swizzle + (k // 8) * sbo
    else:
        along = k * nbytes
        linear = (mn // 8) * sbo + (mn % 8) * swizzle + (along // swizzle) * lbo + along % swizzle
    return _swizzled(start + linear, swizzle)


@pytest.mark.parametrize("swizzle", [32, 64, 128])
@pytest.mark.parametrize("transposed", [False, True])
def test_nvmma_shared_is_the_hardware_swizzle(swizzle, transposed):
    """Element (r, c) of a 1024-byte aligned buffer lies where the swizzle puts row r's
    16-byte group of c."""
    rows, cols = 32, 4 * swizzle // 2  # f16: four column blocks
    shape = (cols, rows) if transposed else (rows, cols)
    to_offset = _element_to_offset(NVMMASharedEncodingAttr(swizzle, transposed, 16), shape)
    row_elements = swizzle // 2
    for r, c in itertools.product(range(rows), range(cols)):
        coords = (c, r) if transposed else (r, c)
        got = to_offset.apply(dim0=coords[0], dim1=coords[1])[0] * 2
        block, within = divmod(c, row_elements)
        linear = block * rows * swizzle + r * swizzle + within * 2
        assert got == _swizzled(linear, swizzle), (r, c)


# (operand, shape of its buffer, contiguous dimension, swizzle, element bits): the tutorial's A
# and B tiles, a narrow B, attention's K^T (B whose K is contiguous), and the K-major operands of
# 8-bit and tf32 dots.
_OPERANDS = [
    ("A", (128, 64), 1, 128, 16),
    ("A", (128, 32), 1, 64, 16),
    ("A", (64, 16), 1, 32, 16),
    ("B", (64, 256), 1, 128, 16),
    ("B", (32, 32), 1, 64, 16),
    ("B", (64, 128), 0, 128, 16),
    ("A", (128, 64), 0, 128, 16),
    ("A", (128, 128), 1, 128, 8),
    ("B", (128, 256), 0, 128, 8),
    ("B", (64, 64), 0, 64, 8),
    ("A", (64, 32), 1, 128, 32),
    ("B", (32, 64), 0, 128, 32),
]


@pytest.mark.parametrize(("operand", "shape", "contiguous", "swizzle", "bits"), _OPERANDS)
def test_descriptors_read_the_operand_elements(operand, shape, contiguous, swizzle, bits):
    """Each K step's block (32 bytes of K) at each row (A) or column (B) offset a warpgroup
    or repetition starts from: the element the hardware reads at (mn, k) is the operand's."""
    nbytes = bits // 8
    encoding = NVMMASharedEncodingAttr(swizzle, contiguous == 0, bits)
    to_offset = _element_to_offset(encoding, shape)
    k_dim = 1 if operand == "A" else 0
    descriptor = matrix_descriptor(to_offset, swizzle, nbytes, k_dim)
    lbo, sbo, mode = _decode(descriptor.bits)
    assert mode == swizzle
    assert descriptor.transposed == (contiguous != k_dim)
    from_offset = to_linear_layout(encoding, shape)
    base = 8192  # a multiple of 1024, as allocate-shared-memory places it
    k_extent, mn_extent = shape[k_dim], shape[1 - k_dim]
    block_mn, k_step = 64 if operand == "A" else min(mn_extent, 64), 32 // nbytes
    for mn0, k0 in itertools.product(range(0, mn_extent, block_mn), range(0, k_extent, k_step)):
        corner = (mn0, k0) if operand == "A" else (k0, mn0)
        start = base + to_offset.apply(dim0=corner[0], dim1=corner[1])[0] * nbytes
        for mn, k in itertools.product(range(block_mn), range(k_step)):
            address = _hardware_address(
                start, lbo, sbo, swizzle, nbytes, mn, k, descriptor.transposed
            )
            element = from_offset.apply(offset=(address - base) // nbytes)
            want = (mn0 + mn, k0 + k) if operand == "A" else (k0 + k, mn0 + mn)
            assert element == want, (mn0, k0, mn, k)


@pytest.mark.parametrize("warps", [[4, 1], [8, 1], [4, 2]])
def test_accumulator_is_the_instruction_fragment(warps):
    """Register i of lane l in warp w of a warpgroup holds row 16 (w % 4) + l / 4 + 8 (i / 2
    % 2), column 8 (i / 4) + 2 (l % 4) + i % 2 of the warpgroup's block."""
    n = 64
    shape = (64 * warps[0] // 4, n * warps[1])
    layout = to_linear_layout(NvidiaMmaEncodingAttr(3, 0, warps, [16, n, 16]), shape)
    for i, lane, warp in itertools.product(range(n // 2), range(32), range(4)):
        row = 16 * warp + lane // 4 + 8 * (i // 2 % 2)
        col = 8 * (i // 4) + 2 * (lane % 4) + i % 2
        assert layout.apply(register=i, lane=lane, warp=warp) == (row, col)


def test_pipelined_wgmma_loop_keeps_the_values():
    """On sm_90a the K loop's dot reads its ring's slots directly (`ttng.warp_group_dot`):
    the values of the TTIR for every trip count."""
    args = ("*fp16", "*fp16", "*fp16")
    kwargs = {"M": 64, "N": 64, "K": 128, "BK": 32}
    before, after = _modules(DOT_KERNELS.matmul_loop, args, kwargs, 3)
    body = _loop_ops(after)
    assert "ttng.warp_group_dot" in body
    assert "ttg.local_load" not in body
    for k in (0, 16, 48, 160, 256):
        got, want = _run(after, k, seed=k), _run(before, k, seed=k)
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3)


def test_tutorial_matmul_loop_issues_wgmma_asynchronously():
    """The tutorial's largest tile: the K loop's dot reads two ring slots, returns at once,
    and waits for the previous iteration's; its rings hold one slot more than the stages."""
    module = _tutorial_matmul(TUTORIAL_CONFIGS[0], "sm_90a")
    body = _loop_ops(module)
    assert "ttg.convert_layout" not in body and "ttg.local_load" not in body
    (dot,) = [op for op in module.walk() if op.name == "ttng.warp_group_dot"]
    assert dot.attributes["isAsync"].value
    waits = [op.pendings.value for op in module.walk() if op.name == "ttng.warp_group_dot_wait"]
    assert waits == [1, 0]
    rings = [op.result.type.shape[0] for op in module.walk() if op.name == "ttg.local_alloc"]
    assert rings == [TUTORIAL_CONFIGS[0][4] + 1] * 2


@pytest.mark.parametrize(("arch", "wgmma"), [("sm_90a", True), ("sm_90", False)])
def test_only_sm_90a_takes_wgmma(arch, wgmma):
    """wgmma is an arch-specific instruction: sm_90 (without `a`) keeps mma.sync."""
    module = _tutorial_matmul(TUTORIAL_CONFIGS[2], arch)
    names = {op.name for op in module.walk()}
    assert ("ttng.warp_group_dot" in names) == wgmma
    assert ("tt.dot" in names) != wgmma


def test_chained_dots_keep_the_values():
    """Both dots of a chain on wgmma, the second's A (the first's result, as f16) from
    registers: the values of the TTIR."""
    m, k = 64, 32
    args = ("*fp16", "*fp16", "*fp16", "*fp32")
    before, after = _modules(DOT_KERNELS.chain, args, {"M": m, "K": k}, 3)
    dots = [op for op in after.walk() if op.name == "ttng.warp_group_dot"]
    assert [isinstance(dot.a.type, MemDescType) for dot in dots] == [True, False]
    gen = np.random.default_rng(11)
    inputs = [gen.standard_normal(m * k).astype(np.float16) for _ in range(3)]
    got, want = (_chain_output(module, inputs) for module in (after, before))
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def _chain_output(module, inputs: list) -> np.ndarray:
    """What a chain kernel's module writes (f32, poisoned first) from `inputs`."""
    out = np.full(inputs[0].size, 7.0, dtype=np.float32)
    func = next(op for op in module.walk() if op.name == "tt.func")
    evaluate(module, func.sym_name.value, [*inputs, out], grid=(1,))
    return out


# Operand types wgmma reads K-major only: (numpy type, accumulator, instruction type text).
_K_MAJOR_TYPES = {
    "fp8e4nv": (ml_dtypes.float8_e4m3fn, "fp32", ".f32.e4m3.e4m3"),
    "fp8e5": (ml_dtypes.float8_e5m2, "fp32", ".f32.e5m2.e5m2"),
    "i8": (np.int8, "i32", ".s32.s8.s8"),
    "fp32": (np.float32, "fp32", ".f32.tf32.tf32"),
}


def _typed_loop(dtype: str, b_k_major: bool, imprecise=None):
    """(TTIR, pipelined TTGIR) of a 64 x 64 K loop of `dtype` dots, K tiles of 32."""
    acc = _K_MAJOR_TYPES[dtype][1]
    args = (f"*{dtype}", f"*{dtype}", f"*{acc}")
    kwargs = {"M": 64, "N": 64, "K": 128, "BK": 32, "B_K_MAJOR": b_k_major}
    kwargs.update(ACC=getattr(tl, {"fp32": "float32", "i32": "int32"}[acc]), IMPRECISE=imprecise)
    return _modules(DOT_KERNELS.matmul_loop_typed, args, kwargs, 3)


def _evaluate_typed(module, dtype: str, k: int, seed: int) -> np.ndarray:
    gen = np.random.default_rng(seed)
    numpy_type = _K_MAJOR_TYPES[dtype][0]
    if numpy_type is np.int8:
        a, b = (gen.integers(-128, 128, 64 * max(k, 1), dtype=np.int8) for _ in range(2))
        c = np.full(64 * 64, 7, dtype=np.int32)
    else:
        a, b = (gen.standard_normal(64 * max(k, 1)).astype(numpy_type) for _ in range(2))
        c = np.full(64 * 64, 7.0, dtype=np.float32)
    func = next(op for op in module.walk() if op.name == "tt.func")
    evaluate(module, func.sym_name.value, [a, b, c, k], grid=(1,))
    return c


@pytest.mark.parametrize(
    ("dtype", "b_k_major"),
    [
        ("fp8e4nv", True),
        ("i8", True),
        ("fp32", True),
        ("fp8e4nv", False),
        pytest.param("fp8e5", True, marks=pytest.mark.full),
        pytest.param("i8", False, marks=pytest.mark.full),
        pytest.param("fp32", False, marks=pytest.mark.full),
    ],
)
def test_k_major_only_types_take_wgmma(dtype, b_k_major):
    """tf32, int8 and fp8 dots take wgmma where both operands are loaded K-major (its only
    order for them), reading them from `cp.async` rings; a B loaded with N contiguous keeps
    mma.sync for tf32 and int8, whose mma.sync Hopper runs natively, while fp8 (whose
    mma.sync it does not) takes wgmma anyway: that B is stored K-major from registers in each
    iteration (no copy can transpose it), and the dot is waited for before the next store.
    The values of the TTIR for every trip count."""
    before, after = _typed_loop(dtype, b_k_major)
    dots = [op for op in after.walk() if op.name == "ttng.warp_group_dot"]
    takes_wgmma = b_k_major or dtype.startswith("fp8")
    assert len(dots) == takes_wgmma
    if takes_wgmma:
        (dot,) = dots
        assert (dot.a.type.encoding.transposed, dot.b.type.encoding.transposed) == (False, True)
        copies = _loop_ops(after).count("ttg.async_copy_global_to_local")
        assert copies == (2 if b_k_major else 1)
        assert ("isAsync" in dot.attributes) == b_k_major
    for k in (0, 32, 100):
        got, want = _evaluate_typed(after, dtype, k, k), _evaluate_typed(before, dtype, k, k)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # f32 sums in any order


@pytest.mark.parametrize(("imprecise", "wgmma"), [(None, True), (32, True), (16, False)])
def test_fp8_accumulation_follows_max_num_imprecise_acc(imprecise, wgmma):
    """On sm_90a an fp8 dot that names no `max_num_imprecise_acc` sums all of K in wgmma's
    accumulator (Triton's default there, 2^30); one that names fewer than 32 elements keeps
    mma.sync."""
    before, after = _typed_loop("fp8e4nv", True, imprecise)
    (dot,) = [op for op in before.walk() if op.name == "tt.dot"]
    assert dot.attributes["maxNumImpreciseAcc"].value == (2**30 if imprecise is None else imprecise)
    names = {op.name for op in after.walk()}
    assert ("ttng.warp_group_dot" in names) == wgmma


def _ptx(module, tmp_path) -> str:
    """The PTX of a TTGIR module for sm_90a, assembled by ptxas without spills."""
    run_pipeline(LLIR_PIPELINE, module)
    text = ptx.compile_ptx(lower_module(module, "cuda:sm_90a"), nv_target.cuda_target("sm_90a"))
    assert "0 bytes spill stores" in assemble(text.text, "sm_90a", tmp_path)
    return text.text


@needs_ptxas
@pytest.mark.parametrize("dtype", sorted(_K_MAJOR_TYPES))
def test_k_major_only_types_emit_their_instruction(dtype, tmp_path):
    """The instruction of each type, without transpose flags (and without operand scales for
    int8); fp8 with `max_num_imprecise_acc=32` over a K tile of 32 adds each instruction's
    partial sum into the f32 accumulator."""
    _, after = _typed_loop(dtype, True, 32 if dtype.startswith("fp8") else None)
    text = _ptx(after, tmp_path)
    instructions = [line for line in text.splitlines() if "wgmma.mma_async" in line]
    assert instructions and all(_K_MAJOR_TYPES[dtype][2] in line for line in instructions)
    tail = ", p;" if dtype == "i8" else ", p, 1, 1;"
    assert all(line.rstrip().endswith(tail + " }") for line in instructions)
    if dtype.startswith("fp8"):
        assert len(re.findall(r"add(\.rn)?\.f32", text)) >= 32  # 32 registers per K step


@needs_ptxas
def test_fp8_with_a_row_major_b_emits_wgmma(tmp_path):
    """fp8 with B loaded N-contiguous: wgmma reading a B stored K-major from registers, and
    the partial sums of `max_num_imprecise_acc=32` added as `add.f32`, one a register each K
    tile (Triton's PTX; test_core's test_dot_max_num_imprecise_acc counts them)."""
    _, after = _typed_loop("fp8e4nv", False, 32)
    text = _ptx(after, tmp_path)
    assert "wgmma.mma_async" in text and "mma.sync" not in text
    assert len(re.findall(r"\badd\.f32", text)) == 64 * 64 // 128


def test_chained_fp8_dots_keep_the_values():
    """Attention's fp8 chain on wgmma: the second dot's A (P, computed in registers) stays in
    registers, four K elements a lane (kWidth 4: an exchange within each quad of lanes from
    the first dot's result); its B is V stored transposed. The values of the TTIR."""
    m, k = 64, 64
    args = ("*fp8e4nv", "*fp8e4nv", "*fp8e4nv", "*fp32")
    before, after = _modules(DOT_KERNELS.chain_fp8, args, {"M": m, "K": k}, 3)
    dots = [op for op in after.walk() if op.name == "ttng.warp_group_dot"]
    assert [isinstance(dot.a.type, MemDescType) for dot in dots] == [True, False]
    assert not dots[0].a.type.encoding.transposed
    assert dots[1].a.type.encoding.k_width == 4
    gen = np.random.default_rng(12)
    inputs = [gen.standard_normal(m * k).astype(ml_dtypes.float8_e4m3fn) for _ in range(3)]
    got, want = (_chain_output(module, inputs) for module in (after, before))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_backward_loop_shares_and_pipelines_its_buffers(arch):
    """Attention backward's shape, on wgmma and on mma.sync: the tile made before the loop is
    stored once, before it; each tile two dots read (as is and transposed) is one buffer,
    filled by `cp.async` in the ring; and the TTGIR computes what the TTIR did for every trip
    count."""
    n, d = 64, 32
    args = ("*fp16",) * 3 + ("*fp32",) * 2 + ("i32",)
    before, after = _modules(DOT_KERNELS.backward_loop, args, {"N": n, "D": d}, 3, arch)
    body = _loop_ops(after)
    assert "ttg.local_alloc" not in body and "tt.load" not in body
    assert body.count("ttg.async_copy_global_to_local") == 2
    loop = next(op for op in after.walk() if op.name == "scf.for")
    allocs = [op for op in after.walk() if op.name == "ttg.local_alloc"]
    assert len(allocs) == 3  # the tile before the loop and the two rings
    assert all(op.parent is loop.parent for op in allocs)
    for steps in (0, 1, 2, 5):
        gen = np.random.default_rng(steps)
        k = (gen.standard_normal(n * d) / 4).astype(np.float16)
        q, do = ((gen.standard_normal(max(steps, 1) * n * d) / 4).astype(np.float16) for _ in "qd")
        outs = []
        for module in (after, before):
            dk, dv = (np.full(n * d, 7.0, dtype=np.float32) for _ in "kv")
            func = next(op for op in module.walk() if op.name == "tt.func")
            evaluate(module, func.sym_name.value, [k, q, do, dk, dv, steps], grid=(1,))
            outs.append((dk, dv))
        for got, want in zip(*outs):
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


@needs_ptxas
def test_register_operands_are_written_before_the_fence(tmp_path):
    """A chained dot's A (converted from the first dot's result) and the accumulator pass
    through `wgmma.fence`, so every conversion precedes it: ptxas has no register write
    between the instructions to fence on its own (it says so when it injects one)."""
    _, after = _modules(DOT_KERNELS.chain, ("*fp16",) * 3 + ("*fp32",), {"M": 64, "K": 64}, 3)
    text = _ptx(after, tmp_path)
    report = assemble(text, "sm_90a", tmp_path)
    assert "is injected" not in report
    first_dot = text.index("wgmma.mma_async", text.index("wgmma.wait_group"))
    fence = text.rindex("wgmma.fence", 0, first_dot)
    assert "cvt.rn.f16x2.f32" not in text[fence:first_dot]


def _publishing_barriers_fenced(text: str) -> bool:
    """Whether, before the first `wgmma`, every barrier after stores to shared memory has a
    `fence.proxy.async` between those stores and it."""
    head = text[: text.index("wgmma.mma_async")]
    stored = fenced = False
    for line in (line.strip() for line in head.splitlines()):
        if line.startswith("st.shared"):
            stored, fenced = True, False
        elif line.startswith("fence.proxy.async"):
            fenced = True
        elif line.startswith("bar.sync") and stored:
            if not fenced:
                return False
            stored = False
    return True


@pytest.mark.parametrize("kernel", ["dot_majors", "backward_loop"])
def test_buffer_stores_are_fenced_before_the_barrier_that_publishes_them(kernel):
    """Stores into a buffer wgmma reads are fenced to the asynchronous proxy before whichever
    barrier publishes them: a shape op's between the store and the dot (dot_majors), or a
    pipelined loop's wait (backward_loop's K, stored before the loop)."""
    if kernel == "dot_majors":
        args = ("*fp16", "*fp16", "*fp32")
        kwargs = dict(M=64, N=32, K=64, A_K_MAJOR=True, B_K_MAJOR=True, OUT=tl.float32)
    else:
        args = ("*fp16",) * 3 + ("*fp32",) * 2 + ("i32",)
        kwargs = dict(N=64, D=32)
    compiled = getattr(DOT_KERNELS, kernel).warmup(
        *args, **kwargs, num_warps=4, grid=(1,), target="cuda:sm_90a"
    )
    assert _publishing_barriers_fenced(compiled.asm["ptx"])
