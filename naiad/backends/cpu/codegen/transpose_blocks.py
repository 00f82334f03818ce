"""A 2-d transpose in square blocks of vectors, turned by shuffles.

An element loop over a transpose reads one side with a stride: LLVM left it scalar, one load and
one store per element (tutorial 06's `k.T` in naiad.ops' f32 attention: a ninth of its time on
one EPYC core). Cut into blocks of B × B elements, B the lanes of one vector register (at most
8), each block is B row loads, log2(B) rounds of B shuffles and B row stores:

    for i0 in 0..rows by B:  for j0 in 0..columns by B:
        v[t] = source[j0 + t, i0 : i0 + B]              (t < B)
        round k (k < log2 B): rows r and r | 2^k exchange the lanes whose bit k differs
        target[i0 + u, j0 : j0 + B] = v[u]

A round swaps bit k of the row index with bit k of the lane index, so after all of them the
lane c of row r holds what was at (c, r). The shuffles are plain `shufflevector`s, which LLVM
lowers to the target's unpack and permute instructions (SSE, AVX, AVX-512, NEON alike); the
values move bit for bit. Only views whose rows are contiguous (a unit last stride on both sides)
and whose sizes are multiples of B at compile time go this way; others keep the element loop.
"""

from __future__ import annotations

from llvmlite import ir

from .loops import counted_loop
from .lower_matmul import register_file
from .views import View, add, element_bytes

I32 = ir.IntType(32)
MAX_BLOCK = 8


def transpose_in_blocks(b: ir.IRBuilder, source: View, target: View) -> bool:
    """`target[i, j] = source[j, i]` block by block, and say so; False, with nothing emitted,
    where the views do not fit (see the module)."""
    block = _block(b, source, target)
    if block is None:
        return False
    rows, columns = target.sizes
    with (
        counted_loop(b, 0, rows, step=block, name="tr0") as i0,
        counted_loop(b, 0, columns, step=block, name="tr1") as j0,
    ):
        vectors = [_load_row(b, source, [add(b, j0, t), i0], block) for t in range(block)]
        for u, vector in enumerate(_transposed(b, vectors)):
            b.store(vector, target.address(b, [add(b, i0, u), j0]), align=_align(target))
    return True


def _block(b: ir.IRBuilder, source: View, target: View) -> int | None:
    """The block's side B, or None when the views do not fit."""
    size = element_bytes(target.element)
    if size is None or source.element != target.element or target.rank != 2:
        return None
    lanes = register_file(b.module.triple).bits // (8 * size)
    block = min(MAX_BLOCK, lanes)
    fits = all(isinstance(n, int) and n > 0 and n % block == 0 for n in target.sizes)
    contiguous = source.strides[-1] == 1 and target.strides[-1] == 1
    return block if block >= 2 and fits and contiguous else None


def _load_row(b: ir.IRBuilder, view: View, indices, width: int) -> ir.Value:
    vector = ir.VectorType(view.element, width)
    return b.load(view.address(b, indices), typ=vector, align=_align(view))


def _align(view: View) -> int:
    return element_bytes(view.element)


def _transposed(b: ir.IRBuilder, rows: list) -> list:
    """The B vectors of the B × B block `rows` transposed (B a power of two)."""
    width = len(rows)
    rows = list(rows)
    bit = 1
    while bit < width:
        low = [c if not c & bit else width + (c & ~bit) for c in range(width)]
        high = [c | bit if not c & bit else width + c for c in range(width)]
        for r in range(width):
            if r & bit:
                continue
            first, second = rows[r], rows[r | bit]
            rows[r] = b.shuffle_vector(first, second, ir.Constant(ir.VectorType(I32, width), low))
            rows[r | bit] = b.shuffle_vector(
                first, second, ir.Constant(ir.VectorType(I32, width), high)
            )
        bit <<= 1
    return rows
