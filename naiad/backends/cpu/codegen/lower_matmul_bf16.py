"""bf16 × bf16 dots on CPUs with AVX512-BF16: `vdpbf16ps`, two products per f32 lane.

`vdpbf16ps acc, x, y` adds to each of 16 f32 lanes the products of the lane's two bf16 pairs,
the high halves' product first, then the low halves': `acc = (acc + x.hi·y.hi) + x.lo·y.lo`,
each product exact (8-bit significands) and each sum rounded to nearest even (measured so on
Zen 4, as Intel documents it). With the pair (A[i, k], A[i, k+1]) held high half first in a dword
broadcast to every lane, and the pairs (B[k, j], B[k+1, j]) of 16 consecutive columns j likewise
in a register, one lane of one instruction is exactly the f32 micro-kernel's two fused
multiply-adds (lower_matmul.py) in increasing k, so results are those of the f32 path bit for bit
— except that the instruction treats subnormal inputs as zero and flushes subnormal sums (its
fixed DAZ/FTZ). It multiplies twice the products per instruction: on Zen 4 one 512-bit
`vdpbf16ps` issues per cycle as one `vfmadd231ps` does (bench/RESULTS.md, 2026-11-29).

A and B are packed first, once per dot, into per-program scratch of dwords:

    A → [M, K/2]   A[i, 2p] << 16 | A[i, 2p+1]       (a rotate of 16 dwords at a time when
    B → [K/2, N]   B[2p, j] << 16 | B[2p+1, j]        A's rows have unit stride; B's rows of
                                                       unit stride interleaved by shuffles)

and the tiles of packed_tiles.py multiply them, one `vdpbf16ps` per accumulator and pair.
`cpu-widen-dot-operands` leaves such a dot's operands bf16 (`takes_pairs`); `applies` chooses
this kernel where the host's features (target.py; NAIAD_HOST_CPU names a model) include
AVX512-BF16, for bf16 operands with an f32 accumulator (or a 16/8-bit float one, rounded once
at the end), N a multiple of 16 and K even.
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import RankedTensorType, bf16, element_type, f32
from ..lower_scalar.registry import intrinsic
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
I32X16 = ir.VectorType(I32, LANES)
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
    """C (f32) += A @ B over the whole matrix: the operands packed in pairs, then the tiles of
    packed_tiles.py (`rows` rows)."""
    m, n, k = shape
    views = (_pack_a(fl, a, m, k), pack_b(fl, b, n, k), c)
    multiply_packed(fl, DOT_PAIRS, rows, views, (m, n, k // 2))


def _pair(bld: ir.IRBuilder, first: ir.Value, second: ir.Value) -> ir.Value:
    """The dword `first << 16 | second` of two bf16 bit patterns."""
    high = bld.shl(bld.zext(first, I32), ir.Constant(I32, 16))
    return bld.or_(high, bld.zext(second, I32))


def _pack_a(fl: FunctionLowering, a: View, m: int, k: int) -> View:
    """A as [M, K/2] dwords, each pair's first element in the high half. Rows of unit stride
    are read 16 dwords at a time and rotated by 16 bits."""
    bld = fl.builder
    pairs = fl.buffer([m, k // 2], None, I32)
    if a.strides[-1] == 1 and (k // 2) % LANES == 0:
        rotate = intrinsic(fl.module, "llvm.fshl.v16i32", I32X16, [I32X16] * 3)
        sixteen = ir.Constant(I32X16, [16] * LANES)
        with loop_nest(bld, [m, k // (2 * LANES)], name="pack.a") as (i, v):
            p = bld.mul(v, ir.Constant(I64, LANES))
            column = bld.shl(p, ir.Constant(I64, 1))
            words = bld.load(a.address(bld, [i, column]), typ=I32X16, align=2)
            turned = bld.call(rotate, [words, words, sixteen])
            bld.store(turned, pairs.address(bld, [i, p]), align=4)
        return pairs
    with loop_nest(bld, [m, k // 2], name="pack.a") as (i, p):
        column = bld.shl(p, ir.Constant(I64, 1))
        first, second = a.load(bld, [i, column]), a.load(bld, [i, add(bld, column, 1)])
        pairs.store(bld, _pair(bld, first, second), [i, p])
    return pairs


def pack_b(
    fl: FunctionLowering, b: View, n: int, k: int, high_first: bool = True, into=None
) -> View:
    """B as [K/2, N] dwords, each pair's first row in the high half (`vdpbf16ps` adds its
    product first), or in the low half where not `high_first` (AMX's layout, the rows simply
    interleaved: lower_matmul_amx.py), in a fresh buffer or `into` (a view of [K/2, N] dwords
    with rows of unit stride: a slot of amx_panels.py's panel). Rows of unit stride are
    interleaved 16 columns at a time (two vector loads, one shuffle, one store)."""
    bld = fl.builder
    pairs = fl.buffer([k // 2, n], None, I32) if into is None else into
    if b.strides[-1] != 1:
        with loop_nest(bld, [k // 2, n], name="pack.b") as (p, j):
            row = bld.shl(p, ir.Constant(I64, 1))
            first, second = b.load(bld, [row, j]), b.load(bld, [add(bld, row, 1), j])
            high, low = (first, second) if high_first else (second, first)
            pairs.store(bld, _pair(bld, high, low), [p, j])
        return pairs
    half = ir.VectorType(I16, LANES)
    # little-endian dwords: the low half is the element at the lower address
    order = (LANES, 0) if high_first else (0, LANES)
    mix = ir.Constant(
        ir.VectorType(I32, 2 * LANES), [j + lane for j in range(LANES) for lane in order]
    )
    with loop_nest(bld, [k // 2, n // LANES], name="pack.b") as (p, v):
        j = bld.mul(v, ir.Constant(I64, LANES))
        row = bld.shl(p, ir.Constant(I64, 1))
        first = bld.load(b.address(bld, [row, j]), typ=half, align=2)
        second = bld.load(b.address(bld, [add(bld, row, 1), j]), typ=half, align=2)
        bld.store(bld.shuffle_vector(first, second, mix), pairs.address(bld, [p, j]), align=4)
    return pairs
