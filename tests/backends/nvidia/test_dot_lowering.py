"""`tt.dot` on the NVIDIA path without a GPU: the layouts accelerate-matmul chooses, the
`mma.sync` fragments the lowering picks simulated against the PTX manual's fragment tables,
the element conversions it writes in plain LLVM IR run on the host, and real kernels (the
tutorial matmul, tests/language's dots) through PTX that ptxas assembles for sm_80 and sm_90a.
Values on the GPU: tests/gpu/test_dot_gpu.py.
"""

import ctypes
import importlib.util
import re
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from host_code import load_ir
from test_lowering import ARCHES, assemble, count
from test_toolchain import needs_ptxas

import naiad.language as tl
from naiad.backends.nvidia import ptx
from naiad.backends.nvidia import target as nv_target
from naiad.backends.nvidia.compiler import ttgir_pipeline
from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.lowering import lower_module
from naiad.backends.nvidia.lowering.dot_mma import (
    check_fragments,
    fragment_coords,
    instruction_fragments,
    tile_bases,
    tile_corners,
)
from naiad.backends.nvidia.lowering.dot_operands import bf16_split, fp8_to_f16, register_table
from naiad.backends.nvidia.lowering.emitter import Emitter
from naiad.backends.nvidia.lowering.indexing import register_coords
from naiad.dialects import tt
from naiad.dialects.ttg.attributes import DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from naiad.passes.pipeline import run_pipeline
from naiad.runtime.compiler import build_ttir
from naiad.runtime.evaluator import evaluate
from naiad.runtime.evaluator.values import host_dtype

ROOT = Path(__file__).resolve().parents[3]


def _load(path: Path, name: str):
    """Import the module at `path` (its folder importable too: tests/language's helpers)."""
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# The language tier's dot kernels (tests/language/dot_kernels.py), loaded once.
DOT_KERNELS = _load(ROOT / "tests" / "language" / "dot_kernels.py", "dot_lowering_kernels")


# (operand dtype, result pointer dtype, input_precision, out_dtype)
CASES = {
    "f16": ("fp16", "fp32", None, tl.float32),
    "f16_acc16": ("fp16", "fp16", None, tl.float16),
    "bf16": ("bf16", "fp32", None, tl.float32),
    "tf32": ("fp32", "fp32", "tf32", tl.float32),
    "tf32x3": ("fp32", "fp32", "tf32x3", tl.float32),
    "bf16x3": ("fp32", "fp32", "bf16x3", tl.float32),
    "bf16x6": ("fp32", "fp32", "bf16x6", tl.float32),
    "ieee": ("fp32", "fp32", "ieee", tl.float32),
    "int8": ("i8", "i32", None, tl.int32),
    "e4m3": ("fp8e4nv", "fp32", None, tl.float32),
    "e5m2": ("fp8e5", "fp32", None, tl.float32),
    "e5m2_acc16": ("fp8e5", "fp16", None, tl.float16),
    "f64": ("fp64", "fp64", "ieee", tl.float64),
}


def _ttgir(kernel, args, kwargs, arch: str, num_warps: int = 4):
    module = build_ttir(kernel, kernel._bind(args, kwargs), f"cuda:{arch}").module
    capability = nv_target.cuda_target(f"cuda:{arch}").capability
    run_pipeline(ttgir_pipeline(num_warps, capability), module)
    return module


def _case_call(case: str, m=32, n=32, k=32) -> tuple[tuple, dict]:
    """(args, kwargs) of `DOT_KERNELS.dot` for a CASES entry: C = A B, no accumulator (its
    pointer is the result's type, unused)."""
    dtype, out_ptr, precision, out = CASES[case]
    args = (f"*{dtype}", f"*{dtype}", f"*{out_ptr}", f"*{out_ptr}")
    kwargs = {"M": m, "N": n, "K": k, "PRECISION": precision, "OUT": out, "USE_ACC": False}
    return args, kwargs


def _case_module(case: str, arch: str, m=32, n=32, k=32):
    return _ttgir(DOT_KERNELS.dot, *_case_call(case, m, n, k), arch)


def _dots(module):
    """The module's dots: a dot whose operands `ldmatrix` loads is cut along K into dots of
    one instruction's depth (passes/dot_operands_shared.py), all in the same layouts."""
    return [op for op in module.walk() if isinstance(op, tt.DotOp)]


# -- accelerate-matmul ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("case", "arch", "k_width"),
    [
        ("f16", "sm_90a", 2),
        ("bf16", "sm_80", 2),
        ("tf32", "sm_80", 1),
        ("tf32x3", "sm_90a", 1),
        ("bf16x6", "sm_90a", 2),
        ("int8", "sm_80", 4),
        ("e4m3", "sm_89", 4),  # fp8 mma.sync of its own on sm_89 only
        ("e4m3", "sm_90a", 4),  # words of four bytes (ldmatrix), upcast to f16 at the dot
        ("e4m3", "sm_80", 4),  # the same
        ("e5m2_acc16", "sm_90a", 4),  # an f16 accumulator: f16 mma of the upcast values
        ("ieee", "sm_90a", None),
        ("f64", "sm_90a", None),
    ],
)
def test_mma_or_fma_per_dtype(case, arch, k_width):
    dot = _dots(_case_module(case, arch))[0]
    encoding = dot.d.type.encoding
    if k_width is None:
        assert not isinstance(encoding, NvidiaMmaEncodingAttr)
        return
    assert encoding == NvidiaMmaEncodingAttr(2, 0, [2, 2], [16, 8])
    assert dot.a.type.encoding == DotOperandEncodingAttr(0, encoding, k_width)
    assert dot.b.type.encoding == DotOperandEncodingAttr(1, encoding, k_width)


@pytest.mark.parametrize(
    ("m", "n", "k", "warps"),
    [(64, 64, 32, [2, 2]), (128, 32, 32, [4, 1]), (16, 64, 16, [1, 4]), (16, 16, 16, [2, 2])],
)
def test_mma_warps_as_triton_chooses(m, n, k, warps):
    for dot in _dots(_case_module("f16", "sm_90a", m, n, k)):
        assert list(dot.d.type.encoding.warps_per_cta) == warps


def test_tiny_dots_stay_on_fma():
    """Below one instruction tile (M < 16 here) the dot is an FMA dot."""
    (dot,) = _dots(_case_module("f16", "sm_90a", m=8, n=32, k=16))
    assert not isinstance(dot.d.type.encoding, NvidiaMmaEncodingAttr)


def test_chained_dots_share_their_warps():
    module = _ttgir(DOT_KERNELS.chain, ("*fp16",) * 3 + ("*fp32",), {"M": 16, "K": 32}, "sm_90a")
    encodings = [dot.d.type.encoding for dot in _dots(module)]
    assert len(encodings) >= 2
    assert {tuple(e.warps_per_cta) for e in encodings} == {(4, 1)}


def _evaluate(module, seed: int) -> list[np.ndarray]:
    """Run `module` in the reference evaluator on seeded random buffers; their bytes after."""
    func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
    gen = np.random.default_rng(seed)
    args = []
    for t in func.signature.inputs:
        values = gen.uniform(0.25, 4.0, 4096) * gen.choice([-1.0, 1.0], 4096)
        args.append(values.astype(host_dtype(t.pointee_type)))
    evaluate(module, func.sym_name.value, args, grid=(1,))
    return [a.view(np.uint8).copy() for a in args]


def _before_and_after(case: str, k: int):
    """The dot kernel of `case` as TTIR and after the TTGIR pipeline, evaluated alike."""
    args, kwargs = _case_call(case, m=32, n=16, k=k)
    dot = DOT_KERNELS.dot
    before = build_ttir(dot, dot._bind(args, kwargs), "cuda:sm_90a").module
    after = _ttgir(dot, args, kwargs, "sm_90a")
    assert isinstance(_dots(after)[0].d.type.encoding, NvidiaMmaEncodingAttr)
    return _evaluate(after, 3), _evaluate(before, 3)


# K one instruction deep (16-bit operands 16, 8-bit 32, tf32 8): one dot, the same sum.
@pytest.mark.parametrize(
    ("case", "k"), [("f16", 16), ("tf32", 8), ("int8", 32), ("bf16x6", 16), ("e5m2", 32)]
)
def test_the_ttgir_pipeline_keeps_the_values(case, k):
    """TTGIR with mma layouts computes what the TTIR did (the evaluator runs both)."""
    for got, want in zip(*_before_and_after(case, k)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("case", "exact"), [("f16", False), ("int8", True)])
def test_dots_cut_along_k_keep_the_values(case, exact):
    """A dot cut into slices of K adds slice after slice into the accumulator, as `mma.sync`
    does for the one dot; the evaluator's one dot rounds the whole sum once: equal for
    integers, within f32 rounding for floats."""
    after, before = _before_and_after(case, 64)
    out_dtype = np.int32 if exact else np.float32
    got, want = after[2].view(out_dtype), before[2].view(out_dtype)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


# -- the fragments, simulated ---------------------------------------------------------------
def _ptx_a(lane: int, i: int, k_width: int) -> tuple[int, int]:
    """(row, col) of element a_i of `lane` in the PTX manual's A fragment tables:
    m16n8k8 tf32, m16n8k16 f16/bf16, m16n8k32 s8/e4m3 (k_width 1, 2, 4)."""
    group, tig = lane // 4, lane % 4
    if k_width == 1:
        return group + 8 * (i % 2), tig + 4 * (i // 2)
    if k_width == 2:
        row = group if i < 2 or 4 <= i < 6 else group + 8
        return row, tig * 2 + (i & 1) + (8 if i >= 4 else 0)
    row = group if i < 4 or 8 <= i < 12 else group + 8
    return row, tig * 4 + (i & 3) + (16 if i >= 8 else 0)


def _ptx_b(lane: int, i: int, k_width: int) -> tuple[int, int]:
    group, tig = lane // 4, lane % 4
    if k_width == 1:
        return tig + 4 * i, group
    if k_width == 2:
        return tig * 2 + (i & 1) + (8 if i >= 2 else 0), group
    return tig * 4 + (i & 3) + (16 if i >= 4 else 0), group


def _ptx_c(lane: int, i: int) -> tuple[int, int]:
    group, tig = lane // 4, lane % 4
    return group + (8 if i >= 2 else 0), tig * 2 + (i & 1)


def _simulate(shape, warps, k_width, k_extent, seed):
    """Run the lowering's choice of registers through mma.sync as the PTX manual defines it,
    thread by thread, and return (result, A @ B)."""
    rank = len(shape)
    mma = NvidiaMmaEncodingAttr(2, 0, warps, [16, 8] if rank == 2 else [1, 16, 8])
    *batch, m, n = shape
    a_shape, b_shape = (*batch, m, k_extent), (*batch, k_extent, n)
    la = to_linear_layout(DotOperandEncodingAttr(0, mma, k_width), a_shape)
    lb = to_linear_layout(DotOperandEncodingAttr(1, mma, k_width), b_shape)
    lc = to_linear_layout(mma, shape)
    check_fragments(la, lb, lc, k_width, rank)
    gen = np.random.default_rng(seed)
    a = gen.integers(-8, 8, a_shape).astype(np.float64)
    b = gen.integers(-8, 8, b_shape).astype(np.float64)
    ta, tb, tc = register_table(la), register_table(lb), register_table(lc)
    k_inst = 8 * k_width
    out = np.full(shape, np.nan)
    for warp in range(int(np.prod(warps))):
        for base in tile_bases(lc):
            head = base[:-2]
            tile = np.zeros((16, 8))
            for k0 in range(0, k_extent, k_inst):
                a_groups, b_groups = fragment_coords(head, base[-2], base[-1], k0, k_width)
                a_tile = np.full((16, k_inst), np.nan)
                b_tile = np.full((k_inst, 8), np.nan)
                for lane in range(32):
                    flat_a = [c for group in a_groups for c in group]
                    flat_b = [c for group in b_groups for c in group]
                    for i, coords in enumerate(flat_a):
                        held = la.apply(register=ta[coords], lane=lane, warp=warp)
                        a_tile[_ptx_a(lane, i, k_width)] = a[held]
                    for i, coords in enumerate(flat_b):
                        held = lb.apply(register=tb[coords], lane=lane, warp=warp)
                        b_tile[_ptx_b(lane, i, k_width)] = b[held]
                assert not np.isnan(a_tile).any() and not np.isnan(b_tile).any()
                tile += a_tile @ b_tile
            for lane in range(32):
                for i, coords in enumerate(tile_corners(base)):
                    held = lc.apply(register=tc[coords], lane=lane, warp=warp)
                    value = tile[_ptx_c(lane, i)]
                    assert np.isnan(out[held]) or out[held] == value
                    out[held] = value
    return out, np.matmul(a, b)


@pytest.mark.parametrize("k_width", [1, 2, 4])
@pytest.mark.parametrize(
    ("shape", "warps", "k_extent"),
    [
        ((16, 8), [1, 1], 32),
        ((64, 64), [2, 2], 64),
        ((32, 128), [1, 4], 32),
        ((16, 16), [2, 2], 32),  # more warps than tiles: copies
        ((2, 32, 16), [4, 1, 1], 32),  # batched
    ],
)
def test_mma_fragments_compute_the_product(shape, warps, k_width, k_extent):
    out, expected = _simulate(shape, warps, k_width, k_extent, seed=sum(shape) + k_width)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(("shape", "warps"), [((32, 16), [2, 1]), ((64, 64), [2, 2])])
def test_upcast_words_feed_two_f16_instructions(shape, warps):
    """fp8 operands in words of four (kWidth 4) upcast to f16: the word's first two elements
    go to one m16n8k16, the last two to the next (instruction_fragments), in A and B alike;
    run through the PTX manual's f16 fragments thread by thread, the sum is A @ B."""
    mma = NvidiaMmaEncodingAttr(2, 0, warps, [16, 8])
    m, n = shape
    k_extent = 64
    la = to_linear_layout(DotOperandEncodingAttr(0, mma, 4), (m, k_extent))
    lb = to_linear_layout(DotOperandEncodingAttr(1, mma, 4), (k_extent, n))
    lc = to_linear_layout(mma, shape)
    gen = np.random.default_rng(m + n)
    a = gen.integers(-8, 8, (m, k_extent)).astype(np.float64)
    b = gen.integers(-8, 8, (k_extent, n)).astype(np.float64)
    ta, tb, tc = register_table(la), register_table(lb), register_table(lc)
    out = np.full(shape, np.nan)
    for warp in range(warps[0] * warps[1]):
        for base in tile_bases(lc):
            tile = np.zeros((16, 8))
            for k0 in range(0, k_extent, 32):
                for a_groups, b_groups in instruction_fragments((), *base, k0, 4, 2):
                    a_tile, b_tile = np.full((16, 16), np.nan), np.full((16, 8), np.nan)
                    for lane in range(32):
                        flat_a = [c for group in a_groups for c in group]
                        flat_b = [c for group in b_groups for c in group]
                        for i, coords in enumerate(flat_a):
                            held = la.apply(register=ta[coords], lane=lane, warp=warp)
                            a_tile[_ptx_a(lane, i, 2)] = a[held]
                        for i, coords in enumerate(flat_b):
                            held = lb.apply(register=tb[coords], lane=lane, warp=warp)
                            b_tile[_ptx_b(lane, i, 2)] = b[held]
                    assert not np.isnan(a_tile).any() and not np.isnan(b_tile).any()
                    tile += a_tile @ b_tile
            for lane in range(32):
                for i, coords in enumerate(tile_corners(base)):
                    out[lc.apply(register=tc[coords], lane=lane, warp=warp)] = tile[_ptx_c(lane, i)]
    np.testing.assert_array_equal(out, a @ b)


@pytest.mark.parametrize(
    ("case", "m", "n", "k", "num_warps"),
    [("ieee", 64, 64, 32, 4), ("f64", 32, 16, 16, 8), ("f16", 8, 32, 16, 4), ("f16", 2, 2, 16, 4)],
)
def test_fma_operands_meet_in_every_thread(case, m, n, k, num_warps):
    """For every thread and result register, the A and B registers the FMA dot reads by
    register coordinates hold row m and column n of that result element, for every k."""
    (dot,) = _dots(_ttgir(DOT_KERNELS.dot, *_case_call(case, m, n, k), "sm_90a", num_warps))
    la, lb, lc = (to_linear_layout(v.type.encoding, v.type.shape) for v in (dot.a, dot.b, dot.d))
    ta, tb = register_table(la), register_table(lb)
    for warp in range(num_warps):
        for lane in range(32):
            for r, (rm, rn) in enumerate(register_coords(lc)):
                row, col = lc.apply(register=r, lane=lane, warp=warp)
                for kk in range(k):
                    assert la.apply(register=ta[(rm, kk)], lane=lane, warp=warp) == (row, kk)
                    assert lb.apply(register=tb[(kk, rn)], lane=lane, warp=warp) == (kk, col)


# -- element conversions, run on the host ---------------------------------------------------
def host_ir(body, ret: str, params: str, result: str) -> str:
    """LLVM IR of `ret f(params)`: the lines `body`, then `ret result`."""
    return "\n".join([f"define {ret} @f({params}) {{", "entry:", *body, f"  ret {result}", "}"])


def _host_function(body, ret: str, params: str, result: str):
    """`host_ir` compiled for the host CPU (libcalls LLVM makes for half and bfloat there
    resolve to Naiad's runtime library): the loaded object and f's address."""
    loaded = load_ir(host_ir(body, ret, params, result), ["f"], "conversion", optimized=False)
    return loaded, loaded.address("f")


@pytest.mark.parametrize(
    ("kind", "np_type"),
    [("f8E4M3FN", ml_dtypes.float8_e4m3fn), ("f8E5M2", ml_dtypes.float8_e5m2)],
)
def test_fp8_upcast_is_exact(kind, np_type):
    em = Emitter()
    value = fp8_to_f16(em, "%x", kind)
    bits = em.op(f"bitcast half {value} to i16")
    engine, address = _host_function(em.body, "i16", "i8 %x", f"i16 {bits}")
    fn = ctypes.CFUNCTYPE(ctypes.c_uint16, ctypes.c_uint8)(address)
    codes = np.arange(256, dtype=np.uint8)
    got = np.array([fn(int(c)) for c in codes], dtype=np.uint16).view(np.float16)
    expected = codes.view(np_type).astype(np.float16)
    np.testing.assert_array_equal(got, expected)  # NaNs compare equal
    del engine


@pytest.mark.parametrize("parts", [2, 3])
def test_bf16_split_parts_sum_back(parts):
    em = Emitter()
    pieces = bf16_split(em, "%x", parts)
    widened = [em.op(f"fpext bfloat {p} to double") for p in pieces]
    total = widened[0]
    for w in widened[1:]:
        total = em.op(f"fadd double {total}, {w}")
    engine, address = _host_function(em.body, "double", "float %x", f"double {total}")
    fn = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_float)(address)
    xs = np.random.default_rng(5).standard_normal(200).astype(np.float32)
    errors = np.array([abs(fn(float(x)) - float(x)) / abs(float(x)) for x in xs])
    assert errors.max() <= 2.0 ** (-8 * parts - 1)  # each part adds 8 mantissa bits
    del engine


# -- PTX through ptxas ------------------------------------------------------------------------
_MMA = {
    "f16": r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32",
    "f16_acc16": r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16",
    "bf16": r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32",
    "tf32": r"mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32",
    "tf32x3": r"mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32",
    "bf16x3": r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32",
    "bf16x6": r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32",
    "int8": r"mma\.sync\.aligned\.m16n8k32\.row\.col\.satfinite\.s32\.s8\.s8\.s32",
    "e5m2_acc16": r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16",
}
# mma instructions per thread for a 32 x 32 x 32 dot on 4 warps (2 x 2 tiles of 16 x 8 each)
_PER_THREAD = {"tf32x3": 24, "bf16x3": 12, "bf16x6": 24, "int8": 2, "tf32": 8, "fp8": 2}


def _ptx_of(module, arch: str, tmp_path) -> str:
    llir = lower_module(module, f"cuda:{arch}")
    text = ptx.compile_ptx(llir, nv_target.cuda_target(arch)).text
    assemble(text, arch, tmp_path)
    return text


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_dot_assembles_per_dtype(case, arch, tmp_path):
    text = _ptx_of(_case_module(case, arch), arch, tmp_path)
    if case in ("ieee", "f64"):
        assert count(r"mma\.sync", text) == 0
        assert count(r"\bfma\.rn\.f(32|64)", text) == 32 * 32 * 32 // 128
        return
    if case in ("e4m3", "e5m2"):
        ptx_kind = "e4m3" if case == "e4m3" else "e5m2"
        fp8 = rf"mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.{ptx_kind}\.{ptx_kind}\.f32"
        pattern = fp8 if arch == "sm_89" else _MMA["f16"]  # upcast on sm_80 and sm_90a
        case = "fp8" if arch == "sm_89" else case
    else:
        pattern = _MMA[case]
    assert count(pattern, text) == _PER_THREAD.get(case, 4)


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
def test_tutorial_matmul(arch, tmp_path):
    tutorial = _load(ROOT / "examples" / "03_matmul.py", "dot_lowering_matmul")
    args = ("*fp16", "*fp16", "*fp16", 512, 512, 512, 512, 1, 512, 1, 512, 1)
    kwargs = {
        "BLOCK_SIZE_M": 64,
        "BLOCK_SIZE_N": 64,
        "BLOCK_SIZE_K": 32,
        "GROUP_SIZE_M": 8,
        "ACTIVATION": "leaky_relu",
    }
    module = _ttgir(tutorial.matmul_kernel.fn, args, kwargs, arch)
    text = _ptx_of(module, arch, tmp_path)
    if arch == "sm_90a":  # one warpgroup's m64n64k16, K = 32 in two steps
        assert count(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.f16\.f16", text) == 2
    else:  # 64 x 64 on 2 x 2 warps: 2 x 4 tiles of 16 x 8 per warp, K = 32 in two steps
        assert count(_MMA["f16"], text) == 16


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize(
    ("name", "args", "kwargs", "mma"),
    [
        ("dot3d", ("*fp32",) * 3, {"B": 2, "M": 16, "N": 16, "K": 32}, 0),
        ("matmul_loop", ("*fp16",) * 3 + (32, 16, 100, 32), {}, 2),
        ("chain", ("*fp16",) * 3 + ("*fp32",), {"M": 16, "K": 32}, 8),
    ],
)
def test_language_dot_kernels(name, args, kwargs, mma, arch, tmp_path):
    module = _ttgir(getattr(DOT_KERNELS, name), args, kwargs, arch)
    text = _ptx_of(module, arch, tmp_path)
    assert count(r"mma\.sync", text) == mma
    assert re.search(r"\.version \d+\.\d+", text)
