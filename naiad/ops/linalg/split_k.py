"""A split of K for products with few output tiles and a long K, on a GPU.

A 1024 x 1024 product of K = 4096 has 64 tiles of 128 x 128: half of an H200's 132
multiprocessors sit idle, or smaller tiles fill them and each reloads its operands twice as
often (1024x4096x1024, bf16: 24.7 us in 128 tiles of 128 x 64, against cuBLAS's 17.7). Split
in S ranges of K, the product runs tiles x S programs of the large tile, each writing its
partial sum in the accumulator's type to a workspace; `split_sum_kernel` then adds the S
partial sums of each element in split order, applies alpha and the bias, and stores the
result. Addition in a fixed order keeps every result the same from run to run, which atomic
additions into the output would not.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["SplitSum", "split_sum_kernel", "splits_of_k"]

# K is long enough to split from this length on: shorter products fill the GPU in whole
# tiles or cost less than the second launch saves.
LONG_K = 2048
# Each split walks at least this much of K, so that its loads still pipeline over many steps.
_MIN_SPLIT_K = 512
_MAX_SPLITS = 16
# The partial sums stay within this many bytes: a third of an H100's or H200's 50 MB L2, so
# that the sum reads them back from the cache they were just written to.
_WORKSPACE_BYTES = 16 << 20


def splits_of_k(programs: int, k: int, block_k: int, wanted: float, slab_bytes: int):
    """(splits, K per split) for a product of `programs` tiles (over its batch) with inner
    length `k`, whose partial sums take `slab_bytes` per split: the fewest splits whose
    programs reach `wanted` (most of the multiprocessors: about one wave), within the
    workspace and the shortest split; (1, k) where no split adds programs."""
    best = (1, k)
    for tried in range(2, _MAX_SPLITS + 1):
        k_split = -(-k // tried)
        k_split = -(-k_split // block_k) * block_k  # whole steps of BLOCK_K
        splits = -(-k // k_split)  # rounding up the split may leave fewer
        if k_split < _MIN_SPLIT_K or splits * slab_bytes > _WORKSPACE_BYTES:
            break
        if splits > best[0]:
            best = (splits, k_split)
        if programs * splits >= wanted:
            break
    return best


@jit(do_not_specialize=["alpha", "beta"])
def split_sum_kernel(parts, c, bias, M, N, s_cb, s_cm, s_cn, s_xb, s_xm, s_xn, alpha, beta,
                     HAS_BIAS: tl.constexpr, SCALED: tl.constexpr, SPLITS: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """c[p] = alpha * (parts[p, 0] + ... + parts[p, SPLITS - 1]) + beta * bias[p], over a
    BLOCK_M x BLOCK_N tile per program, p = program_id(1); `parts` is contiguous
    (batch, SPLITS, M, N). The sum runs in split order, the same in every run."""
    p = tl.program_id(1).to(tl.int64)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid = tl.program_id(0)
    rows = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    slab = M * N
    part_ptrs = parts + p * SPLITS * slab + rows[:, None] * N + cols[None, :]
    acc = tl.load(part_ptrs, mask=mask)
    for split in range(1, SPLITS):
        acc += tl.load(part_ptrs + split * slab, mask=mask)
    if SCALED:
        acc = acc * alpha
    if HAS_BIAS:
        x = tl.load(bias + p * s_xb + rows[:, None] * s_xm + cols[None, :] * s_xn, mask=mask)
        acc += x.to(acc.dtype) * beta
    offsets = p * s_cb + rows[:, None] * s_cm + cols[None, :] * s_cn
    tl.store(c + offsets, acc.to(c.dtype.element_ty), mask=mask)


# The sum's tile: 4,096 elements, 32 a thread over 4 warps, rows of 128 contiguous elements.
_SUM_M, _SUM_N = 32, 128


class SplitSum:
    """The second launch of a split product: its workspace's shape and type, and the sum's
    bound launch, made at its first run (what changes between calls: the workspace, the
    result, the bias, and alpha and beta where the sum reads them)."""

    __slots__ = ("biased", "bound", "device", "dtype", "factors", "fixed", "grid", "shape")

    def __init__(self, batch: int, splits: int, m: int, n: int, acc, device, strides, biased,
                 scaled):  # fmt: skip
        self.shape = (batch * splits, m, n)
        self.dtype, self.device = acc, device
        self.biased, self.factors = biased, scaled or biased
        self.grid = (-(-m // _SUM_M) * -(-n // _SUM_N), batch)
        self.fixed = (m, n, *strides, biased, scaled, splits, _SUM_M, _SUM_N)
        self.bound = None

    def workspace(self) -> torch.Tensor:
        """Where the product's programs write their partial sums."""
        return torch.empty(self.shape, dtype=self.dtype, device=self.device)

    def run(self, parts, c, bias, alpha, beta):
        """c = alpha * (the sum of `parts` over the splits) + beta * bias."""
        tensors = ("parts", "c", "bias") if self.biased else ("parts", "c")
        operands = (parts, c, bias) if self.biased else (parts, c)
        factors = (float(alpha), float(beta)) if self.factors else ()
        if self.bound is None:
            m, n, *strides, biased, scaled, splits, block_m, block_n = self.fixed
            varying = tensors + ("alpha", "beta") if self.factors else tensors
            self.bound = split_sum_kernel.bind_launch(
                varying, self.grid, parts, c, bias, m, n, *strides, float(alpha), float(beta),
                biased, scaled, splits, block_m, block_n, typed=tensors,
            )  # fmt: skip
        self.bound(*operands, *factors)
