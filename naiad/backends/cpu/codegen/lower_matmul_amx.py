"""bf16 and int8 dots on AMX tiles: `tdpbf16ps` (`tdpbssd`), 16 × 16 f32 (i32) accumulators
times 32 (64) k per instruction.

AMX (Sapphire Rapids and later Xeons) has eight tile registers of up to 16 rows of 64 bytes.
`tdpbf16ps c, a, b` adds to each f32 C[m, n] of a 16 × 16 tile the products of row m of A
(16 × 32 bf16, A's rows as they are in memory) with column n of B held as pairs of rows
interleaved ("VNNI" layout: dword (p, j) holds B[2p, j] in its low half, B[2p+1, j] in its
high half): 8,192 products (16 × 16 elements, 32 k each) in one instruction, where
`vdpbf16ps` (lower_matmul_bf16.py) makes 32. Each product of two bf16 is exact in f32; the sums
are rounded to nearest even with subnormal inputs and results flushed to zero, as `vdpbf16ps`
does, but in the hardware's own order within a pair and a tile: the results are the f32 path's
within a dot's f32 accumulation tolerance, not bit for bit. `tdpbssd` does the same for
int8 × int8 into i32, four signed byte products per dword of B (B's rows interleaved by fours:
lower_matmul_int8.pack_b's layout), 64 k per element, wrapping as i32 addition does: the i32
path's results exactly.

    A: read in place by `tileloadd` (it takes a row stride) where its rows have unit stride,
       else copied into contiguous scratch first;
    B → [K/2, N] dwords, pairs of rows interleaved (lower_matmul_bf16.pack_b), or [K/4, N] of
       fours (lower_matmul_int8.pack_b), once per dot;
    C: the accumulators, loaded and stored by tiles (their rows have unit stride).

C is cut into blocks of 2 × 2 tiles (32 × 32), which with two tiles of A and two of B fill the
eight registers; each block's four tiles are carried through the loop over k by 32 (64) as
phis of LLVM's `x86_amx` type, which its AMX passes give registers, configure (`ldtilecfg`
before their first use and after calls) and release (`tilerelease` at the function's exit).
Edges of 16 rows or columns take one tile instead of two. A dot whose C a K loop keeps in
tile registers across its steps (amx_carried.py) takes them from its caller (`accumulate`);
one whose steps a K loop gathers into panels (amx_panels.py) multiplies the panels
(`multiply_panels`). `applies` asks for bf16 operands with an f32 (or 16/8-bit float) output
and K a multiple of 32, or int8 ones with an i32 output and K a multiple of 64, M and N
multiples of 16, and a host with AMX-BF16 (AMX-INT8) whose tiles this process may use
(target.py turns the features off otherwise: NAIAD_CPU_AMX, tile_state.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from ....ir import IntegerType, element_type
from ..lower_scalar.registry import intrinsic
from ..target import host_has
from . import lower_matmul_bf16, lower_matmul_int8
from .function import FunctionLowering
from .loops import I64, as_value, counted_loop, loop_nest
from .named_types import X86_AMX
from .views import View, add, mul

TILE_ROWS = 16
TILE_BYTES = 64  # of one tile row: 16 f32 (i32) of C, 32 bf16 (64 int8) of A, 16 dwords of B
TILE_COLUMNS = TILE_BYTES // 4
BLOCK = 2  # tiles of C a block has down and across
I8 = ir.IntType(8)
I16 = ir.IntType(16)


@dataclass(frozen=True)
class TileDot:
    """One of AMX's dot instructions: its intrinsic, the CPU features it needs, the bytes of
    one of A's elements and how B is packed (`pack(fl, b, n, k, into=None)`: dwords of
    k-groups, into a fresh buffer or `into`)."""

    name: str
    features: tuple[str, ...]
    element: ir.IntType
    pack: Callable

    @property
    def tile_k(self) -> int:
        """The k a tile of A holds in a row."""
        return TILE_BYTES * 8 // self.element.width

    @property
    def group(self) -> int:
        """The k of one dword of packed B."""
        return 32 // self.element.width


BF16 = TileDot(
    "llvm.x86.tdpbf16ps.internal",
    ("+amx-tile", "+amx-bf16"),
    I16,
    lower_matmul_bf16.pack_b,
)
INT8 = TileDot(
    "llvm.x86.tdpbssd.internal", ("+amx-tile", "+amx-int8"), I8, lower_matmul_int8.pack_b
)


TILE = X86_AMX  # a tile register's contents
_ROWS = ir.Constant(I16, TILE_ROWS)
_BYTES = ir.Constant(I16, TILE_BYTES)


def applies(a_type, b_type, out_type, shape, triple: str) -> bool:
    """Whether a matmul of these operand and output types and (m, n, k) `shape`, compiled for
    `triple`, runs on AMX tiles."""
    m, n, k = shape
    if lower_matmul_bf16.applies(a_type, b_type, out_type, shape, triple):
        dot = BF16
    elif _bits(a_type) == _bits(b_type) == 8 and _bits(out_type) == 32:
        dot = INT8
    else:
        return False
    return (
        all(isinstance(size, int) for size in shape)
        and m % TILE_ROWS == 0
        and n % TILE_COLUMNS == 0
        and k > 0
        and k % dot.tile_k == 0
        and host_has(dot.features, triple)
    )


def _bits(t) -> int | None:
    t = element_type(t)
    return t.width if isinstance(t, IntegerType) else None


def tile_dot(op) -> TileDot:
    """The instruction a matmul `op` that `applies` runs on: int8 or bf16 operands."""
    return INT8 if _bits(op.inputs[0].type) == 8 else BF16


def multiply(fl: FunctionLowering, rows: int, a: View, b: View, c: View, shape) -> None:
    """C (f32 or i32) += A @ B over the whole matrix: B packed in interleaved k-groups (A
    copied where its rows are strided), then blocks of 2 × 2 tiles, edges of one. `rows` (the
    vector micro-kernel's) is not used: a tile's shape is fixed."""
    m, n, k = shape
    dot = INT8 if a.element == I8 else BF16
    if a.strides[-1] != 1:
        a = _copy(fl, a, m, k)
    multiply_panels(fl, dot, (a, dot.pack(fl, b, n, k), c), shape)


def multiply_panels(fl: FunctionLowering, dot: TileDot, views, shape) -> None:
    """C += A @ B with B packed already (`views` = (A, packed B, C)), in blocks of 2 × 2
    tiles, edges of one; k may be an i64 value (amx_panels.py: the steps gathered, at least
    one tile's k)."""
    m, n, k = shape
    bld = fl.builder
    step_m, step_n = BLOCK * TILE_ROWS, BLOCK * TILE_COLUMNS
    full_m, full_n = m - m % step_m, n - n % step_n

    def row_block(i0, down):
        if full_n:
            with counted_loop(bld, 0, full_n, step=step_n, name="amx.n") as j0:
                _block(fl, dot, views, (i0, j0), (down, BLOCK), k)
        if n % step_n:
            _block(fl, dot, views, (i0, full_n), (down, 1), k)

    if full_m:
        with counted_loop(bld, 0, full_m, step=step_m, name="amx.m") as i0:
            row_block(i0, BLOCK)
    if m % step_m:
        row_block(full_m, 1)


def _block(fl: FunctionLowering, dot: TileDot, views, at, tiles, k: int) -> None:
    """One block of C at `at` = (i0, j0) of `tiles` = (down, across) tiles: loaded, carried
    through the loop over k (`_k_loop`), stored."""
    a, b, c = views
    (i0, j0), (down, across) = at, tiles
    bld = fl.builder
    rows = [add(bld, i0, TILE_ROWS * r) for r in range(down)]
    columns = [add(bld, j0, TILE_COLUMNS * s) for s in range(across)]
    acc = load_tiles(fl, c, rows, columns)
    store_tiles(fl, c, rows, columns, _k_loop(fl, dot, (a, b), (rows, columns), acc, k))


def accumulate(fl: FunctionLowering, a: View, b: View, acc, shape) -> list[list[ir.Value]]:
    """The tiles `acc` (all of C's: `x86_amx` values, rows of tiles, which the caller keeps in
    registers across its own loop, amx_carried.py) plus A @ B: the updated tiles. B is packed
    (A copied where its rows are strided) as `multiply` does."""
    m, n, k = shape
    dot = INT8 if a.element == I8 else BF16
    if a.strides[-1] != 1:
        a = _copy(fl, a, m, k)
    rows = [TILE_ROWS * r for r in range(len(acc))]
    columns = [TILE_COLUMNS * s for s in range(len(acc[0]))]
    return _k_loop(fl, dot, (a, dot.pack(fl, b, n, k)), (rows, columns), acc, k)


def _k_loop(fl: FunctionLowering, dot: TileDot, operands, at, acc, k: int):
    """The tiles `acc` of C at (`rows`, `columns`) = `at` carried as phis through the loop over
    k by a tile's k: one `dot` per tile of C and step, loads of A's and B's tiles. The tiles
    after the loop."""
    a, b = operands
    rows, columns = at
    bld = fl.builder
    call = intrinsic(fl.module, dot.name, TILE, [I16] * 3 + [TILE] * 3)
    before = bld.block
    with counted_loop(bld, 0, k, step=dot.tile_k, name="amx.k", at_least_once=True) as kk:
        phis = [[bld.phi(TILE) for _ in row] for row in acc]
        for row, phi_row in zip(acc, phis):
            for value, phi in zip(row, phi_row):
                phi.add_incoming(value, before)
        lhs = [_load(fl, a, [i, kk], dot.element.width // 8) for i in rows]
        group = bld.udiv(kk, ir.Constant(I64, dot.group))
        rhs = [_load(fl, b, [group, j], 4) for j in columns]
        updated = [
            [bld.call(call, [_ROWS, _BYTES, _BYTES, phi, x, y]) for y, phi in zip(rhs, phi_row)]
            for x, phi_row in zip(lhs, phis)
        ]
        for phi_row, new_row in zip(phis, updated):
            for phi, value in zip(phi_row, new_row):
                phi.add_incoming(value, bld.block)
    # k is positive, so the loop's exit follows its last iteration only.
    return updated


def load_tiles(fl: FunctionLowering, c: View, rows, columns) -> list[list[ir.Value]]:
    """The tiles of C (f32 or i32) at `rows` × `columns`."""
    return [[_load(fl, c, [i, j], 4) for j in columns] for i in rows]


def store_tiles(fl: FunctionLowering, c: View, rows, columns, tiles) -> None:
    """`tiles` into C (f32 or i32) at `rows` × `columns`."""
    store = intrinsic(
        fl.module, "llvm.x86.tilestored64.internal", ir.VoidType(), [I16, I16, _ptr(), I64, TILE]
    )
    for i, row in zip(rows, tiles):
        for j, value in zip(columns, row):
            address, stride = _address(fl, c, [i, j], 4)
            fl.builder.call(store, [_ROWS, _BYTES, address, stride, value])


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
    """A's [M, K] elements into contiguous scratch (rows of unit stride for `tileloadd`)."""
    bld = fl.builder
    rows = fl.buffer([m, k], None, a.element)
    with loop_nest(bld, [m, k], name="amx.copy.a") as indices:
        rows.store(bld, a.load(bld, indices), indices)
    return rows
