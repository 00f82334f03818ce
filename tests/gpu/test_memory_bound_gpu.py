"""On the GPU: the lowering choices that make memory-bound kernels match Triton's PTX keep
their values - a masked load's `other` moved into the load registers (f32 and packed f16, a
tensor `other`, vector and scalar widths), mask compares computed once per run of equal
values, and reductions across warps whose scratch allocate-shared-memory placed.
"""

import numpy as np
import pytest
import torch
from fixture_kernels.reductions import column_stats_kernel

import naiad
import naiad.language as tl

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    """Launches on CUDA tensors compile for the GPU (the test-wide default is the
    interpreter)."""
    monkeypatch.setenv("NAIAD_BACKEND", "auto")


@naiad.jit
def masked_copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    fill = (offs % 7).to(x_ptr.dtype.element_ty) - 2.5
    x = tl.load(x_ptr + offs, mask=offs < n, other=fill)
    tl.store(out_ptr + offs, x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("n", [0, 1, 100, 1003, 2048, 4095])
def test_other_fills_masked_off_elements(dtype, n):
    torch.manual_seed(n)
    block, programs = 1024, 4
    x = torch.randn(block * programs, device="cuda").to(dtype)
    out = torch.full_like(x, float("nan"))
    masked_copy_kernel[(programs,)](x, out, n, BLOCK=block)
    offs = torch.arange(block * programs, device="cuda")
    want = torch.where(offs < n, x, (offs % 7).to(dtype) - 2.5)
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@naiad.jit
def masked_sum_kernel(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0).to(tl.float32)
        acc += tl.where(cols < n, x * x, 0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@pytest.mark.parametrize("n", [1000, 1003, 4096, 8192])
def test_row_sums_of_squares_with_tails(n):
    torch.manual_seed(n)
    m, block = 64, 2048
    x = torch.randn(m, n + 5, device="cuda", dtype=torch.float16)
    out = torch.empty(m, device="cuda")
    masked_sum_kernel[(m,)](x, out, n, x.stride(0), BLOCK=block, num_warps=8)
    want = (x[:, :n].double() ** 2).sum(dim=1)
    torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-3)


def test_reductions_across_warps_share_their_scratch():
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((64, 32)), dtype=torch.float32, device="cuda")
    y = torch.full((64,), float("nan"), device="cuda")
    column_stats_kernel[(1,)](x, y, M=64, N=32, num_warps=8)
    torch.testing.assert_close(y[:32], x.sum(dim=0), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(y[32:], (x * 2.0).amax(dim=0), rtol=0, atol=0)
