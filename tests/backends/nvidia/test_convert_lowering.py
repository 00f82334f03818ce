"""`ttg.convert_layout` lowered along each plan (renumber, shuffles, vectorized round trip),
for every element kind (i1, i8, f16, f32, f64, pointers), then LLVM-verified, turned into PTX
and assembled by ptxas for sm_80 and sm_90a; and real kernels whose pipelines make
conversions (tl.trans, a reduction broadcast back, a dot stored, permute / reshape).

The conversions are TTGIR written here around one `convert_layout` between two chosen
layouts (`convert_ttgir`): a tile loaded in the source layout, converted, stored in the
destination's. tests/gpu/test_convert_gpu.py runs the same modules on the GPU.
"""

import re

import pytest
from test_lowering import ARCHES, assemble, count
from test_toolchain import needs_ptxas

import naiad
import naiad.language as tl
from naiad.backends.nvidia import ptx
from naiad.backends.nvidia import target as nv_target
from naiad.backends.nvidia.compiler import LLIR_PIPELINE, ttgir_pipeline
from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.lowering import lower_module
from naiad.backends.nvidia.lowering.convert_lanes import Shuffle
from naiad.backends.nvidia.lowering.convert_plan import Renumber, Shared, plan_convert
from naiad.backends.nvidia.lowering.emitter import bit_width
from naiad.ir.parser import parse_module
from naiad.passes.pipeline import run_pipeline
from naiad.runtime.compiler import build_ttir

BLOCKED_ROWS = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"  # noqa: E501
BLOCKED_COLS = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>"  # noqa: E501
MMA = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>"  # noqa: E501
WARP_ROWS = "#ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"  # noqa: E501
WARP_COLS = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [0, 1]}>"  # noqa: E501
# BLOCKED_ROWS on 32 x 64 with its registers in another order
REORDERED = (
    "#ttg.linear<{register = [[0, 2], [0, 1], [16, 0], [0, 32]], "
    "lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp = [[4, 0], [8, 0]], block = []}>"
)

# rows of 4 to columns of 4 within each warp's 4 rows
WARP_TILE_ROWS = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"  # noqa: E501
WARP_TILE_COLS = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>"  # noqa: E501

# name: (source, destination, shape, the plan it must get)
PAIRS = {
    "warp_local": (WARP_TILE_ROWS, WARP_TILE_COLS, (16, 64), Shared),
    "transpose": (BLOCKED_ROWS, BLOCKED_COLS, (64, 64), Shared),
    "mma_to_blocked": (MMA, BLOCKED_ROWS, (64, 64), Shared),
    "within_warps": (WARP_ROWS, WARP_COLS, (32, 8), Shuffle),
    "renumber": (BLOCKED_ROWS, REORDERED, (32, 64), Renumber),
}
ELEMENTS = ("i1", "i8", "f16", "f32", "f64", "ptr")
_MEMORY = {"i1": "i8", "ptr": "f32"}  # what the tile is loaded as


def _index(name: str, layout: str, m: int, n: int) -> list[str]:
    """Lines computing `%{name}` = row * n + column over an m x n tile in `layout`."""
    rows, cols = (
        f"#ttg.slice<{{dim = 1, parent = {layout}}}>",
        f"#ttg.slice<{{dim = 0, parent = {layout}}}>",
    )
    t = f"tensor<{m}x{n}xi32, {layout}>"
    return [
        f"%{name}_r = tt.make_range {{end = {m} : i32, start = 0 : i32}} : tensor<{m}xi32, {rows}>",
        f"%{name}_c = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, {cols}>",
        f"%{name}_r2 = tt.expand_dims %{name}_r {{axis = 1 : i32}} : tensor<{m}xi32, {rows}> -> tensor<{m}x1xi32, {layout}>",  # noqa: E501
        f"%{name}_c2 = tt.expand_dims %{name}_c {{axis = 0 : i32}} : tensor<{n}xi32, {cols}> -> tensor<1x{n}xi32, {layout}>",  # noqa: E501
        f"%{name}_rb = tt.broadcast %{name}_r2 : tensor<{m}x1xi32, {layout}> -> {t}",
        f"%{name}_cb = tt.broadcast %{name}_c2 : tensor<1x{n}xi32, {layout}> -> {t}",
        f"%{name}_n = arith.constant dense<{n}> : {t}",
        f"%{name}_rs = arith.muli %{name}_rb, %{name}_n : {t}",
        f"%{name} = arith.addi %{name}_rs, %{name}_cb : {t}",
    ]


def convert_ttgir(src: str, dst: str, shape, element: str, num_warps: int = 4) -> str:
    """A kernel `convert(x, y)`: y[i, j] = x[i, j] through one convert_layout of `element`s
    from `src` to `dst` (i1 as x != 0 stored as a byte; pointers: the tile's addresses are
    converted and loaded through)."""
    m, n = shape
    memory = _MEMORY.get(element, element)
    ptr = f"!tt.ptr<{memory}>"

    def tensor(kind, layout):
        return f"tensor<{m}x{n}x{kind}, {layout}>"

    lines = _index("src_offsets", src, m, n)
    if dst.startswith("#ttg.linear"):  # no make_range in a slice of it: convert the offsets
        i32 = (tensor("i32", src), tensor("i32", dst))
        lines.append(f"%dst_offsets = ttg.convert_layout %src_offsets : {i32[0]} -> {i32[1]}")
    else:
        lines += _index("dst_offsets", dst, m, n)
    lines += [
        f"%xs = tt.splat %x : {ptr} -> {tensor(ptr, src)}",
        f"%xp = tt.addptr %xs, %src_offsets : {tensor(ptr, src)}, {tensor('i32', src)}",
        f"%ys = tt.splat %y : {ptr} -> {tensor(ptr, dst)}",
        f"%yp = tt.addptr %ys, %dst_offsets : {tensor(ptr, dst)}, {tensor('i32', dst)}",
    ]
    if element == "ptr":
        lines += [
            f"%xq = ttg.convert_layout %xp : {tensor(ptr, src)} -> {tensor(ptr, dst)}",
            f"%w = tt.load %xq : {tensor(ptr, dst)}",
        ]
    elif element == "i1":
        lines += [
            f"%v8 = tt.load %xp : {tensor(ptr, src)}",
            f"%zero = arith.constant dense<0> : {tensor('i8', src)}",
            f"%v = arith.cmpi ne, %v8, %zero : {tensor('i8', src)}",
            f"%w1 = ttg.convert_layout %v : {tensor('i1', src)} -> {tensor('i1', dst)}",
            f"%w = arith.extui %w1 : {tensor('i1', dst)} to {tensor('i8', dst)}",
        ]
    else:
        lines += [
            f"%v = tt.load %xp : {tensor(ptr, src)}",
            f"%w = ttg.convert_layout %v : {tensor(memory, src)} -> {tensor(memory, dst)}",
        ]
    lines += [f"tt.store %yp, %w : {tensor(ptr, dst)}", "tt.return"]
    body = "\n".join("    " + line for line in lines)
    return (
        f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {num_warps} : i32, '
        'ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {\n'
        f"  tt.func public @convert(%x: {ptr} {{tt.divisibility = 16 : i32}}, "
        f"%y: {ptr} {{tt.divisibility = 16 : i32}}) {{\n{body}\n  }}\n}}\n"
    )


def convert_module(pair: str, element: str):
    """The parsed kernel of PAIRS[pair] over `element`s, shared memory allocated."""
    src, dst, shape, _ = PAIRS[pair]
    module = parse_module(convert_ttgir(src, dst, shape, element))
    run_pipeline(LLIR_PIPELINE, module)
    return module


def _conversions(module):
    return [op for op in module.walk() if op.name == "ttg.convert_layout"]


def _plan(op):
    src_t, dst_t = op.src.type, op.result.type
    src = to_linear_layout(src_t.encoding, src_t.shape)
    dst = to_linear_layout(dst_t.encoding, dst_t.shape)
    return plan_convert(src, dst, bit_width(src_t))


def _ptx(module, arch: str, tmp_path, spills_allowed: bool = False) -> str:
    llir = lower_module(module, f"cuda:{arch}")
    text = ptx.compile_ptx(llir, nv_target.cuda_target(arch)).text
    report = assemble(text, arch, tmp_path)
    assert spills_allowed or "0 bytes spill stores" in report
    return text


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_each_plan_assembles(pair, element, arch, tmp_path):
    module = convert_module(pair, element)
    plan = _plan(_conversions(module)[-1])  # the tile's (a linear layout's offsets come first)
    assert isinstance(plan, PAIRS[pair][3])
    # A tile of 64-bit pointers (64 x 64: 64 registers a thread, twice) may spill under the
    # CTAs-per-SM floor of lowering/occupancy.py, whose estimate counts float tensors only.
    text = _ptx(module, arch, tmp_path, spills_allowed=element == "ptr")
    shuffles = count(r"shfl\.sync\.idx\.b32", text)
    shared_ops = count(r"(st|ld)\.shared", text)
    if isinstance(plan, Renumber):
        assert shuffles == shared_ops == 0
    elif isinstance(plan, Shuffle):
        words = 2 if element in ("f64", "ptr") else 1
        assert shuffles == words * len(plan.packs()) and shared_ops == 0
    else:
        assert shuffles == 0
        # The barrier after the loads is owed to the next scratch user (barriers.py): there is
        # none, the tile is stored next, so the kernel ends without it.
        assert count(r"bar\.sync", text) == (0 if plan.warp_local else 1)
        assert count(r"bar\.warp\.sync", text) == (1 if plan.warp_local else 0)
        assert plan.warp_local == (pair == "warp_local")
        assert module.attributes["ttg.shared"].value == plan.nbytes


@needs_ptxas
def test_round_trips_are_vectorized(tmp_path):
    """The mma accumulator's register pairs (and the next 16 columns) are 16-byte vectors of
    f32 both ways. A transposition's rows and columns of 4 have nothing in common but the
    tile's repetitions (registers 32 columns and 16, 32 rows away): 4 x f16 vectors loaded,
    the stores widened to 16 bytes with the rows."""
    text = _ptx(convert_module("mma_to_blocked", "f32"), "sm_90a", tmp_path)
    assert count(r"st\.shared\.v4\.b32", text) == 64 * 64 // 128 // 4
    assert count(r"ld\.shared\.v4\.b32", text) == 64 * 64 // 128 // 4
    assert count(r"(st|ld)\.shared\.(b32|f32)", text) == 0
    text = _ptx(convert_module("transpose", "f16"), "sm_90a", tmp_path)
    assert count(r"st\.shared\.v4\.b32", text) == 4  # 8 x f16 each
    assert count(r"ld\.shared\.v4\.b16", text) == 8


# Tutorial 03's 128 x 256 accumulator (8 warps) and the layout it is stored from
WIDE_MMA = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 4], instrShape = [16, 8]}>"  # noqa: E501
WIDE_ROWS = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 2], order = [1, 0]}>"  # noqa: E501


def rounds_module():
    """The f32 conversion of tutorial 03's 128 x 256 accumulator in a kernel for sm_86 (99
    KiB a block), shared memory allocated: its 128 KiB tile goes in 2 rounds of 64 KiB."""
    text = convert_ttgir(WIDE_MMA, WIDE_ROWS, (128, 256), "f32", num_warps=8)
    module = parse_module(text.replace('ttg.target = "cuda:90"', 'ttg.target = "cuda:86"'))
    run_pipeline(LLIR_PIPELINE, module)
    return module


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
def test_a_conversion_in_rounds_assembles(arch, tmp_path):
    """The same 16-byte vectors as the whole tile's, the stores and loads of each round
    apart: a barrier before each round's loads and one between the rounds."""
    module = rounds_module()
    (op,) = _conversions(module)
    assert op.attributes["allocation.size"].value == module.attributes["ttg.shared"].value
    assert module.attributes["ttg.shared"].value == 128 * 256 * 4 // 2
    text = _ptx(module, arch, tmp_path)
    assert count(r"st\.shared\.v4\.b32", text) == count(r"ld\.shared\.v4\.b32", text) == 32
    assert count(r"bar\.sync", text) == 3


@needs_ptxas
def test_copies_are_stored_once(tmp_path):
    """A 16 x 64 tile on rows of 4 threads x 4 warps is held twice (warps 2-3 repeat 0-1):
    those warps branch around the stores."""
    module = parse_module(convert_ttgir(BLOCKED_ROWS, BLOCKED_COLS, (8, 64), "f32"))
    run_pipeline(LLIR_PIPELINE, module)
    (op,) = _conversions(module)
    plan = _plan(op)
    assert isinstance(plan, Shared) and plan.skip_mask == 0b1000000
    llir = lower_module(module, "cuda:sm_90a")
    assert "convert.store" in llir
    _ptx(module, "sm_80", tmp_path)


# -- kernels whose pipelines convert -----------------------------------------------------------
@naiad.jit
def transpose(x, y, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M), tl.arange(0, N)
    tile = tl.load(x + rows[:, None] * N + cols[None, :])
    tl.store(y + cols[:, None] * M + rows[None, :], tl.trans(tile))


@naiad.jit
def centered(x, y, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M), tl.arange(0, N)
    tile = tl.load(x + rows[:, None] * N + cols[None, :])
    total = tl.sum(tile, axis=1)
    tl.store(y + rows[:, None] * N + cols[None, :], tile - total[:, None] / N)
    tl.store(y + M * N + rows, total)


@naiad.jit
def matmul(a, b, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rows, cols, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(a + rows[:, None] * K + ks[None, :])
    w = tl.load(b + ks[:, None] * N + cols[None, :])
    tl.store(c + rows[:, None] * N + cols[None, :], tl.dot(x, w))


@naiad.jit
def permute(x, y, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    i = tl.arange(0, A * B * C)
    cube = tl.reshape(tl.load(x + i), (A, B, C))
    flat = tl.reshape(tl.permute(cube, (2, 0, 1)), (A * B * C,))
    tl.store(y + i, flat)


# name: (kernel, signature, constexprs, num_warps, the plans its conversions get)
KERNELS = {
    "transpose": (transpose, ("*fp16", "*fp16"), {"M": 64, "N": 32}, 4, {Shared}),
    "transpose_f64": (transpose, ("*fp64", "*fp64"), {"M": 32, "N": 16}, 4, {Shared}),
    "centered": (centered, ("*fp32", "*fp32"), {"M": 32, "N": 64}, 4, {Shared}),
    "centered_one_warp": (centered, ("*fp32", "*fp32"), {"M": 32, "N": 64}, 1, {Shuffle}),
    "matmul": (matmul, ("*fp16", "*fp16", "*fp32"), {"M": 64, "N": 64, "K": 32}, 4, {Shared}),
    "permute": (permute, ("*i8", "*i8"), {"A": 4, "B": 8, "C": 16}, 4, {Shared}),
}


def kernel_module(name: str, arch: str):
    kernel, args, kwargs, num_warps, _ = KERNELS[name]
    module = build_ttir(kernel, kernel._bind(args, kwargs), f"cuda:{arch}").module
    capability = nv_target.cuda_target(f"cuda:{arch}").capability
    run_pipeline(ttgir_pipeline(num_warps, capability) + LLIR_PIPELINE, module)
    return module


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernels_convert_and_assemble(name, arch, tmp_path):
    module = kernel_module(name, arch)
    plans = {type(_plan(op)) for op in _conversions(module)}
    assert plans == KERNELS[name][4]
    text = _ptx(module, arch, tmp_path)
    assert re.search(r"\.version \d+\.\d+", text)
