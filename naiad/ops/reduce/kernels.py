"""The row-reduction kernels: each program reduces BLOCK_M rows of an (M, N) view (rows.py),
walking the row in chunks of BLOCK_N with one accumulator per lane, then folds the lanes.

One kernel serves sum, prod, max, min, all, any, mean and the 1, 2 and inf norms (OP picks the
element transform, the combine and the finish at compile time); one keeps (value, index) pairs
for max/min with indices and argmax/argmin; one makes the two passes of var/std (mean, then the
squared deviations, which keeps fp32 accurate); one logsumexp's, in one pass. Accumulators are
fp32 for fp16/bf16 (COMPUTE), as ATen's. Scalars are not specialized on (a new value must not
cost a compile); counts and strides are, as any argument (a multiple of 16, 1, or neither): a
stride of 1 and a row length that is a multiple of 16 make the row's loads vectors.
"""

from __future__ import annotations

# ruff: noqa: SIM109 - kernels compare constexpr codes with ==, which the frontend folds
from ... import language as tl
from ...runtime.jit import jit

# OP codes (constexpr): what each element becomes, how lanes combine, how the row finishes
SUM, PROD, MAX, MIN, ALL, ANY, MEAN, NORM1, NORM2, NORM_INF = range(10)
_NAN = tl.PropagateNan.ALL


@jit
def _add(a, b):
    return a + b


@jit
def _mul(a, b):
    return a * b


@jit
def _max(a, b):
    return tl.maximum(a, b, propagate_nan=_NAN)


@jit
def _min(a, b):
    return tl.minimum(a, b, propagate_nan=_NAN)


@jit
def _element(v, OP: tl.constexpr, COMPUTE: tl.constexpr):
    if OP == ALL or OP == ANY:
        return (v != 0).to(COMPUTE)
    v = v.to(COMPUTE)
    if OP == NORM1 or OP == NORM_INF:
        return tl.abs(v)
    if OP == NORM2:
        return v * v
    return v


@jit
def _above(acc, v):
    """max(acc, v) per lane, NaN from the first NaN on: a compare, a NaN test and a select.
    tl.maximum's propagating form also orders -0 below +0, which takes eight vector ops on
    x86 instead of three and which a reduction's result does not need (torch returns either
    zero)."""
    return tl.where((v > acc) | (v != v), v, acc)


@jit
def _below(acc, v):
    """min(acc, v) per lane, NaN from the first NaN on (as _above)."""
    return tl.where((v < acc) | (v != v), v, acc)


@jit
def _combine(a, b, OP: tl.constexpr):
    if OP == PROD:
        return a * b
    if OP == MAX or OP == ANY or OP == NORM_INF:
        return _above(a, b)
    if OP == MIN or OP == ALL:
        return _below(a, b)
    return a + b


@jit
def _fold(acc, OP: tl.constexpr, AXIS: tl.constexpr):
    if OP == PROD:
        return tl.reduce(acc, AXIS, _mul)
    if OP == MAX or OP == ANY or OP == NORM_INF:
        return tl.reduce(acc, AXIS, _max)
    if OP == MIN or OP == ALL:
        return tl.reduce(acc, AXIS, _min)
    return tl.reduce(acc, AXIS, _add)


@jit
def _finish(result, N, OP: tl.constexpr):
    if OP == MEAN:
        result = result / N
    if OP == NORM2:
        result = tl.sqrt(result)
    return result


@jit
def _rows(BLOCK_M: tl.constexpr, INDEX64: tl.constexpr):
    pid = tl.program_id(0)
    if INDEX64:
        pid = pid.to(tl.int64)
    return pid * BLOCK_M + tl.arange(0, BLOCK_M)


@jit
def reduce_kernel(x, out, M, N, s_m, s_n, s_out, INIT: tl.constexpr, OP: tl.constexpr,
                  COLUMNS: tl.constexpr, COMPUTE: tl.constexpr,
                  INDEX64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  WHOLE: tl.constexpr = False):  # fmt: skip
    """out[m] = the reduction of x[m, :] (INIT where N == 0). Lanes past the row's end load
    INIT, which every OP's element transform maps to the combine's identity; a constant, so
    the accumulator starts as a splat the back end need not fill per row. WHOLE: a row (of a
    program each) fits one block, read without a loop."""
    if COLUMNS:  # rows next to each other: a [BLOCK_N, BLOCK_M] tile, reduced over axis 0
        _reduce_columns(x, out, M, N, s_m, s_n, s_out, INIT, OP, COMPUTE, INDEX64, BLOCK_M, BLOCK_N)
    elif BLOCK_M == 1:  # one row a program: 1-D blocks, which the CPU back end reduces fastest
        row = _rows(1, INDEX64)
        acc = tl.full([BLOCK_N], INIT, COMPUTE)
        if WHOLE:  # a loop of one trip took a CPU's row sum of 1024 6% longer
            cols = tl.arange(0, BLOCK_N)
            v = tl.load(x + row * s_m + cols * s_n, mask=cols < N, other=INIT)
            acc = _element(v, OP, COMPUTE)
        else:
            for begin in range(0, N, BLOCK_N):
                cols = begin + tl.arange(0, BLOCK_N)
                mask = cols < N
                v = tl.load(x + row * s_m + cols * s_n, mask=mask, other=INIT)
                acc = _combine(acc, _element(v, OP, COMPUTE), OP)
        result = _finish(_fold(acc, OP, 0), N, OP)
        tl.store(out + row * s_out + tl.arange(0, 1), result.to(out.dtype.element_ty))
    else:
        _reduce_tile(x, out, M, N, s_m, s_n, s_out, INIT, OP, COMPUTE, INDEX64, BLOCK_M, BLOCK_N)


@jit
def _reduce_columns(x, out, M, N, s_m, s_n, s_out, INIT: tl.constexpr, OP: tl.constexpr,
                    COMPUTE: tl.constexpr, INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr):  # fmt: skip
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    acc = tl.full([BLOCK_N, BLOCK_M], INIT, COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = (cols[:, None] < N) & row_mask[None, :]
        v = tl.load(x + cols[:, None] * s_n + rows[None, :] * s_m, mask=mask, other=INIT)
        acc = _combine(acc, _element(v, OP, COMPUTE), OP)
    result = _finish(_fold(acc, OP, 0), N, OP)
    tl.store(out + rows * s_out, result.to(out.dtype.element_ty), mask=row_mask)


@jit
def _reduce_tile(x, out, M, N, s_m, s_n, s_out, INIT: tl.constexpr, OP: tl.constexpr,
                 COMPUTE: tl.constexpr,
                 INDEX64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    acc = tl.full([BLOCK_M, BLOCK_N], INIT, COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        v = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask, other=INIT)
        acc = _combine(acc, _element(v, OP, COMPUTE), OP)
    result = _finish(_fold(acc, OP, 1), N, OP)
    tl.store(out + rows * s_out, result.to(out.dtype.element_ty), mask=row_mask)


@jit
def _first_extreme(best, where, AXIS: tl.constexpr, LARGEST: tl.constexpr):
    """(value, index) along AXIS of lanes holding each its extreme `best` and that value's
    first column `where`: the extreme (NaN where a lane holds one), then the least column among
    the lanes holding it. Two plain reductions: a reduction of (value, index) pairs by one
    combine compiled to several times the work on the CPU (argmax of 4096 rows of 64: 0.48 ms
    against amax's 0.02)."""
    if LARGEST:
        peak = tl.reduce(best, AXIS, _max)
    else:
        peak = tl.reduce(best, AXIS, _min)
    extreme = tl.expand_dims(peak, AXIS)
    holds = (best == extreme) | ((best != best) & (extreme != extreme))
    index = tl.min(tl.where(holds, where, _largest_column(where.dtype)), AXIS)
    return peak, index


@tl.constexpr_function
def _largest_column(dtype):
    return 2**63 - 1 if dtype == tl.int64 else 2**31 - 1


@jit(do_not_specialize=["init"])
def arg_reduce_kernel(x, values, indices, M, N, s_m, s_n, s_out, init, LARGEST: tl.constexpr,
                      COMPUTE: tl.constexpr, INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr):  # fmt: skip
    """values[m], indices[m] = the max (LARGEST) or min of x[m, :] and its first index; NaN
    counts as the extreme, as in torch."""
    if BLOCK_M == 1:  # one row a program, as 1-D blocks
        _arg_reduce_row(x, values, indices, N, s_m, s_n, init, LARGEST, COMPUTE, INDEX64, BLOCK_N)
    else:
        _arg_reduce_tile(x, values, indices, M, N, s_m, s_n, s_out, init, LARGEST, COMPUTE,
                         INDEX64, BLOCK_M, BLOCK_N)  # fmt: skip


@jit
def _better(v, best, LARGEST: tl.constexpr):
    """Where v replaces best: larger (smaller), or the first NaN."""
    new_nan = (v != v) & (best == best)
    if LARGEST:
        return (v > best) | new_nan
    return (v < best) | new_nan


@tl.constexpr_function
def _column_type(INDEX64):
    """The lanes' column indices: int32 (half the registers and selects of int64) unless the
    row's extent needs 64-bit indices; the stored index is int64 either way."""
    return tl.int64 if INDEX64 else tl.int32


@jit
def _arg_reduce_row(x, values, indices, N, s_m, s_n, init, LARGEST: tl.constexpr,
                    COMPUTE: tl.constexpr, INDEX64: tl.constexpr,
                    BLOCK_N: tl.constexpr):  # fmt: skip
    row = _rows(1, INDEX64)
    best = tl.zeros([BLOCK_N], COMPUTE) + init.to(COMPUTE)
    where = tl.zeros([BLOCK_N], _column_type(INDEX64))
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        v = tl.load(x + row * s_m + cols * s_n, mask=cols < N).to(COMPUTE)
        better = (cols < N) & _better(v, best, LARGEST)
        best = tl.where(better, v, best)
        where = tl.where(better, cols.to(where.dtype), where)
    value, index = _first_extreme(best, where, 0, LARGEST)
    one = tl.arange(0, 1)
    tl.store(values + row + one, (tl.zeros([1], COMPUTE) + value).to(values.dtype.element_ty))
    tl.store(indices + row + one, tl.zeros([1], tl.int64) + index)


@jit
def _arg_reduce_tile(x, values, indices, M, N, s_m, s_n, s_out, init, LARGEST: tl.constexpr,
                     COMPUTE: tl.constexpr, INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):  # fmt: skip
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    best = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE) + init.to(COMPUTE)
    where = tl.zeros([BLOCK_M, BLOCK_N], _column_type(INDEX64))
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        v = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask).to(COMPUTE)
        better = mask & _better(v, best, LARGEST)
        best = tl.where(better, v, best)
        where = tl.where(better, cols[None, :].to(where.dtype) + tl.zeros_like(where), where)
    value, index = _first_extreme(best, where, 1, LARGEST)
    tl.store(values + rows * s_out, value.to(values.dtype.element_ty), mask=row_mask)
    tl.store(indices + rows * s_out, index.to(tl.int64), mask=row_mask)


@jit
def _row_moments(x, rows, row_mask, N, s_m, s_n, COMPUTE: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):  # fmt: skip
    """(mean, sum of squared deviations from it) of each of `rows`: two passes over the row
    (the mean first keeps fp32 accurate). var/std and layer_norm's tile kernel use it."""
    total = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        v = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask, other=0)
        total += v.to(COMPUTE)
    average = tl.sum(total, 1) / N
    squares = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        v = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask, other=0)
        d = tl.where(mask, v.to(COMPUTE) - average[:, None], 0.0)
        squares += d * d
    return average, tl.sum(squares, 1)


@jit(do_not_specialize=["correction"])
def moments_kernel(x, var, mean, M, N, s_m, s_n, s_out, correction, SQRT: tl.constexpr,
                   COMPUTE: tl.constexpr, INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr):  # fmt: skip
    """var[m] = sum((x[m, :] - mean)^2) / max(N - correction, 0) (its root where SQRT), and
    mean[m]: two passes over the row."""
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    average, deviations = _row_moments(x, rows, row_mask, N, s_m, s_n, COMPUTE, BLOCK_M, BLOCK_N)
    result = deviations / tl.maximum(N - correction, 0.0)
    if SQRT:
        result = tl.sqrt(result)
    tl.store(var + rows * s_out, result.to(var.dtype.element_ty), mask=row_mask)
    tl.store(mean + rows * s_out, average.to(mean.dtype.element_ty), mask=row_mask)


@jit
def row_max_sum_exp(x, rows, row_mask, N, s_m, s_n, COMPUTE: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """(peak, shift, total) of each of `rows`, in one pass: the row's max (NaN where the row has
    one; -inf where it is all -inf or N == 0), the shift (the max, 0 where it is -inf) and
    sum(exp(x[m, :] - shift)). The shift follows the max block by block, the lanes' sums
    rescaled by exp(old max - new) as it grows (an online softmax's sum): each element is
    read and exponentiated once, where a pass for the max and a pass for the sum read the row
    twice. A +inf in the row makes the total NaN (exp(inf - inf)); logsumexp reads the peak."""
    peak = tl.full([BLOCK_M], float("-inf"), COMPUTE)
    shift = tl.zeros([BLOCK_M], COMPUTE)
    total = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        if x.dtype.element_ty.is_floating():
            v = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask,
                        other=float("-inf")).to(COMPUTE)  # fmt: skip
        else:  # an integer or bool has no -inf to pad with: the lanes past the row made e^0
            v = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask, other=0)
            v = tl.where(mask, v.to(COMPUTE), float("-inf"))
        before = peak
        peak = tl.maximum(peak, tl.reduce(v, 1, _max), propagate_nan=_NAN)
        shift = tl.where(peak == float("-inf"), 0.0, peak)
        # rescaled from the peak before, not the shift: while the row was all -inf its total
        # is 0 and the factor exp(-inf) = 0, where exp(0 - shift) overflows for a row below
        # exp's range (-100s) and 0 * inf made the total NaN
        total = total * tl.exp(before - shift)[:, None] + tl.exp(v - shift[:, None])
    return peak, shift, tl.sum(total, 1)


@jit
def logsumexp_kernel(x, out, M, N, s_m, s_n, s_out, COMPUTE: tl.constexpr,
                     INDEX64: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):  # fmt: skip
    """out[m] = log(sum(exp(x[m, :]))), shifted by the row's max (-inf rows give -inf)."""
    rows = _rows(BLOCK_M, INDEX64)
    row_mask = rows < M
    peak, shift, total = row_max_sum_exp(x, rows, row_mask, N, s_m, s_n, COMPUTE, BLOCK_M,
                                         BLOCK_N)  # fmt: skip
    result = log_sum_exp(peak, shift, total)
    tl.store(out + rows * s_out, result.to(out.dtype.element_ty), mask=row_mask)


@jit
def log_sum_exp(peak, shift, total):
    """log(sum(exp(x))) of rows from row_max_sum_exp's (peak, shift, total): +inf where the row
    holds +inf (the total is NaN there), -inf where it is all -inf."""
    return tl.where(peak == float("inf"), peak, tl.log(total) + shift)


@jit
def softmax_written(x, out, rows, row_mask, N, s_m, s_n, shift, total, LOG: tl.constexpr,
                    COMPUTE: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr):  # fmt: skip
    """Write exp(x - shift) / total (x - shift - log(total) where LOG) of each of `rows`, read
    at x + m * s_m + n * s_n, into the contiguous rows of `out` (N elements each); `shift` and
    `total` are the rows' from row_max_sum_exp, or from their parts'."""
    moved = shift[:, None]
    scale = tl.log(total)[:, None] if LOG else total[:, None]  # subtracted, or divided by
    for begin in range(0, N, BLOCK_N):
        cols = begin + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        xw = tl.load(x + rows[:, None] * s_m + cols[None, :] * s_n, mask=mask).to(COMPUTE)
        if LOG:
            result = xw - moved - scale
        else:
            result = tl.exp(xw - moved) / scale
        result = result.to(out.dtype.element_ty)
        tl.store(out + rows[:, None] * N + cols[None, :], result, mask=mask)
