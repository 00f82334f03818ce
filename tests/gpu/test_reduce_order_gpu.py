"""On the GPU: reductions combine in Triton's order, bit for bit, and the barrier a reduction
leaves owed (lowering/barriers.py) keeps the scratch safe wherever it is paid.

The order (tests/backends/nvidia/test_reduce_lowering.py checks its shape in the PTX): a
thread's registers as a tree of adjacent pairs, then a butterfly over the lanes (xor 16
first), then the warps' partials by halving (k with k + W/2 first). A NumPy model of that
order in float32 gives the GPU's sums bit for bit on inputs spread over many binades, where
another order would differ in the last bits.
"""

import numpy as np
import pytest
import torch
from fixture_kernels.reductions import branchy_kernel, loop_then_if_kernel
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

import naiad
import naiad.language as tl

pytestmark = pytest.mark.gpu


@naiad.jit
def row_sums_kernel(x_ptr, y_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(y_ptr + row, tl.sum(x, axis=0))


def model_row_sums(x: np.ndarray, warps: int, per_thread: int = 4) -> np.ndarray:
    """Row sums of float32 `x` in the order of a blocked layout of `per_thread` elements per
    thread, 32 lanes and `warps` warps (the tile repeated along the row)."""
    rows, n = x.shape
    threads = 32 * warps
    reps = n // (per_thread * threads)
    registers = x.reshape(rows, reps, threads, per_thread).transpose(0, 2, 1, 3)
    v = registers.reshape(rows, threads, reps * per_thread)
    while v.shape[-1] > 1:  # adjacent pairs, in register order
        v = v[..., 0::2] + v[..., 1::2]
    v = v[..., 0].reshape(rows, warps, 32)
    lanes = np.arange(32)
    for bit in (16, 8, 4, 2, 1):
        v = v + v[..., lanes ^ bit]
    partials = v[..., 0]
    while partials.shape[1] > 1:
        half = partials.shape[1] // 2
        partials = partials[:, :half] + partials[:, half:]
    return partials[:, 0]


@pytest.mark.parametrize("warps", [4, 8])
@pytest.mark.parametrize("n", [1024, 4096])
def test_row_sums_are_bit_exact_with_the_order_model(n, warps):
    rng = np.random.default_rng(n + warps)
    rows = 256
    x = (rng.standard_normal((rows, n)) * 2.0 ** rng.integers(-12, 12, (rows, n))).astype(
        np.float32
    )
    y = torch.full((rows,), float("nan"), device="cuda")
    row_sums_kernel[(rows,)](torch.from_numpy(x).cuda(), y, N=n, num_warps=warps)
    want = model_row_sums(x, warps)
    np.testing.assert_array_equal(y.cpu().numpy().view(np.uint32), want.view(np.uint32))


@naiad.jit
def looped_stats_kernel(x_ptr, out_ptr, n_rows, N: tl.constexpr):
    """Per row: its max, then the sum of exp(x - max), in a loop over rows (the owed barrier
    is paid before the loop's branch back)."""
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(x_ptr + row * N + tl.arange(0, N))
        top = tl.max(x, axis=0)
        total = tl.sum(tl.exp(x - top), axis=0)
        tl.store(out_ptr + 2 * row, top)
        tl.store(out_ptr + 2 * row + 1, total)


def test_reductions_in_a_loop_over_rows():
    rng = np.random.default_rng(11)
    rows, n = 1000, 2048
    x = torch.tensor(rng.standard_normal((rows, n)) * 4, dtype=torch.float32, device="cuda")
    out = torch.full((rows, 2), float("nan"), device="cuda")
    looped_stats_kernel[(37,)](x, out, rows, N=n, num_warps=8)
    top = x.max(dim=1).values
    torch.testing.assert_close(out[:, 0], top, rtol=0, atol=0)
    total = torch.exp(x.double() - top.double()[:, None]).sum(dim=1)
    torch.testing.assert_close(out[:, 1].double(), total, rtol=1e-5, atol=0)


@pytest.mark.parametrize("flag", [0, 1])
def test_reductions_around_an_if(flag):
    rng = np.random.default_rng(5 + flag)
    x64 = rng.standard_normal(2048)
    x = torch.tensor(x64, dtype=torch.float32, device="cuda")
    y = torch.full((1,), float("nan"), device="cuda")
    branchy_kernel[(1,)](x, y, flag, N=2048, num_warps=8)
    xs = x.double().cpu().numpy()
    total = xs.sum()
    if flag:
        total += (xs * total).max()
    want = total + xs.min()
    assert abs(y.item() - want) <= 1e-4 * max(1.0, abs(want))


def test_a_loop_whose_body_ends_with_an_if():
    rng = np.random.default_rng(17)
    rows, n = 64, 2048
    x = torch.tensor(rng.standard_normal((rows, n)), dtype=torch.float32, device="cuda")
    y = torch.zeros(rows, device="cuda")
    loop_then_if_kernel[(1,)](x, y, rows, N=n, num_warps=8)
    sums = x.double().sum(dim=1)
    want = torch.where(sums > 0, sums, torch.zeros_like(sums))
    torch.testing.assert_close(y.double(), want, rtol=1e-5, atol=1e-4)
