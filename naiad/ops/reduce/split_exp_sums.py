"""softmax, log_softmax and logsumexp of few long rows, each row split in parts over programs.

split_rows.py splits the reductions whose partials fold by their own operation; these rows'
statistic, the max and the sum of exp(x - max), folds by another: each part's (peak, total) is
taken in one pass (row_max_sum_exp), and a row's total is its parts' totals rescaled to the
row's peak, sum(total_p * exp(peak_p - peak)), as the online sum rescales a block's. Then
softmax writes each part from its own program again (every program folds its row's partials
itself, PARTS loads), and logsumexp folds each row once. The parts are split_rows.split_parts'.

The partials lie in one buffer of 2 x (rows x parts) values of the accumulator's dtype: the
parts' peaks, then their totals.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import empty
from .kernels import _max, _rows, log_sum_exp, row_max_sum_exp, softmax_written
from .launch import launch_rows
from .rows import Rows

__all__ = ["SOFTMAX_LEAST_PART_BYTES", "split_logsumexp", "split_softmax"]

# softmax's least part on a GPU (split_rows.split_parts'), smaller than a reduction's: the
# unsplit softmax reads its rows twice and writes them, and a row's one program loses more.
# On an H200, parts of 16 KiB of fp32 or 8 KiB of bf16 gained where the rows were split
# (512 x 32768: fp32 0.63 -> 0.91, bf16 0.60 -> 1.06), where a reduction's 64 KiB left bf16
# 128 x 131072 at 0.62 against 1.15. logsumexp, one pass over its rows, lost with parts that
# small (bf16 1024 x 16384: 5.7 -> 3.4 of torch) and takes a reduction's.
SOFTMAX_LEAST_PART_BYTES = 8192


@jit
def part_max_sum_exp_kernel(x, partials, M, N, s_m, s_n, s_out, COMPUTE: tl.constexpr,
                            INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr):  # fmt: skip
    """partials[m] = the peak of part m (one of M), partials[M + m] its sum of exp(x - shift)."""
    parts = _rows(BLOCK_M, INDEX64)
    part_mask = parts < M
    peak, _, total = row_max_sum_exp(x, parts, part_mask, N, s_m, s_n, COMPUTE, BLOCK_M,
                                     BLOCK_N)  # fmt: skip
    tl.store(partials + parts * s_out, peak, mask=part_mask)
    tl.store(partials + M + parts * s_out, total, mask=part_mask)


@jit
def _folded(partials, rows, row_mask, M, PARTS: tl.constexpr):
    """(peak, shift, total) of each of `rows` (of M) from its PARTS parts' (peak, total), as
    row_max_sum_exp gives them for whole rows: a part of -inf adds nothing, a NaN or a +inf
    in any part reaches the row's."""
    where = rows[:, None] * PARTS + tl.arange(0, PARTS)[None, :]
    peaks = tl.load(partials + where, mask=row_mask[:, None], other=float("-inf"))
    totals = tl.load(partials + M * PARTS + where, mask=row_mask[:, None], other=0.0)
    peak = tl.reduce(peaks, 1, _max)
    shift = tl.where(peak == float("-inf"), 0.0, peak)
    empty_part = peaks == float("-inf")
    own_shift = tl.where(empty_part, 0.0, peaks)
    rescaled = tl.where(empty_part, 0.0, totals * tl.exp(own_shift - shift[:, None]))
    return peak, shift, tl.sum(rescaled, 1)


@jit
def softmax_part_kernel(x, out, M, N, s_m, s_n, s_out, partials, LOG: tl.constexpr,
                        PARTS: tl.constexpr, COMPUTE: tl.constexpr, INDEX64: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """softmax (log_softmax where LOG) of M parts of N elements, PARTS parts a row: each part's
    row statistic folded from the row's partials, then the part written."""
    parts = _rows(BLOCK_M, INDEX64)
    part_mask = parts < M
    _, shift, total = _folded(partials, parts // PARTS, part_mask, M // PARTS, PARTS)
    softmax_written(x, out, parts, part_mask, N, s_m, s_n, shift, total, LOG, COMPUTE, BLOCK_M,
                    BLOCK_N)  # fmt: skip


@jit
def logsumexp_parts_kernel(partials, out, M, N, s_m, s_n, s_out, PARTS: tl.constexpr,
                           COMPUTE: tl.constexpr, INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr):  # fmt: skip
    """out[m] = logsumexp of row m (of M) from its PARTS parts' partials (the rows' view of the
    partials serves the launch only: N == PARTS)."""
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    peak, shift, total = _folded(partials, rows, row_mask, M, PARTS)
    tl.store(out + rows * s_out, log_sum_exp(peak, shift, total).to(out.dtype.element_ty),
             mask=row_mask)  # fmt: skip


def split_softmax(rows: Rows, parts: int, out, log: bool, compute: torch.dtype):
    """softmax (log_softmax where `log`) of contiguous `rows` into the contiguous (M, N) `out`,
    each row in `parts` parts; both launches made now. Returns `launch(data, out)`, which
    repeats them for a call of the kind on its own tensors (a plan's)."""
    pieces = rows.in_parts(parts)
    device = rows.data.device
    partials = empty((2 * pieces.M,), compute, device)
    first = launch_rows(part_max_sum_exp_kernel, pieces, [partials], [], compute)
    second = launch_rows(softmax_part_kernel, pieces, [out], [partials], compute, LOG=log,
                         PARTS=parts)  # fmt: skip

    def launch(data, result):
        buffer = empty((2 * pieces.M,), compute, device)
        first(data, buffer)
        second(data, result, buffer)

    return launch


def split_logsumexp(rows: Rows, parts: int, target, compute: torch.dtype) -> None:
    """logsumexp of contiguous `rows` into `target` (M values), each row in `parts` parts."""
    pieces = rows.in_parts(parts)
    partials = empty((2 * pieces.M,), compute, rows.data.device)
    launch_rows(part_max_sum_exp_kernel, pieces, [partials], [], compute)
    folded = Rows.contiguous(partials, rows.M, parts)
    launch_rows(logsumexp_parts_kernel, folded, [target], [], compute, PARTS=parts)
