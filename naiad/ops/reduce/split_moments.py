"""var / std / var_mean / std_mean of few long rows, each row split in parts over programs.

The rows' two passes (the mean, then the squared deviations from it) run over each part
(kernels._row_moments), and a row's statistics are folded from its parts' as in a parallel
variance: with parts of n elements each, the mean is the mean of the parts' means, and the
sum of squared deviations the parts' sums plus n * sum((part mean - mean)^2). The parts are
split_rows.split_parts'; the partials lie in one buffer, the parts' means then their sums.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import empty
from .kernels import _row_moments, _rows
from .launch import launch_rows
from .rows import Rows

__all__ = ["split_moments"]


@jit
def part_moments_kernel(x, partials, M, N, s_m, s_n, s_out, COMPUTE: tl.constexpr,
                        INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr):  # fmt: skip
    """partials[m] = the mean of part m (one of M), partials[M + m] its sum of squared
    deviations from that mean."""
    parts = _rows(BLOCK_M, INDEX64)
    part_mask = parts < M
    average, deviations = _row_moments(x, parts, part_mask, N, s_m, s_n, COMPUTE, BLOCK_M,
                                       BLOCK_N)  # fmt: skip
    tl.store(partials + parts * s_out, average, mask=part_mask)
    tl.store(partials + M + parts * s_out, deviations, mask=part_mask)


@jit(do_not_specialize=["correction"])
def moments_of_parts_kernel(partials, var, mean, M, N, s_m, s_n, s_out, correction, part_n,
                            SQRT: tl.constexpr, PARTS: tl.constexpr, COMPUTE: tl.constexpr,
                            INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr):  # fmt: skip
    """var[m] (its root where SQRT) and mean[m] of row m (of M) from its PARTS parts of
    `part_n` elements (the rows' view of the partials serves the launch only: N == PARTS)."""
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    where = rows[:, None] * PARTS + tl.arange(0, PARTS)[None, :]
    means = tl.load(partials + where, mask=row_mask[:, None], other=0.0)
    squares = tl.load(partials + M * PARTS + where, mask=row_mask[:, None], other=0.0)
    average = tl.sum(means, 1) / PARTS
    apart = means - average[:, None]
    deviations = tl.sum(squares, 1) + part_n * tl.sum(apart * apart, 1)
    result = deviations / tl.maximum(part_n * PARTS - correction, 0.0)
    if SQRT:
        result = tl.sqrt(result)
    tl.store(var + rows * s_out, result.to(var.dtype.element_ty), mask=row_mask)
    tl.store(mean + rows * s_out, average.to(mean.dtype.element_ty), mask=row_mask)


def split_moments(rows: Rows, parts: int, spread, center, correction: float, root: bool,
                  compute: torch.dtype):  # fmt: skip
    """The variance (its root where `root`) and mean of contiguous `rows` into `spread` and
    `center` (M values each), each row in `parts` parts; both launches made now. Returns
    `launch(data, spread, center, correction)`, which repeats them for a call of the kind on
    its own tensors (a plan's)."""
    pieces = rows.in_parts(parts)
    n = pieces.N  # each part's elements
    device = rows.data.device
    partials = empty((2 * pieces.M,), compute, device)
    first = launch_rows(part_moments_kernel, pieces, [partials], [], compute)
    folded = Rows.contiguous(partials, rows.M, parts)
    second = launch_rows(moments_of_parts_kernel, folded, [spread, center], [correction, n],
                         compute, SQRT=root, PARTS=parts)  # fmt: skip

    def launch(data, spread, center, correction):
        buffer = empty((2 * pieces.M,), compute, device)
        first(data, buffer)
        second(buffer, spread, center, correction, n)

    return launch
