"""bf16 × bf16 matmuls on CPUs with AVX512-BF16: `vdpbf16ps`, two products per f32 lane.

`vdpbf16ps acc, x, y` adds, in each of 16 f32 lanes, the products of the lane's two bf16 pairs:
`acc += x.hi·y.hi`, then `acc += x.lo·y.lo`, each product exact (8-bit significands) and each sum
rounded to nearest even. So C[i, j] += A[i, k]·B[k, j] + A[i, k+1]·B[k+1, j] is one lane of one
instruction when a dword holds the pair (A[i, k], A[i, k+1]) broadcast to every lane and a
register holds the pairs (B[k, j], B[k+1, j]) of 16 consecutive columns j: half the instructions
of the f32 micro-kernel (lower_matmul.py), no decoding of bf16 in the loop, half its bytes of B.

The operands are packed first, once per dot, into per-program scratch (A is read in place when
its rows have unit stride and K is even: it then is that layout already):

    A → [M, K2, 2]   A[i, 2p], A[i, 2p+1]             (K2 = ceil(K / 2): an odd K's last pair
    B → [K2, N, 2]   B[2p, j], B[2p+1, j]              is completed with +0.0)

and each C tile of MR rows × NV vectors of 16 columns is carried in registers through the loop
over pairs, as in lower_matmul.py (8 × 2 vectors: 16 accumulators, 2 of B, one broadcast, in
AVX-512's 32 registers).

What differs from the f32 micro-kernel, and so from the interpreter and the loop nest: each pair
adds its odd product before its even one (a different rounding order, within the tolerance table's
bound for dots), and the instruction treats subnormal inputs as zero and flushes subnormal results
(the hardware's fixed DAZ/FTZ for this instruction). `applies` chooses it only where the host's
features (target.py; NAIAD_HOST_CPU names a model) include AVX512-BF16, for bf16 operands with an
f32 (or narrower, rounded once at the end) accumulator and N a multiple of 16.
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import bf16, element_type, f32, i16
from ..lower_scalar.registry import intrinsic
from ..target import host_target
from .function import FunctionLowering
from .loops import counted_loop, loop_nest
from .views import View, add

LANES = 16  # f32 lanes of a 512-bit register
ROWS = 8  # C rows per tile
VECTORS = 2  # vectors of 16 columns per tile row
FEATURES = ("+avx512f", "+avx512bf16")
I32 = ir.IntType(32)
I16 = ir.IntType(16)


class _BFloat(ir.Type):
    """LLVM's `bfloat`, which llvmlite's IR builder does not name: the intrinsic's operands are
    vectors of it (bitcasts of the packed bits)."""

    def _to_string(self) -> str:
        return "bfloat"

    def __eq__(self, other) -> bool:
        return isinstance(other, _BFloat)

    def __hash__(self) -> int:
        return hash(_BFloat)


F32X16 = ir.VectorType(ir.FloatType(), LANES)
BF16X32 = ir.VectorType(_BFloat(), 2 * LANES)
I32X16 = ir.VectorType(I32, LANES)
DOT_PAIRS = "llvm.x86.avx512bf16.dpbf16ps.512"


def has_bf16_pairs(triple: str) -> bool:
    """Whether code for `triple` runs on a host whose CPU has AVX512-BF16."""
    host = host_target()
    features = host.features.split(",") if host.triple == triple else []
    return all(feature in features for feature in FEATURES)


def applies(a_type, b_type, compute, n, triple: str) -> bool:
    """Whether a matmul of these operand types, accumulator type `compute` and `n` columns
    runs on `vdpbf16ps` here."""
    return (
        element_type(a_type) is bf16
        and element_type(b_type) is bf16
        and compute is f32
        and isinstance(n, int)
        and n % LANES == 0
        and has_bf16_pairs(triple)
    )


def pack_pairs(fl: FunctionLowering, a: View, b: View, shape) -> tuple[View, View]:
    """A and B in the pair layouts of the module doc (bf16 bits, i16 elements). A with rows of
    unit stride and an even K already is [M, K2, 2]; B's rows of unit stride are interleaved
    16 columns at a time (two vector loads, one shuffle, one store)."""
    m, n, k = shape
    k2 = (k + 1) // 2
    bld = fl.builder
    one = ir.Constant(ir.IntType(64), 1)
    zero = ir.Constant(I16, 0)
    if a.strides[-1] == 1 and k % 2 == 0:
        a_pairs = View(a.pointer, a.element, a.offset, [m, k2, 2], [a.strides[0], 2, 1])
    else:
        a_pairs = fl.buffer([m, k2, 2], i16)
        with loop_nest(bld, [m, k], name="pack.a") as (i, kk):
            a_pairs.store(bld, a.load(bld, [i, kk]), [i, bld.lshr(kk, one), bld.and_(kk, one)])
        if k % 2:  # the last pair's second half: +0.0 adds nothing
            with loop_nest(bld, [m], name="pad.a") as (i,):
                a_pairs.store(bld, zero, [i, k2 - 1, 1])
    b_pairs = fl.buffer([k2, n, 2], i16)
    if b.strides[-1] == 1:
        _interleave_rows(bld, b, b_pairs, k, n)
    else:
        with loop_nest(bld, [k, n], name="pack.b") as (kk, j):
            b_pairs.store(bld, b.load(bld, [kk, j]), [bld.lshr(kk, one), j, bld.and_(kk, one)])
    if k % 2:
        with loop_nest(bld, [n], name="pad.b") as (j,):
            b_pairs.store(bld, zero, [k2 - 1, j, 1])
    return a_pairs, b_pairs


def _interleave_rows(bld: ir.IRBuilder, b: View, b_pairs: View, k: int, n: int) -> None:
    """b_pairs[p, j] = (B[2p, j], B[2p+1, j]) for the rows of B that come in pairs, 16 columns
    at a time."""
    row = ir.VectorType(I16, LANES)
    pairs = [lane for j in range(LANES) for lane in (j, j + LANES)]
    mix = ir.Constant(ir.VectorType(I32, 2 * LANES), pairs)
    with loop_nest(bld, [k // 2, n // LANES], name="pack.b") as (p, v):
        j = bld.mul(v, ir.Constant(ir.IntType(64), LANES))
        even = bld.shl(p, ir.Constant(ir.IntType(64), 1))
        lo = bld.load(b.address(bld, [even, j]), typ=row, align=2)
        hi = bld.load(b.address(bld, [add(bld, even, 1), j]), typ=row, align=2)
        bld.store(bld.shuffle_vector(lo, hi, mix), b_pairs.address(bld, [p, j, 0]), align=2)
    if k % 2:  # the last row pairs with the zeros `pack_pairs` writes
        with loop_nest(bld, [n], name="pack.b.last") as (j,):
            b_pairs.store(bld, b.load(bld, [k - 1, j]), [k // 2, j, 0])


def blocked_pairs(fl: FunctionLowering, a_pairs: View, b_pairs: View, c: View, shape) -> None:
    """C += A @ B over the whole matrix from the packed pairs: full tiles in loops, then the
    edge row block (fewer rows) and the edge column tile (one vector)."""
    m, n, k = shape
    k2 = (k + 1) // 2
    bld = fl.builder
    columns = LANES * VECTORS
    full_m, full_n = m - m % ROWS, n - n % columns

    def row_block(i0, rows):
        if full_n:
            with counted_loop(bld, 0, full_n, step=columns, name="nr") as j0:
                _tile(fl, (a_pairs, b_pairs, c), i0, j0, rows, VECTORS, k2)
        if n % columns:
            _tile(fl, (a_pairs, b_pairs, c), i0, full_n, rows, (n % columns) // LANES, k2)

    if full_m:
        with counted_loop(bld, 0, full_m, step=ROWS, name="mr") as i0:
            row_block(i0, ROWS)
    if m % ROWS:
        row_block(full_m, m % ROWS)


def _tile(fl, views, i0, j0, rows: int, vectors: int, k2: int) -> None:
    """One tile of C at (i0, j0): `rows` × `vectors` accumulators carried through the loop over
    pairs as phis, one `vdpbf16ps` per accumulator and pair."""
    a_pairs, b_pairs, c = views
    bld = fl.builder
    dot = intrinsic(fl.module, DOT_PAIRS, F32X16, [F32X16, BF16X32, BF16X32])
    starts = [v * LANES for v in range(vectors)]
    acc = [
        [
            bld.load(c.address(bld, [add(bld, i0, r), add(bld, j0, s)]), typ=F32X16, align=4)
            for s in starts
        ]
        for r in range(rows)
    ]
    before = bld.block
    with counted_loop(bld, 0, k2, name="pairs") as p:
        phis = [[bld.phi(F32X16) for _ in row] for row in acc]
        for row, phi_row in zip(acc, phis):
            for value, phi in zip(row, phi_row):
                phi.add_incoming(value, before)
        rhs = [
            bld.load(b_pairs.address(bld, [p, add(bld, j0, s), 0]), typ=BF16X32, align=2)
            for s in starts
        ]
        updated = []
        for r, phi_row in enumerate(phis):
            pair = bld.load(a_pairs.address(bld, [add(bld, i0, r), p, 0]), typ=I32, align=2)
            lhs = bld.bitcast(_splat(bld, pair), BF16X32)
            updated.append([bld.call(dot, [phi, lhs, x]) for x, phi in zip(rhs, phi_row)])
        for phi_row, new_row in zip(phis, updated):
            for phi, value in zip(phi_row, new_row):
                phi.add_incoming(value, bld.block)
    # k2 is static and positive, so the loop's exit follows its last iteration only.
    for r, row in enumerate(updated):
        for s, value in zip(starts, row):
            bld.store(value, c.address(bld, [add(bld, i0, r), add(bld, j0, s)]), align=4)


def _splat(bld: ir.IRBuilder, scalar: ir.Value) -> ir.Value:
    one = bld.insert_element(ir.Constant(I32X16, ir.Undefined), scalar, ir.Constant(I32, 0))
    return bld.shuffle_vector(
        one, ir.Constant(I32X16, ir.Undefined), ir.Constant(I32X16, [0] * LANES)
    )
