"""The floor on CTAs per SM of memory-bound kernels (lowering/occupancy.py): its register
estimate on the tutorials' kernels, where it is written (`.minnctapersm`) and where not, and,
through nvJitLink where it is installed, the registers it buys back without a spill.

Expected floors, with the registers nvJitLink gave each kernel without one (and Triton 3.8's
whole-program ptxas, for reference): softmax f32 over 4096 columns, 8 warps: 8 CTAs (37 -> 32;
Triton 32); layer norm f16 over 1024, 4 warps: 16 (48 -> 32; 32), over 4096, 8 warps: 6 (56 ->
40; 32), over 8192: 4 (80 -> 64; 60), each loop's loads still issued together.
"""

import re

import pytest
from test_lowering_kernels import example

import naiad
import naiad.language as tl
from naiad.backends.nvidia import link

has_linker = link.linker_version() is not None


def layer_norm(n: int, **options):
    kernel = example("05_layer_norm")._layer_norm_fwd_fused
    warps = min(max(n // 256, 1), 8)
    args = ("*fp16", "*fp16", "*fp16", "*fp16", "*fp32", "*fp32", n, n, 1e-5)
    return kernel.warmup(
        *args, BLOCK_SIZE=n, num_warps=warps, grid=(1,), target="cuda:sm_90a", **options
    )


def softmax(n: int):
    kernel = example("02_fused_softmax").softmax_kernel
    args = ("*fp32", "*fp32", n, n, 4096, n)
    options = {"BLOCK_SIZE": n, "num_stages": 1, "num_warps": 8}
    return kernel.warmup(*args, **options, grid=(4096,), target="cuda:sm_90a")


def floor(compiled) -> int | None:
    found = re.search(r"\.minnctapersm (\d+)", compiled.asm["ptx"])
    return int(found.group(1)) if found else None


CASES = {  # kernel: (floor, registers at most)
    "softmax 1024": (lambda: softmax(1024), 8, 32),
    "softmax 4096": (lambda: softmax(4096), 8, 32),
    "layer norm 1024": (lambda: layer_norm(1024), 16, 32),
    "layer norm 4096": (lambda: layer_norm(4096), 6, 40),
    "layer norm 8192": (lambda: layer_norm(8192), 4, 64),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tutorial_kernels_get_their_floor(name):
    make, ctas, registers = CASES[name]
    compiled = make()
    assert floor(compiled) == ctas
    if has_linker:
        assert 0 < compiled.n_regs <= registers
        assert compiled.n_spills == 0


def test_an_explicit_register_cap_replaces_the_floor():
    compiled = layer_norm(1024, maxnreg=40)
    assert floor(compiled) is None
    assert ".maxnreg 40" in compiled.asm["ptx"]


@naiad.jit
def small_dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, b))


@naiad.jit
def cumsum_kernel(x_ptr, y_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(y_ptr + r, tl.cumsum(tl.load(x_ptr + r), axis=0))


@naiad.jit
def column_sums_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    acc = tl.zeros((M, N), dtype=tl.float32)
    for i in range(0, 64):
        acc += tl.load(x_ptr + (i * M + rm[:, None]) * N + rn[None, :])
    tl.store(y_ptr + rn, tl.sum(acc, axis=0))


def test_kernels_beyond_the_estimate_get_no_floor():
    """A dot (its fragments are planned elsewhere) and a scan (not estimated) keep ptxas's
    own choice, and so does a kernel needing more than 64 registers (two 64-element
    accumulator rows per thread here)."""
    dot = small_dot_kernel.warmup(
        "*fp16", "*fp16", "*fp32", N=32, num_warps=4, grid=(1,), target="cuda:sm_90a"
    )
    scan = cumsum_kernel.warmup("*fp32", "*fp32", N=1024, grid=(1,), target="cuda:sm_90a")
    heavy = column_sums_kernel.warmup(
        "*fp32", "*fp32", M=128, N=64, num_warps=4, grid=(1,), target="cuda:sm_90a"
    )
    assert floor(dot) is None
    assert floor(scan) is None
    assert floor(heavy) is None
    light = column_sums_kernel.warmup(
        "*fp32", "*fp32", M=16, N=64, num_warps=4, grid=(1,), target="cuda:sm_90a"
    )
    assert floor(light) is not None


@naiad.jit
def sine_kernel(x_ptr, y_ptr, N: tl.constexpr, SINE: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.sin(x) if SINE else tl.abs(x))


def test_kernels_calling_functions_get_no_floor():
    """libdevice's fp64 sin calls a function that reduces large arguments; the linker compiles
    it apart, without the cap, and refuses a capped kernel calling it (an H100 run with
    nvJitLink 13.0: "max regcount of 32 calls function ... with regcount of 46"). The same
    kernel with `abs`, no call, keeps its floor."""
    for sine in (True, False):
        compiled = sine_kernel.warmup(
            "*fp64", "*fp64", N=1024, SINE=sine, grid=(1,), target="cuda:sm_90a"
        )
        assert (floor(compiled) is None) == sine
