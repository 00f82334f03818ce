"""fp8 dots upcast to f16 for `mma.sync` (below a warpgroup on sm_90a, every fp8 dot of an f16
accumulator) convert each operand register's pair of elements by one `cvt.rn.f16x2.e4m3x2` /
`.e5m2x2` on sm_89+, as the hardware offers; sm_80 keeps the conversion in integer arithmetic.

Tutorial 03's fp8 e4m3 matmul at 64x32x32 w2 s5 and 32x64x32 w2 s5 on sm_90a converted element
by element in its K loop (shifts, masks, a NaN select and an f16 multiply for each of its 128
bytes: 650 SASS instructions a K step by nvJitLink 13.5, 131 registers) and ran at a third of
Triton's speed on the H200; by pairs the loop is 95 instructions and 96 registers (Triton 3.6:
95 and 90). Elementwise conversions from fp8 (`tt.fp_to_fp`) convert pairs of registers alike
(they took a `cvt.rn.f16x2` a byte). Values on the GPU: tests/gpu/test_dot_gpu.py (fp8 dots of
one and two warps), tests/language/test_casts.py's fp8 cases on cuda (every fp8 pattern).
"""

import pytest
from test_dot_lowering import _case_module, _ptx_of
from test_lowering import count
from test_lowering_kernels import example
from test_thread_locality import _loop_body
from test_toolchain import assemble, needs_ptxas

import naiad
import naiad.language as tl
from naiad.backends.nvidia import link

# the integer-arithmetic conversion's marks: its f16 multiply by 2^8 and its NaN select
_SOFTWARE = r"mul\.rn\.f16|selp\.b16"
_F16_MMA = r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f(16|32)\.f16\.f16\.f(16|32)"


def _tutorial_fp8(block_m: int, block_n: int, arch: str = "sm_90a"):
    """Tutorial 03's kernel on fp8 e4m3 operands, B K-major (tutorial 03's fp8 bench), 2 warps,
    5 stages."""
    kernel = example("03_matmul").matmul_kernel.fn
    n = 4096
    args = ("*fp8e4nv", "*fp8e4nv", "*fp16", n, n, n, n, 1, 1, n, n, 1)
    sizes = {"BLOCK_SIZE_M": block_m, "BLOCK_SIZE_N": block_n, "BLOCK_SIZE_K": 32}
    options = {"GROUP_SIZE_M": 8, "ACTIVATION": "", "num_warps": 2, "num_stages": 5}
    return kernel.warmup(*args, **sizes, **options, grid=(1,), target=f"cuda:{arch}")


@needs_ptxas
@pytest.mark.parametrize(("block_m", "block_n"), [(64, 32), (32, 64)])
def test_tutorial_fp8_loop_converts_pairs(block_m, block_n, tmp_path):
    compiled = _tutorial_fp8(block_m, block_n)
    ptx = compiled.asm["ptx"]
    body = _loop_body(ptx)
    # a warp's K step: 32 x 32 bytes of each operand, 8 words a thread, two pairs a word
    assert count(r"cvt\.rn\.f16x2\.e4m3x2", body) == 32
    assert count(_F16_MMA, body) == 16
    assert count(r"ldmatrix", body) == 4
    assert count(_SOFTWARE, ptx) == 0
    assemble(ptx, "sm_90a", tmp_path)
    if link.linker_version() is not None:
        assert compiled.n_spills == 0 and compiled.n_regs <= 104  # 131 element by element


@needs_ptxas
@pytest.mark.parametrize(
    ("case", "kind", "arch"),
    [
        ("e4m3", "e4m3", "sm_80"),
        ("e4m3", "e4m3", "sm_90a"),
        ("e5m2_acc16", "e5m2", "sm_80"),
        ("e5m2_acc16", "e5m2", "sm_89"),  # in PTX 8.1 (an f32 accumulator: fp8 mma of its own)
        ("e5m2_acc16", "e5m2", "sm_90a"),
    ],
)
def test_upcast_dots_convert_pairs_from_sm_89(case, kind, arch, tmp_path):
    """A 32 x 32 x 32 dot on 2 x 2 warps: each thread packs 8 registers of A and 8 of B."""
    text = _ptx_of(_case_module(case, arch), arch, tmp_path)
    pairs = count(rf"cvt\.rn\.f16x2\.{kind}x2", text)
    assert count(_F16_MMA, text) == 4
    if arch == "sm_80":  # no cvt from fp8 below sm_89
        assert pairs == 0
    else:
        assert pairs == 16
        assert count(_SOFTWARE, text) == 0


@naiad.jit
def _upcast_kernel(x, y, N: tl.constexpr, OUT: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y + offs, tl.load(x + offs).to(OUT))


@needs_ptxas
@pytest.mark.parametrize("src", ["fp8e4nv", "fp8e5"])
@pytest.mark.parametrize(("dst", "name"), [(tl.float16, "fp16"), (tl.float32, "fp32")])
def test_elementwise_upcasts_convert_pairs(src, dst, name, tmp_path):
    """1024 elements on 4 warps: 8 a thread, 4 conversions (8 before)."""
    compiled = _upcast_kernel.warmup(
        f"*{src}", f"*{name}", 1024, dst, grid=(1,), target="cuda:sm_90a", num_warps=4
    )
    ptx = compiled.asm["ptx"]
    assert count(r"cvt\.rn\.f16x2\.e[45]m[23]x2", ptx) == 4
    assemble(ptx, "sm_90a", tmp_path)
