"""bf16 × bf16 dots on CPUs with AVX512-BF16: `vdpbf16ps`, two products per f32 lane.

`vdpbf16ps acc, x, y` adds to each of 16 f32 lanes the products of the lane's two bf16 pairs,
the high halves' product first, then the low halves': `acc = (acc + x.hi·y.hi) + x.lo·y.lo`,
each product exact (8-bit significands) and each sum rounded to nearest even (measured so on
Zen 4, as Intel documents it). A's rows hold each pair (A[i, 2p], A[i, 2p+1]) as a
little-endian dword already, the second element high; with B's pairs (B[2p, j], B[2p+1, j]) of
16 consecutive columns laid out alike (the rows interleaved, AMX's layout), one lane of one
instruction is the f32 micro-kernel's two fused multiply-adds (lower_matmul.py) with the pair's
second k first: the f32 path's results over K with each pair of k swapped, bit for bit —
except that the instruction treats subnormal inputs as zero and flushes subnormal sums (its
fixed DAZ/FTZ). As with AMX (lower_matmul_amx.py), the results are then the f32 path's within
a dot's accumulation tolerance, not bit for bit. It multiplies twice the products per
instruction: on Zen 4 one 512-bit `vdpbf16ps` issues per cycle as one `vfmadd231ps` does, on
Zen 5 two (bench/RESULTS.md, 2026-11-29 and -30).

A is read where it lies when its rows have unit stride: each broadcast loads a dword of a row.
Holding the pair's first element high instead (the f32 path's order exactly) took a rotate of
each dword, in a copy of A per dot or in a register per broadcast, and cost the tutorial matmul
on bf16 a fifth of its time on Zen 5. Otherwise A and B are packed first, once per dot, into
per-program scratch of dwords:

    A → [M, K/2]   A[i, 2p+1] << 16 | A[i, 2p]      (A's rows not of unit stride only)
    B → [K/2, N]   B[2p+1, j] << 16 | B[2p, j]       (two rows of unit stride interleaved by
                                                      one shuffle, 16 columns at a time)

and the tiles of packed_tiles.py multiply them, one `vdpbf16ps` per accumulator and pair.
`cpu-widen-dot-operands` leaves such a dot's operands bf16 (`takes_pairs`); `applies` chooses
this kernel where the host's features (target.py; NAIAD_HOST_CPU names a model) include
AVX512-BF16, for bf16 operands with an f32 accumulator (or a 16/8-bit float one, rounded once
at the end), N a multiple of 16 and K even.
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import RankedTensorType, bf16, element_type, f32
from ..target import host_has
from .element_math import narrow_float
from .function import FunctionLowering
from .loops import loop_nest
from .named_types import BFLOAT
from .packed_tiles import LANES, DotInstruction, multiply_packed
from .views import View, add

FEATURES = ("+avx512f", "+avx512bf16")
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)


F32X16 = ir.VectorType(ir.FloatType(), LANES)
BF16X32 = ir.VectorType(BFLOAT, 2 * LANES)
DOT_PAIRS = DotInstruction("llvm.x86.avx512bf16.dpbf16ps.512", F32X16, BF16X32)


def has_bf16_pairs(triple: str | None = None) -> bool:
    """Whether code for `triple` (the host's when None) runs on a CPU with AVX512-BF16."""
    return host_has(FEATURES, triple)


def exact_in_bf16(t) -> bool:
    """Whether the operand element type `t` goes into `vdpbf16ps` as bf16: bf16 itself, and the
    8-bit floats, every value of which is a bf16 that is not subnormal (at most 7 mantissa
    bits, the smallest above 2^-126): widened to bf16 instead of f32, their products are as
    exact, and none is flushed."""
    t = element_type(t)
    if t is bf16:
        return True
    fmt = narrow_float(t)
    return fmt is not None and fmt.mant_bits <= 7 and 1 - fmt.bias - fmt.mant_bits >= -126


def _fits(out_element, n, k) -> bool:
    accumulates_in_f32 = out_element is f32 or narrow_float(out_element) is not None
    return (
        accumulates_in_f32
        and isinstance(n, int)
        and isinstance(k, int)
        and n % LANES == 0
        and k > 0
        and k % 2 == 0
    )


def takes_pairs(op) -> bool:
    """Whether the matmul `op` (on tensors) is to run on `vdpbf16ps` on this host, its operands
    widened to bf16 where they are not (widen_dot_operands.py)."""
    a, b = (value.type for value in op.inputs)
    out = op.outputs[0].type
    if not all(isinstance(t, RankedTensorType) and t.has_static_shape for t in (a, b, out)):
        return False
    n, k = out.shape[-1], a.shape[-1]
    operands = exact_in_bf16(a.element_type) and exact_in_bf16(b.element_type)
    return operands and _fits(out.element_type, n, k) and has_bf16_pairs()


def applies(a_type, b_type, out_type, shape, triple: str) -> bool:
    """Whether a matmul of these operand and output types and (m, n, k) `shape`, compiled for
    `triple`, runs on `vdpbf16ps`."""
    _, n, k = shape
    operands = element_type(a_type) is bf16 and element_type(b_type) is bf16
    return operands and _fits(element_type(out_type), n, k) and has_bf16_pairs(triple)


def multiply(fl: FunctionLowering, rows: int, a: View, b: View, c: View, shape) -> None:
    """C (f32) += A @ B over the whole matrix: A's pairs where they lie (or packed), B's
    packed, then the tiles of packed_tiles.py (`rows` rows)."""
    m, n, k = shape
    pairs = _RowPairs(a) if a.strides[-1] == 1 else _pack_a(fl, a, m, k)
    views = (pairs, pack_b(fl, b, n, k), c)
    multiply_packed(fl, DOT_PAIRS, rows, views, (m, n, k // 2))


class _RowPairs:
    """A's rows of unit stride read as [M, K/2] dwords where they lie: the dword at A[i, 2p]
    holds A[i, 2p] low and A[i, 2p+1] high (packed_tiles.py broadcasts each)."""

    def __init__(self, a: View):
        self.a = a

    def load(self, bld: ir.IRBuilder, index) -> ir.Value:
        i, p = index
        column = bld.shl(p, ir.Constant(I64, 1))
        return bld.load(self.a.address(bld, [i, column]), typ=I32, align=2)


def _pair(bld: ir.IRBuilder, high: ir.Value, low: ir.Value) -> ir.Value:
    """The dword `high << 16 | low` of two bf16 bit patterns."""
    shifted = bld.shl(bld.zext(high, I32), ir.Constant(I32, 16))
    return bld.or_(shifted, bld.zext(low, I32))


def _pack_a(fl: FunctionLowering, a: View, m: int, k: int) -> View:
    """A, its rows not of unit stride, as [M, K/2] dwords, each pair's second element in the
    high half (`_RowPairs`' layout)."""
    bld = fl.builder
    pairs = fl.buffer([m, k // 2], None, I32)
    with loop_nest(bld, [m, k // 2], name="pack.a") as (i, p):
        column = bld.shl(p, ir.Constant(I64, 1))
        first, second = a.load(bld, [i, column]), a.load(bld, [i, add(bld, column, 1)])
        pairs.store(bld, _pair(bld, second, first), [i, p])
    return pairs


def pack_b(fl: FunctionLowering, b: View, n: int, k: int, into=None) -> View:
    """B as [K/2, N] dwords, the pairs of rows interleaved (each pair's second row in the high
    half: `vdpbf16ps`'s and AMX's layout), in a fresh buffer or `into` (a view of [K/2, N]
    dwords with rows of unit stride: a slot of amx_panels.py's panel). Rows of unit stride are
    interleaved 16 columns at a time (two vector loads, one shuffle, one store)."""
    bld = fl.builder
    pairs = fl.buffer([k // 2, n], None, I32) if into is None else into
    if b.strides[-1] != 1:
        with loop_nest(bld, [k // 2, n], name="pack.b") as (p, j):
            row = bld.shl(p, ir.Constant(I64, 1))
            first, second = b.load(bld, [row, j]), b.load(bld, [add(bld, row, 1), j])
            pairs.store(bld, _pair(bld, second, first), [p, j])
        return pairs
    half = ir.VectorType(I16, LANES)
    # little-endian dwords: the low half is the element at the lower address, the first row's
    mix = ir.Constant(
        ir.VectorType(I32, 2 * LANES), [j + lane for j in range(LANES) for lane in (0, LANES)]
    )
    with loop_nest(bld, [k // 2, n // LANES], name="pack.b") as (p, v):
        j = bld.mul(v, ir.Constant(I64, LANES))
        row = bld.shl(p, ir.Constant(I64, 1))
        first = bld.load(b.address(bld, [row, j]), typ=half, align=2)
        second = bld.load(b.address(bld, [add(bld, row, 1), j]), typ=half, align=2)
        bld.store(bld.shuffle_vector(first, second, mix), pairs.address(bld, [p, j]), align=4)
    return pairs
