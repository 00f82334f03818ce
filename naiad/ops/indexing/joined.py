"""cat's one launch: a kernel that writes every input's slice of the result.

cat copied each input into its slice through the pointwise facility's copy: a view of the
result and a launch per input (the Llama step's backward of `unbind`: two a call, 8 a step).
Here each input is seen as (a, b, along, inner) positions: the dims before the joined one but
the last, that last one, the joined one, and those after; where the first and the last run
each fold into one stride (as a contiguous, a transposed or a sliced tensor's mostly do), one
launch of `_cat_kernel` copies up to PARTS inputs, program (k, i) a block of a row of input
i (a row: the input's elements at one position of the dims before the joined one, contiguous
in the result). Inputs of another dtype than the result's, or whose runs do not fold, and the
CPU's (ONE_LAUNCH), keep the copy per input (concat.py).
"""

from __future__ import annotations

import math

from ... import language as tl
from ...runtime.jit import jit
from ..device_kind import device_kind
from ..dtypes import TL_DTYPE
from ..reduce.rows import folded_stride

__all__ = ["ONE_LAUNCH", "PARTS", "joined_launch"]

# The most inputs one launch copies.
PARTS = 4
# Where the kernel serves, by device kind. Not on the CPU, where no launch is saved: two
# 64x1024x64 fp32 inputs took 70-72 ms against the facility's copies' 19 (one thread), the
# step's transposed halves at 8x512x8x64 26-27 against 1.7.
ONE_LAUNCH = {"cpu": False, "cuda": True}
BLOCK = 1024  # the most elements of a row a program copies
_INDEX32_LIMIT = 2**31 - 1


@jit
def _part(out, x, start, size, s_a, s_b, s_j, s_i, B, INNER, WIDTH, PER_ROW,
          BLOCK: tl.constexpr, INDEX64: tl.constexpr):  # fmt: skip
    """Copy one block of one input, `size` along the joined dim, whose element (a, b, j, i)
    lies at a * s_a + b * s_b + j * s_j + i * s_i, to out[a * B + b, start + j, i] (out
    contiguous: WIDTH x INNER a row). Program k copies block k % PER_ROW of the input's row
    k // PER_ROW (of size * INNER elements, contiguous in `out`): one division of the vector
    (by INNER, none where it is 1), the row's others the program's own."""
    k = tl.program_id(0)
    if INDEX64:
        k = k.to(tl.int64)
    o = k // PER_ROW
    r = (k % PER_ROW) * BLOCK + tl.arange(0, BLOCK)
    mask = r < size * INNER
    j = r // INNER
    i = r % INNER
    v = tl.load(x + (o // B) * s_a + (o % B) * s_b + j * s_j + i * s_i, mask=mask)
    tl.store(out + (o * WIDTH + start) * INNER + r, v, mask=mask)


@jit
def _cat_kernel(out, x0, x1, x2, x3, B, INNER, WIDTH, PER_ROW,
                start0, size0, s_a0, s_b0, s_j0, s_i0, start1, size1, s_a1, s_b1, s_j1, s_i1,
                start2, size2, s_a2, s_b2, s_j2, s_i2, start3, size3, s_a3, s_b3, s_j3, s_i3,
                PARTS: tl.constexpr, BLOCK: tl.constexpr, INDEX64: tl.constexpr):  # fmt: skip
    """Program (k, p) copies block k of input p (of PARTS) into its slice of `out`. The inputs
    past PARTS are None: a compile-time test apart from the program's keeps them unread."""
    p = tl.program_id(1)
    if p == 0:
        _part(out, x0, start0, size0, s_a0, s_b0, s_j0, s_i0, B, INNER, WIDTH, PER_ROW, BLOCK,
              INDEX64)  # fmt: skip
    if PARTS > 1:  # noqa: SIM102 (the docstring says why)
        if p == 1:
            _part(out, x1, start1, size1, s_a1, s_b1, s_j1, s_i1, B, INNER, WIDTH, PER_ROW,
                  BLOCK, INDEX64)  # fmt: skip
    if PARTS > 2:  # noqa: SIM102 (the docstring says why)
        if p == 2:
            _part(out, x2, start2, size2, s_a2, s_b2, s_j2, s_i2, B, INNER, WIDTH, PER_ROW,
                  BLOCK, INDEX64)  # fmt: skip
    if PARTS > 3:  # noqa: SIM102 (the docstring says why)
        if p == 3:
            _part(out, x3, start3, size3, s_a3, s_b3, s_j3, s_i3, B, INNER, WIDTH, PER_ROW,
                  BLOCK, INDEX64)  # fmt: skip


def _runs(t, dim: int) -> tuple | None:
    """(the stride of the dims before `dim` but the last, the last's, the joined dim's, the
    stride of the dims after it) of `t`, or None where the first or the after run does not
    fold into one stride. The last dim before is apart: a transposed gradient (b, t, h, d) of
    a contiguous (b, h, t, d), joined along h, has b and t that do not fold."""
    shape, strides = t.shape, t.stride()
    before = folded_stride(shape, strides, range(dim - 1))
    after = folded_stride(shape, strides, range(dim + 1, len(shape)))
    if before is None or after is None:
        return None
    return before, strides[dim - 1] if dim else 0, strides[dim], after


def joined_launch(tensors, out, dim: int, slices) -> list | None:
    """The launches that copy `tensors` into their `slices` of `out` ((position, offset,
    size), as concat.py's plan holds them): each `(launch, positions)`, run as `launch(out,
    *(tensors[p] for p in positions))`. None where the copy per input must serve (a result
    not contiguous: channels-last, and on a device where ONE_LAUNCH says no)."""
    if not slices or not ONE_LAUNCH[device_kind(out.device)] or not out.is_contiguous():
        return None
    shape = out.shape
    outer, inner = math.prod(shape[:dim]), math.prod(shape[dim + 1 :])
    parts, farthest = [], out.numel()
    for position, offset, size in slices:
        t = tensors[position]
        runs = _runs(t, dim)
        if t.dtype != out.dtype or t.dtype not in TL_DTYPE or runs is None:
            return None
        parts.append((position, offset, size, runs))
        farthest = max(farthest, sum((n - 1) * s for n, s in zip(t.shape, t.stride())))
    index64 = farthest + BLOCK > _INDEX32_LIMIT
    return [_bound(tensors, out, dim, parts[i : i + PARTS], (outer, inner), index64)
            for i in range(0, len(parts), PARTS)]  # fmt: skip


def _bound(tensors, out, dim, parts, outer_inner, index64):
    """The bound launch of up to PARTS `parts` (position, offset, size, runs), and their
    positions; a launch of fewer passes None for the inputs it has not."""
    scalars = []
    for _, offset, size, runs in parts:
        scalars += (offset, size, *runs)
    scalars += [0] * (6 * (PARTS - len(parts)))
    pointers = [tensors[p] for p, *_ in parts] + [None] * (PARTS - len(parts))
    outer, inner = outer_inner
    shape = out.shape
    row = max(size * inner for _, _, size, _ in parts)  # the longest row of an input
    block = min(BLOCK, 1 << (row - 1).bit_length())
    per_row = (row + block - 1) // block
    grid = (outer * per_row, len(parts))
    names = ("out", *(f"x{i}" for i in range(len(parts))))
    launch = _cat_kernel.bind_launch(
        names, grid, out, *pointers, shape[dim - 1] if dim else 1, inner, shape[dim], per_row,
        *scalars, PARTS=len(parts), BLOCK=block, INDEX64=index64,
    )  # fmt: skip
    return launch, [p for p, *_ in parts]
