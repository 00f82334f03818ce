"""bf16 × bf16 dots on AMX tiles: `tdpbf16ps`, 16 × 16 f32 accumulators times 32 k per instruction.

AMX (Sapphire Rapids and later Xeons) has eight tile registers of up to 16 rows of 64 bytes.
`tdpbf16ps c, a, b` adds to each f32 C[m, n] of a 16 × 16 tile the products of row m of A
(16 × 32 bf16, A's rows as they are in memory) with column n of B held as pairs of rows
interleaved ("VNNI" layout: dword (p, j) holds B[2p, j] in its low half, B[2p+1, j] in its
high half), 512 products of each C element's 16 × 32 block of k in one instruction, where
`vdpbf16ps` (lower_matmul_bf16.py) makes 32. Each product of two bf16 is exact in f32; the sums
are rounded to nearest even with subnormal inputs and results flushed to zero, as `vdpbf16ps`
does, but in the hardware's own order within a pair and a tile: the results are the f32 path's
within a dot's f32 accumulation tolerance, not bit for bit.

    A: read in place by `tileloadd` (it takes a row stride) where its rows have unit stride,
       else copied into contiguous scratch first;
    B → [K/2, N] dwords, pairs of rows interleaved (lower_matmul_bf16.pack_b), once per dot;
    C: the f32 accumulators, loaded and stored by tiles (their rows have unit stride).

C is cut into blocks of 2 × 2 tiles (32 × 32), which with two tiles of A and two of B fill the
eight registers; each block's four tiles are carried through the loop over k by 32 as phis of
LLVM's `x86_amx` type, which its AMX passes give registers, configure (`ldtilecfg` at the
function's entry) and release (`tilerelease` at its exit). Edges of 16 rows or columns take one
tile instead of two. `applies` asks for bf16 operands with an f32 (or 16/8-bit float) output,
M and N multiples of 16 and K of 32, and a host with AMX-BF16 whose tiles this process may use
(target.py turns the features off otherwise: NAIAD_CPU_AMX, tile_state.py).
"""

from __future__ import annotations

from llvmlite import ir

from ..lower_scalar.registry import intrinsic
from ..target import host_has
from . import lower_matmul_bf16
from .function import FunctionLowering
from .loops import I64, as_value, counted_loop, loop_nest
from .views import View, add, mul

FEATURES = ("+amx-tile", "+amx-bf16")
TILE_ROWS = 16
TILE_BYTES = 64  # of one tile row: 16 f32 of C, 32 bf16 of A, 16 pairs of B
TILE_COLUMNS = TILE_BYTES // 4
TILE_K = TILE_BYTES // 2
BLOCK = 2  # tiles of C a block has down and across
I16 = ir.IntType(16)
I32 = ir.IntType(32)


class _Tile(ir.Type):
    """LLVM's `x86_amx`, a tile register's contents, which llvmlite's IR builder does not name."""

    def _to_string(self) -> str:
        return "x86_amx"

    def __eq__(self, other) -> bool:
        return isinstance(other, _Tile)

    def __hash__(self) -> int:
        return hash(_Tile)


TILE = _Tile()
_ROWS = ir.Constant(I16, TILE_ROWS)
_BYTES = ir.Constant(I16, TILE_BYTES)


def has_tiles(triple: str | None = None) -> bool:
    """Whether code for `triple` (the host's when None) may use AMX's bf16 tiles here: the CPU
    has them and this process may (target.py)."""
    return host_has(FEATURES, triple)


def applies(a_type, b_type, out_type, shape, triple: str) -> bool:
    """Whether a matmul of these operand and output types and (m, n, k) `shape`, compiled for
    `triple`, runs on AMX tiles."""
    m, n, k = shape
    return (
        lower_matmul_bf16.applies(a_type, b_type, out_type, shape, triple)
        and isinstance(m, int)
        and m % TILE_ROWS == 0
        and n % TILE_COLUMNS == 0
        and k % TILE_K == 0
        and has_tiles(triple)
    )


def multiply(fl: FunctionLowering, rows: int, a: View, b: View, c: View, shape) -> None:
    """C (f32) += A @ B over the whole matrix: B packed in interleaved pairs (A too where its
    rows are strided), then blocks of 2 × 2 tiles, edges of one. `rows` (the vector
    micro-kernel's) is not used: a tile's shape is fixed."""
    m, n, k = shape
    bld = fl.builder
    if a.strides[-1] != 1:
        a = _copy(fl, a, m, k)
    views = (a, lower_matmul_bf16.pack_b(fl, b, n, k, high_first=False), c)
    step_m, step_n = BLOCK * TILE_ROWS, BLOCK * TILE_COLUMNS
    full_m, full_n = m - m % step_m, n - n % step_n

    def row_block(i0, down):
        if full_n:
            with counted_loop(bld, 0, full_n, step=step_n, name="amx.n") as j0:
                _block(fl, views, (i0, j0), (down, BLOCK), k)
        if n % step_n:
            _block(fl, views, (i0, full_n), (down, 1), k)

    if full_m:
        with counted_loop(bld, 0, full_m, step=step_m, name="amx.m") as i0:
            row_block(i0, BLOCK)
    if m % step_m:
        row_block(full_m, 1)


def _block(fl: FunctionLowering, views, at, tiles, k: int) -> None:
    """One block of C at `at` = (i0, j0) of `tiles` = (down, across) tiles, carried through the
    loop over k by 32: one `tdpbf16ps` per tile of C and step, loads of A's and B's tiles."""
    a, b, c = views
    (i0, j0), (down, across) = at, tiles
    bld = fl.builder
    dot = intrinsic(fl.module, "llvm.x86.tdpbf16ps.internal", TILE, [I16] * 3 + [TILE] * 3)
    rows = [add(bld, i0, TILE_ROWS * r) for r in range(down)]
    columns = [add(bld, j0, TILE_COLUMNS * s) for s in range(across)]
    acc = [[_load(fl, c, [i, j], 4) for j in columns] for i in rows]
    before = bld.block
    with counted_loop(bld, 0, k, step=TILE_K, name="amx.k") as kk:
        phis = [[bld.phi(TILE) for _ in row] for row in acc]
        for row, phi_row in zip(acc, phis):
            for value, phi in zip(row, phi_row):
                phi.add_incoming(value, before)
        lhs = [_load(fl, a, [i, kk], 2) for i in rows]
        pair = bld.lshr(kk, ir.Constant(I64, 1))
        rhs = [_load(fl, b, [pair, j], 4) for j in columns]
        updated = [
            [bld.call(dot, [_ROWS, _BYTES, _BYTES, phi, x, y]) for y, phi in zip(rhs, phi_row)]
            for x, phi_row in zip(lhs, phis)
        ]
        for phi_row, new_row in zip(phis, updated):
            for phi, value in zip(phi_row, new_row):
                phi.add_incoming(value, bld.block)
    # k is static and positive, so the loop's exit follows its last iteration only.
    store = intrinsic(
        fl.module, "llvm.x86.tilestored64.internal", ir.VoidType(), [I16, I16, _ptr(), I64, TILE]
    )
    for i, row in zip(rows, updated):
        for j, value in zip(columns, row):
            address, stride = _address(fl, c, [i, j], 4)
            bld.call(store, [_ROWS, _BYTES, address, stride, value])


def _load(fl: FunctionLowering, view: View, indices, element_bytes: int) -> ir.Value:
    """The tile of 16 rows × 64 bytes of `view` from `indices`."""
    load = intrinsic(fl.module, "llvm.x86.tileloadd64.internal", TILE, [I16, I16, _ptr(), I64])
    address, stride = _address(fl, view, indices, element_bytes)
    return fl.builder.call(load, [_ROWS, _BYTES, address, stride])


def _address(fl: FunctionLowering, view: View, indices, element_bytes: int):
    """The address of `indices` in `view` and its row stride in bytes (an i64)."""
    bld = fl.builder
    return view.address(bld, indices), as_value(mul(bld, view.strides[-2], element_bytes))


def _ptr() -> ir.Type:
    return ir.PointerType()


def _copy(fl: FunctionLowering, a: View, m: int, k: int) -> View:
    """A's [M, K] bf16 bits into contiguous scratch (rows of unit stride for `tileloadd`)."""
    bld = fl.builder
    rows = fl.buffer([m, k], None, I16)
    with loop_nest(bld, [m, k], name="amx.copy.a") as indices:
        rows.store(bld, a.load(bld, indices), indices)
    return rows
