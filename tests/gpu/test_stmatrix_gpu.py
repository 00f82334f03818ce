"""Matmul epilogues that store the accumulator into shared memory with `stmatrix`
(lowering/stmatrix.py), on the GPU: the TMA store's buffer (C and C^T) and the round trip to
masked pointer stores' layout; wgmma and mma.sync tiles, f16 and bf16, sizes that are not
multiples of the tile (nothing is written past the edge). Integer-valued inputs make every sum
exact, so C must equal NumPy's bit for bit wherever an element lands; random normal inputs are
checked within the tolerance table. On sm_90 the PTX is checked to hold `stmatrix` (elsewhere
the vector stores run the same test).

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import pytest
import torch
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

import naiad
import naiad.language as tl
from naiad.testing import check
from naiad.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu

_NAMES = {torch.float16: "fp16", torch.bfloat16: "bf16"}


@naiad.jit
def tiled_matmul(
    a_desc,
    b_desc,
    c_desc,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    TRANSPOSE: tl.constexpr,
):
    """C (or C^T when TRANSPOSE) = A @ B, one BM x BN tile a program, stored by descriptor."""
    row = tl.program_id(0) * BM
    col = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([row, k]), b_desc.load([k, col]), acc)
    out = acc.to(c_desc.dtype)
    if TRANSPOSE:
        c_desc.store([col, row], tl.trans(out))
    else:
        c_desc.store([row, col], out)


@naiad.jit
def pointer_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B (row-major, contiguous), one BM x BN tile a program, masked at the edges: the
    accumulator goes to the stores' layout through shared memory (a convert_layout)."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        ks = k + tl.arange(0, BK)
        a_block = tl.load(
            a + rows[:, None] * K + ks[None, :],
            mask=(rows[:, None] < M) & (ks[None, :] < K),
            other=0.0,
        )
        b_block = tl.load(
            b + ks[:, None] * N + cols[None, :],
            mask=(ks[:, None] < K) & (cols[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a_block, b_block, acc)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c + rows[:, None] * N + cols[None, :], acc.to(c.dtype.element_ty), mask=inside)


@naiad.jit
def chained_dots(a, b, x, out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """out = X @ (A @ B): the first accumulator goes into the buffer the second dot reads."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    ab = tl.dot(
        tl.load(a + rm[:, None] * K + rk[None, :]), tl.load(b + rk[:, None] * N + rn[None, :])
    )
    y = tl.dot(tl.load(x + rm[:, None] * M + rm[None, :]), ab.to(x.dtype.element_ty))
    tl.store(out + rm[:, None] * N + rn[None, :], y)


def _run(a, b, tile, warps, transpose):
    """C from the kernel (poisoned first) and the compiled kernel's PTX."""
    (m, k), n = a.shape, b.shape[1]
    bm, bn, bk = tile
    c = torch.full((n, m) if transpose else (m, n), 7.0, dtype=a.dtype, device="cuda")
    block = [bn, bm] if transpose else [bm, bn]
    args = (
        TensorDescriptor.from_tensor(a, [bm, bk]),
        TensorDescriptor.from_tensor(b, [bk, bn]),
        TensorDescriptor.from_tensor(c, block),
        k,
    )
    meta = dict(BM=bm, BN=bn, BK=bk, TRANSPOSE=transpose, num_warps=warps)
    grid = (-(-m // bm), -(-n // bn))
    ptx = tiled_matmul.warmup(*args, **meta, grid=grid).asm["ptx"]
    tiled_matmul[grid](*args, **meta)
    return (c.T if transpose else c).cpu(), ptx


# (M, N, K), (BM, BN, BK), warps: wgmma tiles, mma.sync tiles; edges that cut tiles (sizes
# multiples of 16 bytes, which the descriptors copy by TMA)
CASES = [
    ((128, 128, 64), (64, 64, 32), 4),
    ((144, 80, 96), (128, 128, 64), 8),
    ((256, 256, 128), (128, 256, 64), 8),
    ((80, 48, 48), (32, 32, 16), 4),
    ((48, 48, 32), (16, 16, 16), 4),
]


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("sizes", "tile", "warps"), CASES)
def test_exact_epilogues(sizes, tile, warps, dtype, transpose):
    """Integer-valued operands: every product and sum is exact in the f32 accumulator, so C is
    the exact product rounded once to `dtype`."""
    m, n, k = sizes
    gen = torch.Generator().manual_seed(m * 7 + n + k)
    a = torch.randint(-3, 4, (m, k), generator=gen).to(dtype)
    b = torch.randint(-3, 4, (k, n), generator=gen).to(dtype)
    c, ptx = _run(a.cuda(), b.cuda(), tile, warps, transpose)
    expected = torch.from_numpy(a.double().numpy() @ b.double().numpy()).to(dtype)
    assert torch.equal(c, expected)
    if torch.cuda.get_device_capability() >= (9, 0):
        assert "stmatrix.sync.aligned.m8n8" in ptx
        if transpose:  # C's column-major buffer (small tiles' operand stores may take it too)
            assert ".trans.shared.b16" in ptx


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("sizes", "tile", "warps"), CASES[:2] + CASES[3:4])
def test_random_epilogues(sizes, tile, warps, dtype):
    m, n, k = sizes
    gen = torch.Generator().manual_seed(m + n * 3 + k)
    a = torch.randn((m, k), generator=gen, dtype=torch.float64).to(dtype)
    b = torch.randn((k, n), generator=gen, dtype=torch.float64).to(dtype)
    c, _ = _run(a.cuda(), b.cuda(), tile, warps, False)
    expected = a.double().numpy() @ b.double().numpy()
    check("dot", c.float(), expected, "gpu", _NAMES[dtype], k=k)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("sizes", "tile", "warps"), CASES)
def test_pointer_epilogues(sizes, tile, warps, dtype):
    """The accumulator converted to the masked stores' layout: on sm_90 the round trip
    through shared memory stores by `stmatrix` where its plan chose it."""
    m, n, k = sizes
    bm, bn, bk = tile
    gen = torch.Generator().manual_seed(m * 5 + n * 3 + k)
    a = torch.randint(-3, 4, (m, k), generator=gen).to(dtype)
    b = torch.randint(-3, 4, (k, n), generator=gen).to(dtype)
    c = torch.full((m, n), 7.0, dtype=dtype, device="cuda")
    args = (a.cuda(), b.cuda(), c, m, n, k)
    meta = dict(BM=bm, BN=bn, BK=bk, num_warps=warps)
    grid = (-(-m // bm), -(-n // bn))
    if torch.cuda.get_device_capability() >= (9, 0):
        assert (
            "stmatrix.sync.aligned.m8n8"
            in pointer_matmul.warmup(*args, **meta, grid=grid).asm["ptx"]
        )
    pointer_matmul[grid](*args, **meta)
    expected = torch.from_numpy(a.double().numpy() @ b.double().numpy()).to(dtype)
    assert torch.equal(c.cpu(), expected)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("m", "n", "k", "warps"), [(64, 64, 64, 4), (128, 128, 64, 8)])
def test_chained_accumulator_buffers(m, n, k, dtype, warps):
    """A @ B rounded to `dtype` is the second dot's B (a buffer stored from the accumulator):
    integer-valued inputs small enough that both products are exact in f32 and A @ B in
    `dtype` (|A @ B| <= 2 k <= 256), so the result equals NumPy's bit for bit."""
    gen = torch.Generator().manual_seed(m + n + k)
    a = torch.randint(-1, 2, (m, k), generator=gen).to(dtype)
    b = torch.randint(-2, 3, (k, n), generator=gen).to(dtype)
    x = torch.randint(-2, 3, (m, m), generator=gen).to(dtype)
    out = torch.full((m, n), 7.0, device="cuda")
    args = (a.cuda(), b.cuda(), x.cuda(), out)
    meta = dict(M=m, N=n, K=k, num_warps=warps)
    if torch.cuda.get_device_capability() >= (9, 0):
        assert (
            "stmatrix.sync.aligned.m8n8" in chained_dots.warmup(*args, **meta, grid=(1,)).asm["ptx"]
        )
    chained_dots[(1,)](*args, **meta)
    ab = a.double().numpy() @ b.double().numpy()
    expected = x.double().numpy() @ ab
    assert torch.equal(out.cpu().double(), torch.from_numpy(expected))
