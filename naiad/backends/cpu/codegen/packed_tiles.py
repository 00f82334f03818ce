"""The matmul micro-kernel over operands packed in groups of k, for AVX-512's dot instructions.

`vdpbf16ps` (two bf16 products per f32 lane, lower_matmul_bf16.py) and `vpdpbusd` (four byte
products per i32 lane, lower_matmul_int8.py) each take, per lane of 32 bits, one dword of A
holding a group of consecutive k of one row and one dword of B holding the same group of one
column. With A as [M, K/g] dwords (packed, or bf16 rows read where they lie: `load` of a
row and a group gives its dword) and B packed as [K/g, N] dwords (g = 2 or 4), one such
instruction per accumulator and group does what g fused multiply-adds of lower_matmul.py's
micro-kernel do: a dword of A broadcast to every lane, a vector of B's dwords for 16 columns.

C is cut into tiles of `rows` rows × two vectors of 16 columns (16 accumulators, two of B and
a broadcast in AVX-512's 32 registers), carried in registers through the loop over groups, as
lower_matmul.py carries its tiles through k; an edge of 16 columns takes one vector, an edge
of rows fewer rows. `offsets` ([N] accumulator elements), where given, are added to C's
accumulators as a tile loads them (the int8 kernel's correction for its unsigned A).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ..lower_scalar.registry import intrinsic
from .function import FunctionLowering
from .loops import counted_loop
from .views import View, add

LANES = 16  # 32-bit lanes of a 512-bit register
VECTORS = 2  # vectors of 16 columns per tile row
I32 = ir.IntType(32)
I32X16 = ir.VectorType(I32, LANES)


@dataclass(frozen=True)
class DotInstruction:
    """An intrinsic `acc = dot(acc, a, b)` of 16 accumulator lanes, its operands 512-bit
    vectors of `operand` type (bitcasts of packed dwords)."""

    name: str
    acc: ir.VectorType
    operand: ir.VectorType


def multiply_packed(
    fl: FunctionLowering, dot: DotInstruction, rows: int, views, shape, offsets=None
) -> None:
    """C += A @ B over the whole matrix from the packed (a, b) `views` into `c`; `shape` is
    (M, N, K/g): full tiles of `rows` rows in loops, then the edges."""
    a, b, c = views
    m, n, groups = shape
    bld = fl.builder
    columns = LANES * VECTORS
    full_m, full_n = m - m % rows, n - n % columns

    def row_block(i0, count):
        if full_n:
            with counted_loop(bld, 0, full_n, step=columns, name="nr") as j0:
                _tile(fl, dot, (a, b, c, offsets), (i0, j0), count, VECTORS, groups)
        if n % columns:
            _tile(fl, dot, (a, b, c, offsets), (i0, full_n), count, 1, groups)

    if full_m:
        with counted_loop(bld, 0, full_m, step=rows, name="mr") as i0:
            row_block(i0, rows)
    if m % rows:
        row_block(full_m, m % rows)


def _tile(fl, dot: DotInstruction, views, at, rows: int, vectors: int, groups: int) -> None:
    """One tile of C at `at` = (i0, j0): `rows` × `vectors` accumulators carried through the
    loop over groups as phis, one dot instruction per accumulator and group."""
    a, b, c, offsets = views
    i0, j0 = at
    bld = fl.builder
    call = intrinsic(fl.module, dot.name, dot.acc, [dot.acc, dot.operand, dot.operand])
    starts = [v * LANES for v in range(vectors)]
    shift = [_vector(bld, offsets, [add(bld, j0, s)], dot.acc) for s in starts] if offsets else []
    acc = []
    for r in range(rows):
        row = [_vector(bld, c, [add(bld, i0, r), add(bld, j0, s)], dot.acc) for s in starts]
        acc.append([bld.add(x, y) for x, y in zip(row, shift)] if shift else row)
    before = bld.block
    with counted_loop(bld, 0, groups, name="groups") as g:
        phis = [[bld.phi(dot.acc) for _ in row] for row in acc]
        for row, phi_row in zip(acc, phis):
            for value, phi in zip(row, phi_row):
                phi.add_incoming(value, before)
        rhs = [_vector(bld, b, [g, add(bld, j0, s)], dot.operand) for s in starts]
        updated = []
        for r, phi_row in enumerate(phis):
            lhs = bld.bitcast(splat(bld, a.load(bld, [add(bld, i0, r), g])), dot.operand)
            updated.append([bld.call(call, [phi, lhs, x]) for x, phi in zip(rhs, phi_row)])
        for phi_row, new_row in zip(phis, updated):
            for phi, value in zip(phi_row, new_row):
                phi.add_incoming(value, bld.block)
    # `groups` is static and positive, so the loop's exit follows its last iteration only.
    for r, row in enumerate(updated):
        for s, value in zip(starts, row):
            bld.store(value, c.address(bld, [add(bld, i0, r), add(bld, j0, s)]), align=4)


def _vector(bld: ir.IRBuilder, view: View, indices, vector: ir.VectorType) -> ir.Value:
    """A 512-bit vector of `view` from `indices` (consecutive 32-bit elements)."""
    return bld.load(view.address(bld, indices), typ=vector, align=4)


def splat(bld: ir.IRBuilder, scalar: ir.Value) -> ir.Value:
    """An i32 in every lane of a 16-lane vector."""
    one = bld.insert_element(ir.Constant(I32X16, ir.Undefined), scalar, ir.Constant(I32, 0))
    return bld.shuffle_vector(
        one, ir.Constant(I32X16, ir.Undefined), ir.Constant(I32X16, [0] * LANES)
    )
