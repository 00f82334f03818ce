"""`linalg.matmul` and `linalg.batch_matmul` as a register-blocked micro-kernel.

C[M, N] += A[M, K] @ B[K, N] on the static tile shapes a `tt.dot` has. C is cut into MR × NR
tiles; a tile's accumulators are MR·NV vectors of `lanes` elements (NR = NV·lanes) held in SSA
values — so in registers — across the whole k loop, which per step loads NV vectors of one row
of B, broadcasts MR elements of one column of A and issues MR·NV multiply-adds:

    for i0 in 0..M by MR:  for j0 in 0..N by NR:          (edge tiles: fewer rows, narrower vectors)
        acc[r][v] = C[i0 + r, j0 + v·lanes : +lanes]
        for k in 0..K:  acc[r][v] = fma(splat(A[i0 + r, k]), B[k, j0 + v·lanes : +lanes], acc[r][v])
        C[i0 + r, j0 + v·lanes : +lanes] = acc[r][v]

Compared with the loop nest of `lower_linalg.py`, which loads and stores C on every multiply-add,
memory traffic per multiply-add drops by a factor of about MR. Every C element still sums its
products in increasing k, each with one fused multiply-add where the target has the instruction
(as tt.dot may on every target; a multiply and an add on an x86 without FMA, where a fused one
is a C library call: element_math.multiply_add_intrinsic), so results are those of the loop
nest bit for bit; integer products wrap as they do there.

Operands the vectors cannot read in place are packed first into per-program scratch (the arena
of function.py): A and B when their elements are not the accumulator's type (int8 widens to
int32, exactly, once per element instead of once per product; 16- and 8-bit floats arrive
already widened to f32 by `cpu-widen-dot-operands`, where they were made, so that a
loop-invariant operand is widened once and a rounded one in the loop that rounds it), B when
its rows are not contiguous (a transposed operand), and C when its rows are not contiguous or it
is stored as a 16/8-bit float (rounded once at the end, as the loop nest does). A is read one
element at a time, so any strides serve. In a loop, a dot whose accumulator is the carried
tensor updates the loop's buffer in place (`accumulates_in_place`, asked by in_place.py).

MR and NV come from the target's vector registers (`register_file`): the accumulators, NV
vectors of B and a broadcast must fit in them; MR then shrinks to divide M where it can
(`fit_rows`), so that no edge row block makes the micro-kernel a second time. On a CPU with
AVX512-BF16, bf16 operands stay bf16 and are multiplied two products per lane, and with
AVX512-VNNI int8 operands four per lane, with the same results (lower_matmul_bf16.py,
lower_matmul_int8.py); with AMX (NAIAD_CPU_AMX) on tiles of 16 × 16 accumulators
(lower_matmul_amx.py). What the kernel
does not cover — operands of dynamic size, accumulators other than f32/f64/i32/i64 and the
16/8-bit floats — returns False and keeps the loop nest.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ....ir import FloatType, IntegerType, element_type, f32
from ..lower_scalar.float_bits import IEEE, encode
from ..lower_scalar.registry import intrinsic
from ..lower_scalar.types import llvm_type
from ..target import host_target
from . import lower_matmul_amx, lower_matmul_bf16, lower_matmul_int8
from .element_math import multiply_add_intrinsic, narrow_float, widen
from .function import FunctionLowering
from .loops import counted_loop, loop_nest
from .views import View, add

I32 = ir.IntType(32)
MATMULS = ("linalg.matmul", "linalg.batch_matmul")


@dataclass(frozen=True)
class RegisterFile:
    """A target's vector registers: their width in bits and how many there are."""

    bits: int
    count: int


def register_file(triple: str) -> RegisterFile:
    """The vector registers of the target of `triple`. AArch64 always has 32 NEON registers of
    128 bits; x86-64 code is only generated for the host (target.py), whose features say
    AVX-512 (32 × 512), AVX (16 × 256) or SSE2 (16 × 128)."""
    arch = triple.split("-", 1)[0]
    if arch in ("aarch64", "arm64"):
        return RegisterFile(128, 32)
    host = host_target()
    features = host.features.split(",") if host.triple == triple else []
    if "+avx512f" in features:
        return RegisterFile(512, 32)
    if "+avx" in features:
        return RegisterFile(256, 16)
    return RegisterFile(128, 16)


def reads_rows_in_place(triple: str) -> bool:
    """Whether a dot reads tiles in place well from rows a page apart (chunked_loads.py): with
    AVX-512's tiles (8 rows, 16 multiply-adds per step of k) the 1024^3 tutorial matmul ran
    25.0 -> 22.4 ms on Zen 4; compiled for AVX2 on the same core (4 rows: 8 multiply-adds per
    two rows of B, each a page from the last and from L2) 25.4 -> 37 ms, and for SSE 74 -> 81
    ms (bench/RESULTS.md). Elsewhere the tiles are copied, as they were."""
    registers = register_file(triple)
    return registers.bits >= 512 and registers.count >= 32


@dataclass(frozen=True)
class Blocking:
    """A micro-kernel's tile: `rows` (MR) by `vectors` (NV) vectors of `lanes` elements."""

    lanes: int
    rows: int
    vectors: int

    @property
    def columns(self) -> int:
        return self.lanes * self.vectors


def blocking(registers: RegisterFile, element_bits: int) -> Blocking:
    """Two vectors per row; as many rows as leave registers for B's two vectors and a
    broadcast (8 rows with 32 registers, 6 with 16: enough independent accumulators to cover
    the latency of a multiply-add on every core we target)."""
    lanes = max(registers.bits // element_bits, 1)
    vectors = 2
    rows = min(8, (registers.count - vectors - 1) // vectors)
    return Blocking(lanes, rows, vectors)


# The fewest rows a tile is cut to so that it divides M (`fit_rows`).
MIN_FITTED_ROWS = 4


def fit_rows(tile: Blocking, m: int) -> Blocking:
    """`tile` with as many rows as divide `m`, down to MIN_FITTED_ROWS (`tile` itself if none
    does): a row count that leaves a remainder makes the micro-kernel twice, once for the
    edge rows. With 16 registers (AVX2: 6 rows) a dot of 64 rows took 10 tiles and an edge
    of 4, and the two micro-kernels of each dot were a sixth of tutorial 06's LLVM IR and
    about a tenth of LLVM's time on it; 4 rows ran as fast there and on the 1024^3 matmul
    (bench/RESULTS.md)."""
    for rows in range(tile.rows, MIN_FITTED_ROWS - 1, -1):
        if m % rows == 0:
            return Blocking(tile.lanes, rows, tile.vectors)
    return tile


def _compute_type(out_type):
    """The IR type the accumulators hold for an output element type, else None."""
    out = element_type(out_type)
    if narrow_float(out) is not None:
        return f32
    if isinstance(out, FloatType) and out.kind in ("f32", "f64"):
        return out
    if isinstance(out, IntegerType) and out.width in (32, 64):
        return out
    return None


def _static(*views: View) -> bool:
    """Whether every size is known: tiles, edges and loop bounds are fixed when compiling."""
    return all(isinstance(size, int) for view in views for size in view.sizes)


def matmul_kernel(fl: FunctionLowering, op, a: View, b: View, c: View) -> bool:
    """Lower `op` (C = c += a @ b, batched over leading dimensions) as the micro-kernel into
    the destination `c`. False, emitting nothing, when the kernel does not cover it."""
    a_type, b_type = (v.type for v in op.inputs)
    out_type = element_type(op.outputs[0].type)
    compute = _compute_type(out_type)
    if compute is None or not _static(a, b, c):
        return False
    carried = fl.carried_tiles.get(op)
    if carried is not None:  # C kept on AMX tiles across the loop (amx_carried.py)
        carried.multiply(fl, a, b, c)
        return True
    element = llvm_type(compute)
    m, n = c.sizes[-2:]
    tile = fit_rows(blocking(register_file(fl.module.triple), _bits(element)), m)
    k = a.sizes[-1]
    bld = fl.builder
    packed = _packed_kernel(op, (m, n, k), fl.module.triple)
    a_pack = None if packed or _same(a_type, compute) else fl.buffer([m, k], compute)
    b_pack = None
    if not packed and not (_same(b_type, compute) and b.strides[-1] == 1):
        b_pack = fl.buffer([k, n], compute)
    c_in_place = _same(out_type, compute) and c.strides[-1] == 1
    c_pack = None if c_in_place else fl.buffer([m, n], compute)
    with loop_nest(bld, c.sizes[:-2], name="batch") as batch:
        a2, b2, c2 = (_matrix(bld, view, batch) for view in (a, b, c))
        if a_pack is not None:
            a2 = _pack(bld, a2, a_pack, lambda x: widen(bld, x, a_type, compute))
        if b_pack is not None:
            b2 = _pack(bld, b2, b_pack, lambda x: widen(bld, x, b_type, compute))
        acc = c2
        if c_pack is not None:
            acc = _pack(bld, c2, c_pack, lambda x: widen(bld, x, out_type, compute))
        if packed:
            packed.multiply(fl, tile.rows, a2, b2, acc, (m, n, k))
        else:
            _blocked(fl, tile, element, a2, b2, acc, (m, n, k))
        if c_pack is not None:
            narrow = narrow_float(out_type)
            if narrow is None:
                _pack(bld, acc, c2, lambda x: x)
            else:
                _pack(bld, acc, c2, lambda x: encode(bld, x, narrow, "rtne", IEEE))
    return True


def _packed_kernel(op, shape, triple: str):
    """The module whose dot instruction multiplies `op`'s operands on `triple`: AMX's tiles
    where this process may use them, else AVX-512's (lower_matmul_amx.py, lower_matmul_bf16.py,
    lower_matmul_int8.py), else None."""
    types = (*(v.type for v in op.inputs), op.outputs[0].type)
    for kernel in (lower_matmul_amx, lower_matmul_bf16, lower_matmul_int8):
        if kernel.applies(*types, shape, triple):
            return kernel
    return None


def accumulates_in_place(op, carried, block) -> bool:
    """Whether `op` is a matmul of `block` (a loop body) that may update the loop's buffer of
    the carried tensor `carried` in place: its accumulator and no operand, yielded and read by
    nothing else. Each C element is read before it is written and by its own tile only, so the
    loop's copies of the accumulator in and out of a fresh buffer (two per iteration) are not
    needed."""
    if op is None or op.name not in MATMULS or op.parent is not block:
        return False
    (result,) = op.results
    return (
        op.outputs[0] is carried
        and all(value is not carried for value in op.inputs)
        and all(user is op for user in carried.users)
        and len(result.uses) == 1
    )


def _same(t, compute) -> bool:
    """Whether elements of IR type `t` are already accumulator elements."""
    t = element_type(t)
    return t is compute and narrow_float(t) is None


def _bits(element: ir.Type) -> int:
    if isinstance(element, ir.IntType):
        return element.width
    return 64 if isinstance(element, ir.DoubleType) else 32


def _matrix(bld: ir.IRBuilder, view: View, batch) -> View:
    """The 2-D matrix of `view` at the batch indices `batch`."""
    if view.rank == 2:
        return view
    rank = view.rank
    return view.subview(
        bld, [*batch, 0, 0], [1] * (rank - 2) + view.sizes[-2:], [1] * rank, [rank - 2, rank - 1]
    )


def _pack(bld: ir.IRBuilder, source: View, target: View, convert) -> View:
    """Copy `source` into `target` element by element through `convert`; `target`."""
    with loop_nest(bld, target.sizes, name="pack") as indices:
        target.store(bld, convert(source.load(bld, indices)), indices)
    return target


def _blocked(fl, tile: Blocking, element, a: View, b: View, c: View, shape) -> None:
    """C += A @ B over the whole matrix: full tiles in loops, then the edge row block (fewer
    rows) and edge column tiles (fewer, shorter vectors), each sized at compile time."""
    m, n, k = shape
    bld = fl.builder
    full_m = m - m % tile.rows
    full_n = n - n % tile.columns

    def row_block(i0, rows):
        if full_n:
            with counted_loop(bld, 0, full_n, step=tile.columns, name="nr") as j0:
                _tile(fl, tile, element, (a, b, c), i0, j0, rows, tile.columns, k)
        if n % tile.columns:
            _tile(fl, tile, element, (a, b, c), i0, full_n, rows, n % tile.columns, k)

    if full_m:
        with counted_loop(bld, 0, full_m, step=tile.rows, name="mr") as i0:
            row_block(i0, tile.rows)
    if m % tile.rows:
        row_block(full_m, m % tile.rows)


def _tile(fl, tile: Blocking, element, views, i0, j0, rows: int, columns: int, k: int) -> None:
    """One `rows` × `columns` tile of C at (i0, j0): accumulators loaded, carried through the k
    loop as phis, stored back."""
    a, b, c = views
    bld = fl.builder
    widths = [min(tile.lanes, columns - start) for start in range(0, columns, tile.lanes)]
    starts = [v * tile.lanes for v in range(len(widths))]
    acc = [
        [
            _load_vector(bld, c, [add(bld, i0, r), add(bld, j0, s)], w)
            for s, w in zip(starts, widths)
        ]
        for r in range(rows)
    ]
    if k == 0:
        return
    before = bld.block
    with counted_loop(bld, 0, k, name="k") as kk:
        phis = [[bld.phi(value.type) for value in row] for row in acc]
        for row, phi_row in zip(acc, phis):
            for value, phi in zip(row, phi_row):
                phi.add_incoming(value, before)
        rhs = [_load_vector(bld, b, [kk, add(bld, j0, s)], w) for s, w in zip(starts, widths)]
        updated = []
        for r, phi_row in enumerate(phis):
            scalar = a.load(bld, [add(bld, i0, r), kk])
            splats = {w: _splat(bld, scalar, w) for w in set(widths)}
            updated.append(
                [
                    _multiply_add(fl, element, splats[w], x, phi)
                    for w, x, phi in zip(widths, rhs, phi_row)
                ]
            )
        for phi_row, new_row in zip(phis, updated):
            for phi, value in zip(phi_row, new_row):
                phi.add_incoming(value, bld.block)
    # k is static and positive, so the loop's exit follows its last iteration only.
    for r, row in enumerate(updated):
        for s, value in zip(starts, row):
            _store_vector(bld, c, [add(bld, i0, r), add(bld, j0, s)], value)


def _load_vector(bld: ir.IRBuilder, view: View, indices, width: int) -> ir.Value:
    """`width` consecutive elements of a row of `view` (unit last stride) from `indices`."""
    vector = ir.VectorType(view.element, width)
    return bld.load(view.address(bld, indices), typ=vector, align=_bits(view.element) // 8)


def _store_vector(bld: ir.IRBuilder, view: View, indices, value: ir.Value) -> None:
    bld.store(value, view.address(bld, indices), align=_bits(view.element) // 8)


def _splat(bld: ir.IRBuilder, scalar: ir.Value, width: int) -> ir.Value:
    vector = ir.VectorType(scalar.type, width)
    one = bld.insert_element(ir.Constant(vector, ir.Undefined), scalar, ir.Constant(I32, 0))
    return bld.shuffle_vector(
        one, ir.Constant(vector, ir.Undefined), ir.Constant(ir.VectorType(I32, width), [0] * width)
    )


def _multiply_add(fl, element, x: ir.Value, y: ir.Value, acc: ir.Value) -> ir.Value:
    """`acc + x·y` lane by lane: a fused multiply-add for floats, wrapping for integers."""
    bld = fl.builder
    if isinstance(element, ir.IntType):
        return bld.add(acc, bld.mul(x, y))
    width = acc.type.count
    name = f"{multiply_add_intrinsic(fl)}.v{width}f{_bits(element)}"
    return bld.call(intrinsic(fl.module, name, acc.type, [acc.type] * 3), [x, y, acc])
