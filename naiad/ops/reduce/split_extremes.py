"""argmax / argmin / max and min with indices of few long rows, each row split in parts over
programs (an argmax over a flattened tensor, or over a large vocabulary a row, is one row).

Each part's extreme and its first column come from the row kernel itself
(kernels.arg_reduce_kernel over the parts as rows); a row's are folded from its parts' as the
kernel folds its lanes' (kernels._first_extreme): the extreme, then the least column, counted
from the row's start, among the parts holding it. The parts are split_rows.split_parts'.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import empty
from .kernels import _first_extreme, _rows, arg_reduce_kernel
from .launch import ACCUMULATOR_BLOCK_N, launch_rows
from .rows import Rows

__all__ = ["split_extremes"]


@jit
def extremes_of_parts_kernel(part_values, values, indices, M, N, s_m, s_n, s_out, part_indices,
                             part_n, LARGEST: tl.constexpr, PARTS: tl.constexpr,
                             COMPUTE: tl.constexpr, INDEX64: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """values[m], indices[m] = the extreme of row m (of M) and its first column, from its
    PARTS parts' of `part_n` elements (the rows' view of the parts' values serves the launch
    only: N == PARTS)."""
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    part = tl.arange(0, PARTS)
    where = rows[:, None] * PARTS + part[None, :]
    best = tl.load(part_values + where, mask=row_mask[:, None], other=0).to(COMPUTE)
    local = tl.load(part_indices + where, mask=row_mask[:, None], other=0)
    column = local + part[None, :].to(tl.int64) * part_n
    value, index = _first_extreme(best, column, 1, LARGEST)
    tl.store(values + rows * s_out, value.to(values.dtype.element_ty), mask=row_mask)
    tl.store(indices + rows * s_out, index, mask=row_mask)


def split_extremes(rows: Rows, parts: int, values, indices, init, compute: torch.dtype,
                   largest: bool):  # fmt: skip
    """The extreme (the largest where `largest`) of contiguous `rows` and its first column into
    `values` and `indices` (M each), each row in `parts` parts; both launches made now.
    Returns `launch(data, values, indices, init)`, which repeats them for a call of the kind on
    its own tensors (a plan's)."""
    pieces = rows.in_parts(parts)
    n = pieces.N  # each part's elements
    device, dtype = rows.data.device, rows.data.dtype

    def buffers():
        return empty((pieces.M,), dtype, device), empty((pieces.M,), torch.int64, device)

    part_values, part_indices = buffers()
    first = launch_rows(arg_reduce_kernel, pieces, [part_values, part_indices], [init], compute,
                        lanes=ACCUMULATOR_BLOCK_N, LARGEST=largest)  # fmt: skip
    folded = Rows.contiguous(part_values, rows.M, parts)
    second = launch_rows(extremes_of_parts_kernel, folded, [values, indices], [part_indices, n],
                         compute, LARGEST=largest, PARTS=parts)  # fmt: skip

    def launch(data, values, indices, init):
        part_values, part_indices = buffers()
        first(data, part_values, part_indices, init)
        second(part_values, values, indices, part_indices, n)

    return launch
