"""`tl.dot` on the GPU against float64 references, within the tolerance table: every operand
type and input precision (mma.sync for f16, bf16, tf32, tf32x3, bf16x3, bf16x6, int8, fp8,
wgmma on sm_90a for f16, bf16, tf32, int8 and fp8 with M a multiple of 64; FMA for ieee f32,
f64 and tiles below one instruction), shapes 16..128, with and without an accumulator, batched,
chained, in K loops with B of either major order and fp8's `max_num_imprecise_acc`, and the
tutorial matmul.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import numpy as np
import pytest
import torch
from gpu_helpers import ROOT, compiled, load_module  # noqa: F401 (compiled: autouse fixture)

import naiad.language as tl
from naiad import knobs
from naiad.testing import check

pytestmark = pytest.mark.gpu

# The kernels are the language tier's own (tests/language/dot_kernels.py).
kernels = load_module("gpu_dot_kernels", ROOT / "tests" / "language" / "dot_kernels.py")


# name: (operand torch dtype, input_precision, result torch dtype, tolerance op)
CASES = {
    "f16": (torch.float16, None, torch.float32, "dot"),
    "f16_acc16": (torch.float16, None, torch.float16, "dot"),
    "bf16": (torch.bfloat16, None, torch.float32, "dot"),
    "tf32": (torch.float32, "tf32", torch.float32, "dot_tf32"),
    "tf32x3": (torch.float32, "tf32x3", torch.float32, "dot"),
    "bf16x3": (torch.float32, "bf16x3", torch.float32, "dot_tf32"),
    "bf16x6": (torch.float32, "bf16x6", torch.float32, "dot"),
    "ieee": (torch.float32, "ieee", torch.float32, "dot"),
    "int8": (torch.int8, None, torch.int32, "exact"),
    "e4m3": (torch.float8_e4m3fn, None, torch.float32, "dot_fp8"),
    "e5m2": (torch.float8_e5m2, None, torch.float32, "dot_fp8"),
    "e5m2_acc16": (torch.float8_e5m2, None, torch.float16, "dot"),
    "f64": (torch.float64, "ieee", torch.float64, "dot"),
}
_OUT = {torch.float32: tl.float32, torch.float16: tl.float16, torch.int32: tl.int32}
_OUT[torch.float64] = tl.float64


def _random(shape, dtype, gen):
    if dtype == torch.int8:
        return torch.randint(-128, 128, shape, generator=gen, dtype=torch.int8)
    return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)


def _run(case: str, m: int, n: int, k: int, use_acc: bool, num_warps: int = 4, seed: int = 0):
    dtype, precision, out_dtype, op = CASES[case]
    gen = torch.Generator().manual_seed(seed * 1009 + m * 31 + n * 7 + k)
    a, b = _random((m, k), dtype, gen), _random((k, n), dtype, gen)
    acc = _random((m, n), out_dtype if out_dtype != torch.int32 else torch.int8, gen)
    acc = acc.to(out_dtype)
    c = torch.full((m, n), 7, dtype=out_dtype, device="cuda")  # poisoned
    out = _OUT[out_dtype]
    args = (a.cuda(), b.cuda(), c, acc.cuda(), m, n, k, precision, out, use_acc)
    kernels.dot[(1,)](*args, num_warps=num_warps)
    if dtype == torch.int8:
        ref = a.long() @ b.long() + (acc.long() if use_acc else 0)
        torch.testing.assert_close(c.cpu(), ref.to(torch.int32), rtol=0, atol=0)
        return
    ref = a.double() @ b.double() + (acc.double() if use_acc else 0)
    check(op, c.cpu(), ref.numpy(), "gpu", np.dtype(str(out_dtype).removeprefix("torch.")), k=k)


def _min_k(case: str) -> int:
    return 32 if CASES[case][0] in (torch.int8, torch.float8_e4m3fn, torch.float8_e5m2) else 16


@pytest.mark.parametrize("use_acc", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_dot_per_dtype(case, use_acc):
    _run(case, 64, 32, max(64, _min_k(case)), use_acc)


@pytest.mark.parametrize(
    ("m", "n", "k"), [(16, 16, 32), (16, 128, 32), (128, 16, 64), (128, 128, 32), (32, 64, 128)]
)
@pytest.mark.parametrize("case", ["f16", "tf32", "int8", "e4m3", "ieee"])
def test_dot_shapes(case, m, n, k):
    _run(case, m, n, k, use_acc=True)


@pytest.mark.parametrize(("m", "n", "k"), [(8, 16, 16), (16, 4, 32), (1, 16, 16), (2, 2, 16)])
def test_dot_below_one_instruction_tile(m, n, k):
    """Tiles smaller than 16 x 8 take the FMA dot."""
    _run("f16", m, n, k, use_acc=True)


@pytest.mark.parametrize("num_warps", [1, 2, 8])
@pytest.mark.parametrize("case", ["f16", "tf32x3"])
def test_dot_num_warps(case, num_warps):
    _run(case, 64, 64, 32, use_acc=True, num_warps=num_warps)


@pytest.mark.parametrize("num_warps", [1, 2])
@pytest.mark.parametrize("case", ["e4m3", "e5m2", "e5m2_acc16"])
def test_fp8_dot_below_a_warpgroup(case, num_warps):
    """fp8 dots of fewer than 4 warps (no wgmma) upcast their operands to f16 for mma.sync:
    on sm_89+ each register's pair of elements by one `cvt.rn.f16x2`."""
    _run(case, 64, 64, 64, use_acc=True, num_warps=num_warps)


@pytest.mark.parametrize("b_k_major", [False, True])
@pytest.mark.parametrize("case", ["e4m3", "e5m2"])
def test_fp8_matmul_loop_on_two_warps(case, b_k_major):
    """The pipelined K loop of a 2-warp fp8 matmul (tutorial 03's w2 configs: mma.sync with
    operands upcast by pairs), K not a multiple of the block."""
    dtype, acc, op = _LOOP_TYPES[case]
    gen = torch.Generator().manual_seed(11 + b_k_major)
    m, n, k = 64, 64, 208  # 16-byte rows (cp.async), a K tail of 16
    a, b = _random((m, k), dtype, gen), _random((k, n), dtype, gen)
    stored_b = b.T.contiguous() if b_k_major else b
    c = torch.full((m, n), 7, dtype=torch.float32, device="cuda")
    kernels.matmul_loop_typed[(1,)](
        a.cuda(), stored_b.cuda(), c, m, n, k, 32, b_k_major, acc, None, num_warps=2, num_stages=5
    )
    check(op, c.cpu(), (a.double() @ b.double()).numpy(), "gpu", np.float32, k=k)


@pytest.mark.full
@pytest.mark.parametrize("use_acc", [False, True])
@pytest.mark.parametrize("m", [16, 64, 128])
@pytest.mark.parametrize("n", [16, 64, 128])
@pytest.mark.parametrize("k", [32, 128])
@pytest.mark.parametrize("case", sorted(CASES))
def test_dot_matrix(case, m, n, k, use_acc):
    _run(case, m, n, k, use_acc)


def test_batched_dot():
    gen = torch.Generator().manual_seed(3)
    bsz, m, n, k = 4, 16, 16, 32
    a = torch.randn((bsz, m, k), generator=gen)
    b = torch.randn((bsz, k, n), generator=gen)
    c = torch.full((bsz, m, n), 7.0, device="cuda")
    kernels.dot3d[(1,)](a.cuda(), b.cuda(), c, bsz, m, n, k)
    check("dot", c.cpu(), (a.double() @ b.double()).numpy(), "gpu", np.float32, k=k)


def test_dot_in_a_loop_with_masked_k():
    gen = torch.Generator().manual_seed(4)
    m, n, k = 32, 16, 100
    a = torch.randn((m, k), generator=gen).half()
    b = torch.randn((k, n), generator=gen).half()
    c = torch.full((m, n), 7.0, device="cuda", dtype=torch.float16)
    kernels.matmul_loop[(1,)](a.cuda(), b.cuda(), c, m, n, k, 32)
    check("dot", c.cpu(), (a.double() @ b.double()).numpy(), "gpu", np.float16, k=k)


def test_an_older_architectures_code_runs_on_this_gpu():
    """NAIAD_CUDA_ARCH=sm_80 on a newer GPU: the K loop compiles to mma.sync and cp.async, and
    its PTX, which the driver compiles for the device, gives the same product."""
    gen = torch.Generator().manual_seed(8)
    m, n, k = 64, 64, 96
    a = torch.randn((m, k), generator=gen).half()
    b = torch.randn((k, n), generator=gen).half()
    c = torch.full((m, n), 7.0, device="cuda", dtype=torch.float16)
    kernels.matmul_loop.forget_compiled()
    try:
        with knobs.override(NAIAD_CUDA_ARCH="sm_80"):
            compiled = kernels.matmul_loop[(1,)](a.cuda(), b.cuda(), c, m, n, k, 32)
    finally:
        kernels.matmul_loop.forget_compiled()
    ptx = compiled.asm["ptx"]
    assert ".target sm_80" in ptx and "mma.sync" in ptx and "wgmma" not in ptx
    check("dot", c.cpu(), (a.double() @ b.double()).numpy(), "gpu", np.float16, k=k)


@pytest.mark.parametrize("m", [16, 64])
def test_chained_dots(m):
    """m = 64 on sm_90a: both dots on wgmma, the second's A from registers."""
    gen = torch.Generator().manual_seed(5)
    k = 32
    a, b, d = (torch.randn((m, k), generator=gen).half() for _ in range(3))
    c = torch.full((m, k), 7.0, device="cuda")
    kernels.chain[(1,)](a.cuda(), b.cuda(), d.cuda(), c, m, k)
    ab = (a.double() @ b.double().T).half().double()
    check("dot", c.cpu(), (ab @ d.double()).numpy(), "gpu", np.float32, k=m)


def test_chained_fp8_dots():
    """Attention's fp8 chain (wgmma on sm_90a: P through a K-major buffer, V stored
    transposed); the reference rounds P to fp8 as the kernel does."""
    gen = torch.Generator().manual_seed(6)
    m = k = 64
    a, b = (_random((m, k), torch.float8_e4m3fn, gen) for _ in range(2))
    v_t = _random((k, m), torch.float8_e4m3fn, gen)
    c = torch.full((m, k), 7.0, device="cuda")
    kernels.chain_fp8[(1,)](a.cuda(), b.cuda(), v_t.cuda(), c, m, k)
    p = (a.double() @ b.double().T).float().to(torch.float8_e4m3fn).double()
    check("dot_fp8", c.cpu(), (p @ v_t.double().T).numpy(), "gpu", np.float32, k=m)


@pytest.mark.parametrize("config", [0, 1, 2])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_tutorial_matmul(config, dtype):
    tutorial = load_module("gpu_matmul", ROOT / "examples" / "03_matmul.py")
    gen = torch.Generator().manual_seed(config)
    m, n, k = 101, 75, 50  # ragged: masked K tail, wrapped M / N offsets
    a = torch.randn((m, k), generator=gen).to(dtype)
    b = torch.randn((k, n), generator=gen).to(dtype)
    chosen = tutorial.matmul_kernel.configs[config]
    c = tutorial.matmul(a.cuda(), b.cuda(), "leaky_relu", chosen)
    ref = tutorial.reference(a, b, "leaky_relu")
    op = "dot" if dtype == torch.float16 else "dot_tf32"
    check(op, c.cpu(), ref, "gpu", np.float16, k=k)


_LOOP_TYPES = {
    "f16": (torch.float16, tl.float32, "dot"),
    "tf32": (torch.float32, tl.float32, "dot_tf32"),
    "int8": (torch.int8, tl.int32, "exact"),
    "e4m3": (torch.float8_e4m3fn, tl.float32, "dot_fp8"),
    "e5m2": (torch.float8_e5m2, tl.float32, "dot_fp8"),
}


@pytest.mark.parametrize("imprecise", [None, 32])
@pytest.mark.parametrize("k", [200, 208])
@pytest.mark.parametrize("b_k_major", [False, True])
@pytest.mark.parametrize("m", [64, 128])
@pytest.mark.parametrize("case", sorted(_LOOP_TYPES))
def test_typed_matmul_loop(case, m, b_k_major, k, imprecise):
    """A K loop (wgmma on sm_90a) for each operand type, B stored (N, K) or (K, N), K ragged:
    a multiple of 16 (rows aligned for `cp.async`: pipelined) or not; fp8 also with partial
    sums every 32 K elements."""
    dtype, acc, op = _LOOP_TYPES[case]
    if imprecise is not None and not case.startswith("e"):
        pytest.skip("max_num_imprecise_acc is an fp8 option")
    gen = torch.Generator().manual_seed(m + 2 * b_k_major + k)
    n, block_k = 64, 64
    a, b = _random((m, k), dtype, gen), _random((k, n), dtype, gen)
    stored_b = b.T.contiguous() if b_k_major else b
    out = torch.int32 if acc == tl.int32 else torch.float32
    c = torch.full((m, n), 7, dtype=out, device="cuda")
    kernels.matmul_loop_typed[(1,)](
        a.cuda(), stored_b.cuda(), c, m, n, k, block_k, b_k_major, acc, imprecise, num_stages=3
    )
    if dtype == torch.int8:
        torch.testing.assert_close(c.cpu(), (a.long() @ b.long()).to(torch.int32), rtol=0, atol=0)
        return
    check(op, c.cpu(), (a.double() @ b.double()).numpy(), "gpu", np.float32, k=k)
