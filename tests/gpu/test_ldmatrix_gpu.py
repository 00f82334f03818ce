"""`tl.dot` operands reaching `mma.sync` through `ldmatrix` (lowering/ldmatrix.py), on the GPU,
for the paths tests/gpu/test_dot_gpu.py does not take: A stored column-major (`.trans` on A),
B stored N x K (plain ldmatrix on B, 8- and 32-bit operands too), bf16 on eight warps, and
tiles of one instruction. References in float64 (int8 exact), within the tolerance table.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import numpy as np
import pytest
import torch
from gpu_helpers import ROOT, compiled, load_module  # noqa: F401 (compiled: autouse fixture)

import naiad.language as tl
from naiad.testing import check

pytestmark = pytest.mark.gpu


# The kernel is the language tier's (tests/language/dot_kernels.py).
dot_majors = load_module(
    "gpu_ldmatrix_dot_kernels", ROOT / "tests" / "language" / "dot_kernels.py"
).dot_majors


# operand torch dtype -> (result torch dtype, result tl dtype, tolerance op)
_TYPES = {
    torch.float16: (torch.float32, tl.float32, "dot"),
    torch.bfloat16: (torch.float32, tl.float32, "dot"),
    torch.float32: (torch.float32, tl.float32, "dot_tf32"),
    torch.int8: (torch.int32, tl.int32, "exact"),
    torch.float8_e4m3fn: (torch.float32, tl.float32, "dot_fp8"),
}


def _random(shape, dtype, gen):
    if dtype == torch.int8:
        return torch.randint(-128, 128, shape, generator=gen, dtype=torch.int8)
    return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)


def _run(dtype, m, n, k, a_k_major, b_k_major, num_warps=4):
    out_dtype, out, op = _TYPES[dtype]
    gen = torch.Generator().manual_seed(m * 31 + n * 7 + k + 2 * a_k_major + b_k_major)
    a, b = _random((m, k), dtype, gen), _random((k, n), dtype, gen)
    a_stored = a if a_k_major else a.T.contiguous()
    b_stored = b.T.contiguous() if b_k_major else b
    c = torch.full((m, n), 7, dtype=out_dtype, device="cuda")  # poisoned
    args = (a_stored.cuda(), b_stored.cuda(), c, m, n, k, a_k_major, b_k_major, out)
    dot_majors[(1,)](*args, num_warps=num_warps)
    if dtype == torch.int8:
        ref = (a.long() @ b.long()).to(torch.int32)
        torch.testing.assert_close(c.cpu(), ref, rtol=0, atol=0)
        return
    ref = (a.double() @ b.double()).numpy()
    check(op, c.cpu(), ref, "gpu", np.dtype(str(out_dtype).removeprefix("torch.")), k=k)


@pytest.mark.parametrize(("a_k_major", "b_k_major"), [(False, False), (True, True), (False, True)])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("m", "n", "k"), [(16, 16, 16), (16, 8, 32), (64, 32, 64), (128, 64, 32)])
def test_16_bit_operands_either_major(dtype, m, n, k, a_k_major, b_k_major):
    _run(dtype, m, n, k, a_k_major, b_k_major)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int8, torch.float8_e4m3fn])
@pytest.mark.parametrize(("m", "n", "k"), [(16, 16, 32), (64, 64, 64)])
def test_b_stored_n_by_k(dtype, m, n, k):
    """8- and 32-bit B with K contiguous: plain ldmatrix on both operands."""
    _run(dtype, m, n, k, a_k_major=True, b_k_major=True)


@pytest.mark.parametrize(("a_k_major", "b_k_major"), [(True, False), (False, True)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_eight_warps(dtype, a_k_major, b_k_major):
    _run(dtype, 128, 128, 64, a_k_major, b_k_major, num_warps=8)
