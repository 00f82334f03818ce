"""Products split along K (naiad/ops/linalg/split_k.py): which products a GPU splits and how
many ways, the split path's values on this machine's back ends (the plan forced: the CPU's own
never splits) against a float64 reference, and the split kernels compiled for an H200."""

import numpy as np
import pytest
import torch
from ops_helpers import FLOATS, assert_matches, make

import naiad.language as tl
import naiad.ops as ops
from naiad.ops.kept import KeptTable
from naiad.ops.linalg import matmul
from naiad.ops.linalg.split_k import split_sum_kernel

DTYPES = [torch.float32, torch.float64] + [
    pytest.param(d, marks=pytest.mark.full) for d in FLOATS[1:]
]


@pytest.mark.parametrize(
    "dtype, m, n, k, batch, plan",
    [
        # 32 tiles of 128 x 256 on 132 multiprocessors: three splits of 1408 fill one wave
        (torch.bfloat16, 1024, 1024, 4096, 1, (128, 256, 3, 1408)),
        (torch.float16, 1024, 1024, 4000, 1, (128, 256, 3, 1344)),  # whole steps of BLOCK_K
        (torch.bfloat16, 256, 512, 4096, 4, (128, 256, 6, 704)),  # a batch's tiles count
        # 8 tiles of 128 x 256 make 64 programs in splits of 512 at the least, 16 of 128 x 128
        # make 96 in six
        (torch.bfloat16, 1024, 256, 4096, 1, (128, 128, 6, 704)),
        (torch.bfloat16, 16, 16, 2048, 1, (128, 128, 4, 512)),  # as many: the smaller tile
        (torch.float32, 1024, 1024, 4096, 1, (128, 128, 2, 2048)),
        # one wave of 88 large tiles is kept; a short K is not split
        (torch.bfloat16, 1024, 2816, 4096, 1, (128, 256, 1, 4096)),
        (torch.bfloat16, 1024, 1024, 1024, 1, (128, 64, 1, 1024)),
        # two splits of fp64 partial sums would pass the 16 MB workspace
        (torch.float64, 1152, 1152, 4096, 1, (128, 128, 1, 4096)),
    ],
)
def test_gpu_splits_long_k_over_few_tiles(dtype, m, n, k, batch, plan, monkeypatch):
    monkeypatch.setattr(matmul, "_multiprocessors", lambda device: 132)  # an H200
    block_m, block_n, _, _, splits, k_split = matmul._plan(
        torch.device("cuda"), dtype, m, n, k, batch
    )
    assert (block_m, block_n, splits, k_split) == plan
    assert (splits - 1) * k_split < k <= splits * k_split


def test_the_cpu_never_splits():
    assert matmul._plan(torch.device("cpu"), torch.float32, 16, 16, 1 << 16, 1)[4] == 1


@pytest.fixture
def split_in_64s(monkeypatch):
    """Every product splits K in ranges of 64 over 64 x 64 tiles, in launches kept apart from
    the other tests'."""
    monkeypatch.setattr(matmul, "_LAUNCHES", KeptTable(16))
    monkeypatch.setattr(
        matmul, "_plan", lambda device, dtype, m, n, k, batch: (64, 64, 32, {}, -(-k // 64), 64)
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [200, 192])  # the last split ragged (8 of 64), or every one whole
def test_split_products(dtype, k, gen, backend, split_in_64s):
    a, b = make((70, k), dtype, gen), make((90, k), dtype, gen).t()  # b transposed
    expected = a.double() @ b.double()
    scale = 4 * k**0.5
    assert_matches(ops.mm(a, b), expected.to(dtype), scale, normwise=True)
    bias = make((90,), dtype, gen)
    actual = ops.addmm(bias, a, b, beta=0.5, alpha=2)
    assert_matches(actual, (0.5 * bias.double() + 2 * expected).to(dtype), scale, normwise=True)
    x, y, c = make((3, 20, k), dtype, gen), make((3, k, 17), dtype, gen), make((20, 1), dtype, gen)
    expected = 2 * c.double() + x.double() @ y.double()
    assert_matches(ops.baddbmm(c, x, y, beta=2), expected.to(dtype), scale, normwise=True)


def test_split_products_repeat_bit_for_bit(gen, compiled, split_in_64s):
    """The partial sums are added in split order, whichever program finished first."""
    a, b = make((130, 300), torch.float32, gen), make((300, 70), torch.float32, gen)
    first = ops.mm(a, b)
    assert all(torch.equal(ops.mm(a, b), first) for _ in range(3))
    assert_matches(first, (a.double() @ b.double()).float(), 4 * 300**0.5, normwise=True)


@pytest.mark.parametrize("tile", [0, 1])
def test_gpu_split_kernels_pipeline_without_spills(tile):
    """Compiled for an H200 without one: a split product of a ragged K (both tiles that split)
    still loads its operands by 16-byte copies, pipelined into asynchronous wgmma, and the sum
    reads its partial sums by 16-byte loads; neither spills."""
    m = n = 1024
    k, k_split, splits = 4000, 1408, 3
    a, b = np.zeros((m, k), np.float16), np.zeros((k, n), np.float16)
    parts, c = np.zeros((splits, m, n), np.float32), np.zeros((m, n), np.float16)
    block_m, block_n, block_k, options = matmul._HALF_TILES[tile]
    strides = (0, k, 1, 0, n, 1) + (m * n, n, 1) * 2
    product = _product_for_h200(a, b, parts, m, n, k, k_split, strides, splits, options,
                                     (block_m, block_n, block_k))  # fmt: skip
    ttgir = product.asm["ttgir"]
    assert "ttg.async_copy_global_to_local" in ttgir and "isAsync = true" in ttgir
    assert "cp.async.cg.shared.global [" in product.asm["ptx"]
    assert product.n_spills in (0, None)
    summed = split_sum_kernel.warmup(
        parts, c, c, m, n, m * n, n, 1, m * n, n, 1, 1.0, 1.0, True, True, splits, 32, 128,
        grid=(1,), target="cuda:sm_90a",
    )  # fmt: skip
    assert "ld.global.v4.b32" in summed.asm["ptx"]
    assert summed.n_spills in (0, None)


def _product_for_h200(a, b, c, m, n, k, k_split, strides, splits, options, blocks):
    """matmul_kernel compiled for an H200 as a split product launches it (no bias, unscaled,
    fp32 partial sums; EVEN_K where the split divides K)."""
    return matmul.matmul_kernel.warmup(
        a, b, c, c, m, n, k, k_split, *strides, 1.0, 1.0, False, False, tl.float32, None,
        k % k_split == 0, splits, *blocks, 8, grid=(1,), target="cuda:sm_90a", **options,
    )  # fmt: skip
