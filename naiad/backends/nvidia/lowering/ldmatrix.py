"""`ttg.convert_layout` into a `#ttg.dot_op` operand of `mma.sync` through `ldmatrix`.

The general conversion moves one element per shared-memory access; an operand of `mma.sync`
can do much better, because `ldmatrix.sync.aligned.m8n8.x4.shared.b16` hands each thread its
fragment directly: lane l gives the address of row l % 8 of matrix l / 8 (each row 16 bytes),
and thread t receives the 32-bit word t % 4 of row t / 4 of every matrix. That is the
fragment of the dot_op layout (`layouts/conversions.py`), one 32-bit word being `kWidth`
consecutive elements along K, when

- the rows are M (A) or N (B) and their 16 bytes run along K: non-transposed, for 8-, 16- and
  32-bit elements whose `kWidth` fills 32 bits (int8 / fp8 4, f16 / bf16 2, tf32 1);
- the rows run along K and their 16 bytes along M or N: `.trans` (each 8 x 8 matrix of 16-bit
  elements transposed), for f16 / bf16 only: a B stored row-major (K x N), an A column-major.

The source is stored in the shared scratch in a swizzled layout (`#ttg.swizzled_shared` of
16-byte groups, its fastest dimension the one the source holds contiguously, so each thread
stores whole vectors of up to 16 bytes): row r XORs its 16-byte groups with
`(r / perPhase) % maxPhase`, where a row of G groups puts perPhase = max(1, 8 / G) rows in a
128-byte line and maxPhase = min(8, G), so the eight rows one matrix reads fall in eight
distinct 16-byte bank groups, and the stores of consecutive rows spread the same way.

Everything is planned on linear layouts (`plan_ldmatrix`): the swizzled layout inverted maps
an element to its offset; composed with the source, it gives each register's store offset;
composed with the "address layout" of the ldmatrix lanes (rows, matrices, warps, and the
instruction index as the register input), each lane's load offset. Both are linear, so a
thread's offset is its thread part XOR a constant per vector or instruction. The plan is a
value the tests run through a simulator of `ldmatrix` for every thread
(tests/backends/nvidia/test_ldmatrix.py). The scratch has the tensor's bytes, as the general
path (`passes/scratch_size.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects.ttg.attributes import (
    DotOperandEncodingAttr,
    NvidiaMmaEncodingAttr,
    SwizzledSharedEncodingAttr,
)
from ....ir import FloatType, IntegerType
from ..layouts import LinearLayout, contiguous_dim, to_linear_layout
from . import barriers
from .context import Context
from .dot_operands import unpack32
from .emitter import SHARED_PTR, llvm_type
from .indexing import layout_of
from .thread_addresses import ThreadAddresses

_ROW_BYTES = 16  # one row of an 8 x 8 matrix of 16-bit elements
_LINE_BYTES = 128  # the 32 four-byte banks
# A 32-bit operand read element by element: each read of a warp covers 4 rows of 8 elements.
_FRAGMENT_ROWS, _FRAGMENT_COLUMNS = 4, 8


@dataclass(frozen=True)
class LdmatrixPlan:
    """How one conversion runs (offsets count elements of the scratch).

    `store_offsets` maps the source's (register, lane, warp) to offsets; each thread stores
    `vector` consecutive registers from each of `store_registers`. `load_offsets` maps
    (register = instruction, lane, warp) to the start of the row each lane addresses; each
    instruction loads `matrices` matrices (`.trans` when `trans`); destination word w (the
    registers w * per_word, w * per_word + 1, ...) is the word of `words[w]` = (instruction,
    matrix)."""

    element_bytes: int
    shared: LinearLayout
    store_offsets: LinearLayout
    vector: int
    store_registers: tuple[int, ...]
    load_offsets: LinearLayout
    matrices: int
    trans: bool
    words: tuple[tuple[int, int], ...]

    @property
    def per_word(self) -> int:
        return 4 // self.element_bytes

    @property
    def instructions(self) -> int:
        return self.load_offsets.in_dim_size("register")


def convert_with_ldmatrix(ctx: Context, op) -> bool:
    """Lower `op` with `ldmatrix` when it applies; False leaves it to the general paths."""
    if ctx.capability < 75:
        return False
    plan = plan_ldmatrix(op.src.type, op.result.type)
    if plan is None:
        return False
    _emit(ctx, op, plan)
    return True


# -- the plan -----------------------------------------------------------------------------------
def plan_ldmatrix(src_t, dst_t) -> LdmatrixPlan | None:
    """The plan of the conversion `src_t` -> `dst_t`, or None when `ldmatrix` does not fit."""
    # An accumulator feeding the next dot (chained dots) shares most of its fragment with the
    # operand: that is a register or shuffle exchange, not a trip through shared memory.
    if isinstance(src_t.encoding, NvidiaMmaEncodingAttr | DotOperandEncodingAttr):
        return None
    dims = fragment_dims(dst_t)
    if dims is None:
        return None
    nbytes = dims[0]
    src = layout_of(src_t)
    encoding = operand_encoding(src_t, dst_t)
    if encoding is None:
        return None
    inner = encoding.order[0]
    shared = shared_offsets(encoding, dst_t.shape)
    to_offset = shared.invert()
    loads = load_plan(to_offset, dst_t, inner)
    if loads is None:
        return None
    store_offsets, vector, registers = store_plan(src, to_offset, nbytes)
    return LdmatrixPlan(nbytes, shared, store_offsets, vector, registers, *loads)


def operand_encoding(src_t, dst_t, element_loads: bool = False):
    """The shared layout a dot operand `dst_t` (`fragment_dims`) is stored in from `src_t`:
    16-byte rows along the dimension the source holds contiguously, so that its threads store
    whole vectors. None when those rows run along M or N and the elements are not 16-bit
    (`.trans` moves 16-bit elements only), unless `element_loads`: the operand is then read
    one element per register (tf32's B stored row-major)."""
    nbytes, k_dim, mn_dim = fragment_dims(dst_t)
    trans = contiguous_dim(layout_of(src_t), k_dim, mn_dim) == mn_dim
    if trans and nbytes != 2 and not element_loads:
        return None
    inner, outer = (mn_dim, k_dim) if trans else (k_dim, mn_dim)
    if trans and nbytes != 2:
        return _element_load_encoding(dst_t.shape, inner, outer, nbytes)
    return swizzled_encoding(dst_t.shape, inner, outer, nbytes)


def _element_load_encoding(shape, inner: int, outer: int, nbytes: int):
    """The shared layout of an operand read one element per register along its rows (tf32's
    B stored row-major): a warp's read takes 4 rows (K, `lane % 4`) of 8 consecutive elements
    (N, `lane / 4`). Units of 8 elements are swizzled over 4 rows, which makes the read meet
    every bank once, and rows 4 apart share their phase: a thread's registers then sit at
    constant distances from its first, so a loop computes one address per operand and the
    other reads take immediate offsets (a phase over 8 rows needs an XOR per register)."""
    row_bytes = shape[inner] * nbytes
    rows_per_line = max(1, _LINE_BYTES // row_bytes)
    max_phase = max(1, _FRAGMENT_ROWS // rows_per_line)
    order = [inner, outer] + [d for d in range(len(shape) - 1, -1, -1) if d not in (inner, outer)]
    return SwizzledSharedEncodingAttr(_FRAGMENT_COLUMNS, rows_per_line, max_phase, order)


def fragment_dims(dst_t) -> tuple[int, int, int] | None:
    """(element bytes, K dimension, M or N dimension) of a dot operand `ldmatrix` can load
    (an `mma.sync` operand whose 32-bit fragment words hold `kWidth` elements along K), or
    None."""
    enc = dst_t.encoding
    if not isinstance(enc, DotOperandEncodingAttr):
        return None
    if not isinstance(enc.parent, NvidiaMmaEncodingAttr) or enc.parent.version_major != 2:
        return None
    element = dst_t.element_type
    if not isinstance(element, FloatType | IntegerType) or element.width not in (8, 16, 32):
        return None
    nbytes = element.width // 8
    if enc.k_width * nbytes != 4:  # a fragment word is not 32 bits (fp8 upcast, f32 split)
        return None
    rank = len(dst_t.shape)
    k_dim, mn_dim = (rank - 1, rank - 2) if enc.op_idx == 0 else (rank - 2, rank - 1)
    if not _is_fragment(layout_of(dst_t), rank, k_dim, mn_dim, enc.k_width):
        return None
    return nbytes, k_dim, mn_dim


def load_plan(to_offset: LinearLayout, dst_t, inner: int):
    """(load offsets, matrices per instruction, `.trans`, words) of the `ldmatrix` loads of
    the dot operand `dst_t` from a shared buffer whose element -> offset map is `to_offset`
    and whose 16-byte rows run along `inner`; None when they do not fit."""
    nbytes, k_dim, mn_dim = fragment_dims(dst_t)
    trans = inner == mn_dim
    if trans and nbytes != 2:  # `.trans` moves 16-bit elements
        return None
    rank = len(dst_t.shape)
    loads = _address_layout(layout_of(dst_t), rank, k_dim, mn_dim, inner, trans, nbytes)
    if loads is None:
        return None
    address, words, matrices = loads
    load_offsets = address.compose(to_offset)
    row = _ROW_BYTES // nbytes
    if any(b % row for name in load_offsets.in_dims for b in load_offsets.packed_bases(name)):
        return None  # a row would straddle two 16-byte groups of the buffer
    return load_offsets, matrices, trans, words


def store_plan(src: LinearLayout, to_offset: LinearLayout, nbytes: int):
    """(store offsets, vector, first registers) of storing the distributed layout `src` into
    a shared buffer whose element -> offset map is `to_offset`: each thread stores `vector`
    consecutive registers from each first register, once per element it holds."""
    store_offsets = src.compose(to_offset)
    vector = _store_vector(store_offsets, _ROW_BYTES // nbytes)
    redundant = src.free_variable_masks().get("register", 0)
    registers = tuple(r for r in range(0, src.in_dim_size("register"), vector) if not r & redundant)
    return store_offsets, vector, registers


def _unit(rank: int, dim: int, value: int) -> tuple[int, ...]:
    return tuple(value if d == dim else 0 for d in range(rank))


def _is_fragment(dst: LinearLayout, rank: int, k_dim: int, mn_dim: int, k_width: int) -> bool:
    """The lanes are ldmatrix's (words t % 4 along K, rows t / 4 along M or N) and the first
    registers are the elements of one word."""
    lanes = [_unit(rank, k_dim, k_width), _unit(rank, k_dim, 2 * k_width)]
    lanes += [_unit(rank, mn_dim, 1 << i) for i in range(3)]
    in_word = [_unit(rank, k_dim, 1 << i) for i in range(k_width.bit_length() - 1)]
    registers = dst.bases("register")
    return dst.bases("lane") == lanes and registers[: len(in_word)] == in_word


def swizzled_encoding(shape, inner: int, outer: int, nbytes: int) -> SwizzledSharedEncodingAttr:
    """The shared layout `ldmatrix` reads best: rows along `outer`, 16-byte groups along
    `inner`, swizzled so that eight consecutive rows meet eight distinct bank groups."""
    groups = max(1, shape[inner] * nbytes // _ROW_BYTES)
    rows_per_line = max(1, _LINE_BYTES // _ROW_BYTES // groups)
    max_phase = min(_LINE_BYTES // _ROW_BYTES, groups)
    order = [inner, outer] + [d for d in range(len(shape) - 1, -1, -1) if d not in (inner, outer)]
    return SwizzledSharedEncodingAttr(_ROW_BYTES // nbytes, rows_per_line, max_phase, order)


def shared_offsets(encoding, shape) -> LinearLayout:
    """offset -> element of a one-CTA shared buffer of `shape` in `encoding`."""
    shared = to_linear_layout(encoding, shape)
    return shared.sublayout(["offset"], shared.out_dims)  # one CTA: no `block` bits


def _address_layout(dst: LinearLayout, rank, k_dim, mn_dim, inner, trans, nbytes):
    """(register = instruction, lane, warp) -> the element starting the row each lane
    addresses, the (instruction, matrix) of every destination word, and matrices per
    instruction; None when a row would not be 16 aligned bytes of the scratch."""
    per_word = 4 // nbytes
    words = dst.bases("register")[per_word.bit_length() - 1 :]
    live = [i for i, basis in enumerate(words) if any(basis)]
    span = {(0,) * rank}
    for i in live:
        span |= {tuple(a ^ b for a, b in zip(c, words[i])) for c in span}
    if len(span) != 1 << len(live):  # dependent register bases: not a plain repetition
        return None
    matrix_bits, instruction_bits = live[:2], live[2:]
    row_dim = k_dim if trans else mn_dim
    zero = (0,) * rank
    lanes = [_unit(rank, row_dim, 1 << i) for i in range(3)]
    lanes += [words[i] for i in matrix_bits] + [zero] * (2 - len(matrix_bits))
    bases = {
        "register": [words[i] for i in instruction_bits],
        "lane": lanes,
        "warp": dst.bases("warp"),
    }
    row = _ROW_BYTES // nbytes if not trans else 8
    for basis in bases["register"] + lanes[3:] + bases["warp"]:
        if basis[inner] % row:
            return None
    address = LinearLayout(bases, dst.out_shape)
    placed = []
    for w in range(1 << len(words)):
        matrix = sum(1 << j for j, i in enumerate(matrix_bits) if w >> i & 1)
        instruction = sum(1 << j for j, i in enumerate(instruction_bits) if w >> i & 1)
        placed.append((instruction, matrix))
    return address, tuple(placed), 1 << len(matrix_bits)


def _store_vector(offsets: LinearLayout, limit: int) -> int:
    """Consecutive registers that land on consecutive, aligned offsets (at most `limit`)."""
    vector = min(offsets.contiguous_registers("offset"), limit)
    others = []
    for name in offsets.in_dims:
        bases = offsets.packed_bases(name)
        others += bases[vector.bit_length() - 1 :] if name == "register" else bases
    while vector > 1 and any(b & (vector - 1) for b in others):
        vector //= 2
    return vector


# -- the code -----------------------------------------------------------------------------------
def _emit(ctx: Context, op, plan: LdmatrixPlan) -> None:
    nbytes = plan.element_bytes
    ctx.need_shared(plan.shared.in_dim_size("offset") * nbytes)
    barriers.pay(ctx)  # an earlier user's reads of the scratch may be pending
    elem = llvm_type(op.src.type)
    emit_stores(
        ctx, ctx[op.src], elem, nbytes, plan.store_offsets, plan.vector, plan.store_registers
    )
    ctx.em.barrier()
    loads = (plan.load_offsets, plan.matrices, plan.trans, plan.words)
    ctx[op.result] = emit_loads(ctx, loads, elem, nbytes)
    barriers.owe(ctx)


def emit_stores(
    ctx: Context, values, elem: str, nbytes: int, offsets, vector, registers, base=0, dynamic=None
):
    """Store the registers `values` at element offsets `offsets` (register, lane, warp ->
    offset), `vector` at a time from each of `registers`; `base` is an element offset
    (constant) XOR-ed into all, `dynamic` bytes (a value) added (`thread_bytes`)."""
    addresses = ThreadAddresses(ctx, offsets, nbytes, dynamic)
    for first in registers:
        address = addresses.address((offsets.apply(register=first)[0] ^ base) * nbytes)
        _store(ctx, values[first : first + vector], elem, nbytes, address)


def emit_loads(ctx: Context, loads, elem: str, nbytes: int, base=0, dynamic=None) -> list[str]:
    """The registers of a dot operand read by `ldmatrix` (`loads`: a `load_plan`), `base` an
    element offset (constant) XOR-ed into every address, `dynamic` bytes added."""
    em = ctx.em
    load_offsets, matrices, trans, words = loads
    per_word = 4 // nbytes
    addresses = ThreadAddresses(ctx, load_offsets, nbytes, dynamic)
    loaded = []
    for instruction in range(load_offsets.in_dim_size("register")):
        constant = (load_offsets.apply(register=instruction)[0] ^ base) * nbytes
        loaded.append(_ldmatrix(ctx, matrices, trans, addresses.address(constant)))
    registers = []
    for instruction, matrix in words:
        word = loaded[instruction][matrix]
        if per_word == 1:
            registers.append(em.op(f"bitcast i32 {word} to {elem}"))
        else:
            registers += unpack32(em, word, elem, per_word)
    return registers


def _store(ctx: Context, values: list[str], elem: str, elem_bytes: int, address: str) -> None:
    """One store of consecutive elements (LLVM type `elem`), as 32-bit words where they fill
    some."""
    em = ctx.em
    count = len(values)
    if count == 1:
        em.emit(f"store {elem} {values[0]}, {SHARED_PTR} {address}")
        return
    vector_type = f"<{count} x {elem}>"
    vector = "poison"
    for i, value in enumerate(values):
        vector = em.op(f"insertelement {vector_type} {vector}, {elem} {value}, i32 {i}")
    nbytes = count * elem_bytes
    if nbytes >= 4:
        words = f"<{nbytes // 4} x i32>"
        vector = em.op(f"bitcast {vector_type} {vector} to {words}")
        vector_type = words
    em.emit(f"store {vector_type} {vector}, {SHARED_PTR} {address}, align {nbytes}")


def _ldmatrix(ctx: Context, n: int, trans: bool, address: str) -> list[str]:
    """One `ldmatrix` of `n` matrices: its words (32-bit registers), one per matrix."""
    trans = ".trans" if trans else ""
    outs = ", ".join(f"${i}" for i in range(n))
    text = f"ldmatrix.sync.aligned.m8n8.x{n}{trans}.shared.b16 {{{outs}}}, [${n}];"
    constraints = ",".join(["=r"] * n + ["r"])
    ret = "i32" if n == 1 else "{ " + ", ".join(["i32"] * n) + " }"
    # A side effect keeps the read between the barriers around it.
    result = ctx.em.asm(ret, text, constraints, [(SHARED_PTR, address)], True, "ldm")
    if n == 1:
        return [result]
    return [ctx.em.op(f"extractvalue {ret} {result}, {i}") for i in range(n)]
