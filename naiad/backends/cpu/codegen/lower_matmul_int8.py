"""int8 × int8 dots on CPUs with AVX512-VNNI: `vpdpbusd`, four byte products per i32 lane.

`vpdpbusd acc, x, y` adds to each of 16 i32 lanes the four products of the lane's bytes, x's
read as unsigned and y's as signed, wrapping as i32 addition does. A dot's operands are both
signed, so A goes in as `A + 128` (its bytes' top bit flipped, read unsigned) and each column's
surplus, `128 · Σ_k B[k, j]`, is taken off C's accumulators before the groups are added:

    Σ_k (A[i, k] + 128) · B[k, j] − 128 · Σ_k B[k, j] = Σ_k A[i, k] · B[k, j]    (mod 2^32)

Integer sums do not depend on their order, so the result is the i32 micro-kernel's exactly
(lower_matmul.py: int8 widened to int32, one `vpmulld` and one `vpaddd` per 16 products), with
a quarter of its instructions. The operands are packed once per dot:

    A → [M, K/4]   the four bytes A[i, 4q .. 4q+3], each + 128 (in place but for the flip)
    B → [K/4, N]   the four bytes B[4q .. 4q+3, j] (rows of unit stride: four vector loads and
                   one byte shuffle per 16 columns)

and each column's surplus is summed from the packed B by `vpdpbusd` itself (against bytes of
1). The tiles are packed_tiles.py's. `applies` chooses this kernel where the host's features
(target.py; NAIAD_HOST_CPU names a model) include AVX512-VNNI and AVX512-BW, for int8 operands
with an i32 accumulator, N a multiple of 16 and K of 4.
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import IntegerType, element_type
from ..lower_scalar.registry import intrinsic
from ..target import host_has
from .function import FunctionLowering
from .loops import counted_loop, loop_nest
from .packed_tiles import LANES, DotInstruction, multiply_packed, splat
from .views import View, add

FEATURES = ("+avx512f", "+avx512bw", "+avx512vnni")
GROUP = 4  # bytes of k per lane
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
I32X16 = ir.VectorType(I32, LANES)
I8X64 = ir.VectorType(I8, GROUP * LANES)
DOT_QUADS = DotInstruction("llvm.x86.avx512.vpdpbusd.512", I32X16, I8X64)


def has_byte_dots(triple: str | None = None) -> bool:
    """Whether code for `triple` (the host's when None) runs on a CPU with AVX512-VNNI."""
    return host_has(FEATURES, triple)


def _bits(t) -> int | None:
    t = element_type(t)
    return t.width if isinstance(t, IntegerType) else None


def applies(a_type, b_type, out_type, shape, triple: str) -> bool:
    """Whether a matmul of these operand and output types and (m, n, k) `shape`, compiled for
    `triple`, runs on `vpdpbusd`."""
    _, n, k = shape
    return (
        _bits(a_type) == 8
        and _bits(b_type) == 8
        and _bits(out_type) == 32
        and isinstance(n, int)
        and isinstance(k, int)
        and n % LANES == 0
        and k > 0
        and k % GROUP == 0
        and has_byte_dots(triple)
    )


def multiply(fl: FunctionLowering, rows: int, a: View, b: View, c: View, shape) -> None:
    """C (i32) += A @ B over the whole matrix: the operands packed in groups of four, the
    columns' surplus, then the tiles of packed_tiles.py (`rows` rows)."""
    m, n, k = shape
    b_quads = pack_b(fl, b, n, k)
    views = (_pack_a(fl, a, m, k), b_quads, c)
    surplus = _surplus(fl, b_quads, n, k // GROUP)
    multiply_packed(fl, DOT_QUADS, rows, views, (m, n, k // GROUP), offsets=surplus)


def _pack_a(fl: FunctionLowering, a: View, m: int, k: int) -> View:
    """A as [M, K/4] dwords of four bytes + 128 each. Rows of unit stride are copied as vectors
    of up to 64 bytes, their top bits flipped."""
    bld = fl.builder
    quads = fl.buffer([m, k // GROUP], None, I32)
    if a.strides[-1] == 1:
        width = next(w for w in (64, 32, 16, 8, 4) if k % w == 0)
        vector = ir.VectorType(I8, width)
        flip = ir.Constant(vector, [0x80] * width)
        with loop_nest(bld, [m, k // width], name="pack.a") as (i, v):
            column = bld.mul(v, ir.Constant(I64, width))
            flipped = bld.xor(bld.load(a.address(bld, [i, column]), typ=vector, align=1), flip)
            group = bld.lshr(column, ir.Constant(I64, 2))
            bld.store(flipped, quads.address(bld, [i, group]), align=4)
        return quads
    with loop_nest(bld, [m, k], name="pack.a") as (i, kk):
        byte = bld.xor(a.load(bld, [i, kk]), ir.Constant(I8, 0x80))
        bld.store(byte, _byte_address(bld, quads, [i, bld.lshr(kk, ir.Constant(I64, 2))], kk))
    return quads


def pack_b(fl: FunctionLowering, b: View, n: int, k: int, into=None) -> View:
    """B as [K/4, N] dwords of the bytes of four consecutive rows, in a fresh buffer or `into`
    (a view of [K/4, N] dwords with rows of unit stride). Rows of unit stride are interleaved
    16 columns at a time (four vector loads, one shuffle, one store). This is also AMX's
    layout of B for `tdpbssd` (lower_matmul_amx.py)."""
    bld = fl.builder
    quads = fl.buffer([k // GROUP, n], None, I32) if into is None else into
    if b.strides[-1] != 1:
        with loop_nest(bld, [k, n], name="pack.b") as (kk, j):
            group = bld.lshr(kk, ir.Constant(I64, 2))
            bld.store(b.load(bld, [kk, j]), _byte_address(bld, quads, [group, j], kk))
        return quads
    row = ir.VectorType(I8, LANES)
    halves = ir.Constant(ir.VectorType(I32, 2 * LANES), list(range(2 * LANES)))
    whole = ir.Constant(ir.VectorType(I32, 4 * LANES), list(range(4 * LANES)))
    mix = ir.Constant(
        ir.VectorType(I32, 4 * LANES), [r * LANES + j for j in range(LANES) for r in range(4)]
    )
    with loop_nest(bld, [k // GROUP, n // LANES], name="pack.b") as (q, v):
        j = bld.mul(v, ir.Constant(I64, LANES))
        first = bld.mul(q, ir.Constant(I64, GROUP))
        rows = [
            bld.load(b.address(bld, [add(bld, first, r), j]), typ=row, align=1)
            for r in range(GROUP)
        ]
        low = bld.shuffle_vector(rows[0], rows[1], halves)
        high = bld.shuffle_vector(rows[2], rows[3], halves)
        both = bld.shuffle_vector(low, high, whole)
        mixed = bld.shuffle_vector(both, ir.Constant(both.type, ir.Undefined), mix)
        bld.store(mixed, quads.address(bld, [q, j]), align=4)
    return quads


def _byte_address(bld: ir.IRBuilder, quads: View, indices, kk: ir.Value) -> ir.Value:
    """The address of byte `kk mod 4` of the dword of `quads` at `indices`."""
    word = quads.address(bld, indices)
    byte = bld.and_(kk, ir.Constant(I64, GROUP - 1))
    return bld.gep(word, [byte], inbounds=True, source_etype=I8)


def _surplus(fl: FunctionLowering, b_quads: View, n: int, groups: int) -> View:
    """[N] i32: −128 · Σ_k B[k, j], summed from the packed B by `vpdpbusd` against bytes of 1
    (each lane's four signed bytes times one)."""
    bld = fl.builder
    surplus = fl.buffer([n], None, I32)
    call = intrinsic(fl.module, DOT_QUADS.name, I32X16, [I32X16, I8X64, I8X64])
    ones = bld.bitcast(splat(bld, ir.Constant(I32, 0x01010101)), I8X64)
    zero = ir.Constant(I32X16, None)
    with counted_loop(bld, 0, n, step=LANES, name="surplus") as j:
        before = bld.block
        with counted_loop(bld, 0, groups, name="sum") as g:
            total = bld.phi(I32X16)
            total.add_incoming(zero, before)
            column = bld.load(b_quads.address(bld, [g, j]), typ=I8X64, align=4)
            summed = bld.call(call, [total, ones, column])
            total.add_incoming(summed, bld.block)
        # `groups` is static and positive: the loop's exit follows its last iteration only.
        taken = bld.sub(zero, bld.shl(summed, ir.Constant(I32X16, [7] * LANES)))
        bld.store(taken, surplus.address(bld, [j]), align=4)
    return surplus
