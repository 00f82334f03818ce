"""`tt.dot` on tensor cores: `mma.sync` on the registers of `#ttg.nvidia_mma` (version 2)
accumulators and `#ttg.dot_op` operands, and the registration of the `tt.dot` lowering.

The operands arrive in their `dot_op` layouts (accelerate-matmul put a `ttg.convert_layout`
before the dot; `ldmatrix.py` lowers it), so every thread already holds its
fragments; the lowering only picks the registers of each instruction from the layouts:

- a result tile is the 16 x 8 block whose registers hold (m0 | {0, 8}, n0 | {0, 1}) in the
  register part of the coordinates (c0..c3 of the instruction), for each (m0, n0) the
  accumulator's registers reach;
- for each K step k0 of the instruction, A's fragment registers j = 0..3 hold
  (m0 + 8 (j & 1), k0 + 4 kWidth (j >> 1) + e) and B's j = 0..1 hold (k0 + 4 kWidth j + e, n0),
  e < kWidth, packed into 32 bits, the lower e lower;
- the lanes of the three layouts are the instruction's fragment (checked), and the warps of
  the operands are the accumulator's (checked), so the register part is all that varies;
- fp8 operands upcast to f16 come in words of four (kWidth 4, which `ldmatrix` reads): each
  word's first two elements feed one m16n8k16 and its last two the next, in A and B alike,
  so the two instructions multiply the word's K elements in another grouping, the same sum;
  on sm_89+ each such pair becomes its f16x2 register by one `cvt.rn.f16x2` (element by element
  in integer arithmetic, tutorial 03's fp8 K loop at 2 warps was 650 SASS instructions, not 95).

| operands (inputPrecision) | instruction | notes |
|---|---|---|
| f16, bf16 | m16n8k16 `.f32.f16.f16.f32`, `.f16.f16.f16.f16`, `.f32.bf16.bf16.f32` | |
| f32 (tf32) | m16n8k8 `.f32.tf32.tf32.f32` | the f32 bits: the hardware reads tf32 |
| f32 (tf32x3) | 3 x m16n8k8 | big = cvt.rna.tf32(x), small = x - big |
| f32 (bf16x3, bf16x6) | 3 / 6 x m16n8k16 bf16 | hi, mid(, lo) = successive bf16 roundings |
| int8 | m16n8k32 `.satfinite.s32.s8.s8.s32` | as Triton |
| fp8 e4m3 / e5m2 | m16n8k32 `.f32.e4m3.e5m2.f32`... (sm_89+, f32 result) | else upcast to f16 |

The split precisions follow Triton's decomposition into dots: the small products accumulate
from zero over all of K (smallest first), NaNs of that sum become zero (an infinite operand
gives inf * 0 in a small product), the big product is accumulated on top, and `c` is added
last.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects.ttg.attributes import NvidiaMmaEncodingAttr
from ....errors import InternalError
from ..passes.dot_kinds import FP8_KINDS, element_kind, input_precision
from .context import Context, lowers
from .dot_fma import lower_fma_dot
from .dot_operands import (
    PTX_FP8,
    bf16_split,
    fp8_pair_to_f16x2,
    fp8_to_f16,
    lookup,
    pack32,
    register_table,
    tf32_split,
)
from .indexing import layout_of, register_coords

# Products (A part, B part) of the split precisions, in the order they accumulate; the big
# product (0, 0) comes after the NaNs of these are zeroed.
_SMALL_PRODUCTS = {
    "tf32x3": ((1, 0), (0, 1)),
    "bf16x3": ((1, 0), (0, 1)),
    "bf16x6": ((1, 1), (2, 0), (0, 2), (1, 0), (0, 1)),
}


@dataclass(frozen=True)
class _Plan:
    """One dot's instruction: its text, its K, the LLVM types of the packed operand elements
    and of the accumulator elements, and `precision`: the split of f32 operands (`tf32x3`,
    `bf16x3`, `bf16x6`, which `_SMALL_PRODUCTS` lists) or a name for a single product."""

    text: str
    k: int
    elem: str
    acc: str
    precision: str


@lowers("tt.dot")
def _dot(ctx: Context, op) -> None:
    encoding = op.d.type.encoding
    if isinstance(encoding, NvidiaMmaEncodingAttr):
        _MmaDot(ctx, op).lower()
    else:
        lower_fma_dot(ctx, op)


def _plan(op, capability: int) -> _Plan:
    a_kind, b_kind = element_kind(op.a.type.element_type), element_kind(op.b.type.element_type)
    acc = element_kind(op.d.type.element_type)
    k_width = op.a.type.encoding.k_width
    precision = input_precision(op)
    head = "mma.sync.aligned."
    if a_kind in FP8_KINDS and k_width == 4 and capability == 89 and acc == "f32":
        ptx = f"{PTX_FP8[a_kind]}.{PTX_FP8[b_kind]}"
        return _Plan(f"{head}m16n8k32.row.col.f32.{ptx}.f32", 32, "i8", "float", "fp8")
    if a_kind in ("f16", *FP8_KINDS):
        if acc == "f16":
            return _Plan(f"{head}m16n8k16.row.col.f16.f16.f16.f16", 16, "half", "half", "f16")
        return _Plan(f"{head}m16n8k16.row.col.f32.f16.f16.f32", 16, "half", "float", "f16")
    if a_kind == "bf16" or (a_kind == "f32" and precision in ("bf16x3", "bf16x6")):
        text = f"{head}m16n8k16.row.col.f32.bf16.bf16.f32"
        return _Plan(text, 16, "bfloat", "float", precision if a_kind == "f32" else "bf16")
    if a_kind == "f32" and precision in ("tf32", "tf32x3"):
        text = f"{head}m16n8k8.row.col.f32.tf32.tf32.f32"
        return _Plan(text, 8, "float", "float", precision)
    if a_kind == "i8":
        text = f"{head}m16n8k32.row.col.satfinite.s32.s8.s8.s32"
        return _Plan(text, 32, "i8", "i32", "i8")
    raise InternalError(f"no mma.sync for {op.a.type.element_type} operands")


def tile_bases(acc_layout) -> list[tuple[int, ...]]:
    """The register part of each 16 x 8 result tile's origin, in register order."""
    m_dim = len(acc_layout.out_dims) - 2
    tiles: dict[tuple[int, ...], None] = {}
    for coords in register_coords(acc_layout):
        tiles[(*coords[:m_dim], coords[m_dim] & ~8, coords[m_dim + 1] & ~1)] = None
    return list(tiles)


def tile_corners(base: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The register parts of c0..c3 of the tile at `base`: rows +0 / +8, columns +0 / +1."""
    *head, m0, n0 = base
    return [(*head, m0 | dm, n0 | dn) for dm in (0, 8) for dn in (0, 1)]


def fragment_coords(head, m0: int, n0: int, k0: int, k_width: int):
    """The register parts the instruction's A registers (4) and B registers (2) pack, each a
    group of `k_width` elements, for the tile (m0, n0) and the K step at k0."""
    kw = k_width
    a_groups = [
        [(*head, m0 + 8 * (j & 1), k0 + 4 * kw * (j >> 1) + e) for e in range(kw)] for j in range(4)
    ]
    b_groups = [[(*head, k0 + 4 * kw * j + e, n0) for e in range(kw)] for j in range(2)]
    return a_groups, b_groups


def instruction_fragments(head, m0: int, n0: int, k0: int, k_width: int, per_word: int):
    """The (A, B) register groups of each instruction of the K step at k0 (see
    `fragment_coords`): one instruction, or, where an instruction packs `per_word` < kWidth
    elements a register (fp8 upcast to f16), one per part of the word."""
    a_groups, b_groups = fragment_coords(head, m0, n0, k0, k_width)
    return [
        ([g[s : s + per_word] for g in a_groups], [g[s : s + per_word] for g in b_groups])
        for s in range(0, k_width, per_word)
    ]


def check_fragments(la, lb, lc, k_width: int, rank: int) -> None:
    """The lanes hold the instruction's fragments and the operands' warps are the result's."""
    batch = (0,) * (rank - 2)

    def vec(first, second):
        return (*batch, first, second)

    expected = {
        "C": [vec(0, 2), vec(0, 4), vec(1, 0), vec(2, 0), vec(4, 0)],
        "A": [vec(0, k_width), vec(0, 2 * k_width), vec(1, 0), vec(2, 0), vec(4, 0)],
        "B": [vec(k_width, 0), vec(2 * k_width, 0), vec(0, 1), vec(0, 2), vec(0, 4)],
    }
    for name, layout in (("C", lc), ("A", la), ("B", lb)):
        if layout.bases("lane") != expected[name]:
            raise InternalError(f"mma dot: the lanes of {name} are not mma.sync's fragment")
    warps_c = lc.bases("warp")
    if la.bases("warp") != [(*w[:-1], 0) for w in warps_c]:
        raise InternalError("mma dot: the warps of A are not the result's")
    if lb.bases("warp") != [(*w[:-2], 0, w[-1]) for w in warps_c]:
        raise InternalError("mma dot: the warps of B are not the result's")


class _MmaDot:
    """The lowering of one mma dot (see the module doc)."""

    def __init__(self, ctx: Context, op):
        self.ctx, self.em, self.op = ctx, ctx.em, op
        self.plan = _plan(op, ctx.capability)
        self.k_width = op.a.type.encoding.k_width
        self.per_word = self.plan.k // 8  # the elements an instruction's register packs
        upcast = self.plan.elem == "half" and element_kind(op.a.type.element_type) in FP8_KINDS
        if self.plan.k != 8 * self.k_width and not (upcast and self.k_width == 4):
            raise InternalError(f"mma dot: kWidth {self.k_width} does not fit {self.plan.text}")
        # sm_89+ converts each pair of fp8 elements an instruction's register packs at once
        self.paired_upcast = upcast and ctx.capability >= 89
        self.layouts = [layout_of(v.type) for v in (op.a, op.b, op.d)]
        self.rank = len(op.d.type.shape)
        check_fragments(*self.layouts, self.k_width, self.rank)
        self.tables = [register_table(layout) for layout in self.layouts[:2]]
        self.parts = [self._parts(op.a), self._parts(op.b)]
        self.packed: dict = {}

    def _parts(self, value) -> list[list[str]]:
        """Per split part, the operand's registers as the elements the instruction packs."""
        registers = self.ctx[value]
        kind = element_kind(value.type.element_type)
        precision = self.plan.precision
        if precision == "tf32x3":
            pairs = [tf32_split(self.em, r) for r in registers]
            return [[p[0] for p in pairs], [p[1] for p in pairs]]
        if precision in ("bf16x3", "bf16x6"):
            count = 2 if precision == "bf16x3" else 3
            splits = [bf16_split(self.em, r, count) for r in registers]
            return [[s[i] for s in splits] for i in range(count)]
        if kind in FP8_KINDS and self.plan.elem == "half" and not self.paired_upcast:
            return [[fp8_to_f16(self.em, r, kind) for r in registers]]
        return [list(registers)]

    def _operand(self, index: int, part: int, coords: list[tuple[int, ...]]) -> str:
        """The i32 register packing the elements of operand `index` (split `part`) at
        `coords`, made once."""
        key = (index, part, tuple(coords))
        if key not in self.packed:
            what = "AB"[index]
            values = [self.parts[index][part][lookup(self.tables[index], c, what)] for c in coords]
            if self.paired_upcast:
                kind = element_kind((self.op.a, self.op.b)[index].type.element_type)
                self.packed[key] = fp8_pair_to_f16x2(self.em, values, kind)
            else:
                self.packed[key] = pack32(self.em, values, self.plan.elem)
        return self.packed[key]

    def _products(self, state, head, m0: int, n0: int, pa: int, pb: int) -> list[str]:
        """`state` after the instructions of every K step (split parts `pa`, `pb`)."""
        k_extent = self.op.a.type.shape[-1]
        for k0 in range(0, k_extent, 8 * self.k_width):
            args = (head, m0, n0, k0, self.k_width, self.per_word)
            for a_groups, b_groups in instruction_fragments(*args):
                a_regs = [self._operand(0, pa, group) for group in a_groups]
                b_regs = [self._operand(1, pb, group) for group in b_groups]
                state = self._mma(state, a_regs, b_regs)
        return state

    def lower(self) -> None:
        op = self.op
        lc = self.layouts[2]
        c_table = register_table(lc)
        c_regs = self.ctx[op.c]
        m_dim = self.rank - 2
        held = register_coords(lc)
        value_at: dict[tuple[int, ...], str] = {}
        for base in tile_bases(lc):
            head, m0, n0 = base[:m_dim], base[m_dim], base[m_dim + 1]
            corners = tile_corners(base)
            indices = [lookup(c_table, c, "C") for c in corners]
            values = self._tile(head, m0, n0, [c_regs[i] for i in indices])
            value_at.update(zip(corners, values))
        self.ctx[op.d] = [value_at[coords] for coords in held]

    def _tile(self, head, m0: int, n0: int, c_values: list[str]) -> list[str]:
        """The four result elements of one 16 x 8 tile (c0..c3 order)."""
        small = _SMALL_PRODUCTS.get(self.plan.precision)
        if small is None:
            state = self._products(self._pack_acc(c_values), head, m0, n0, 0, 0)
            return self._unpack_acc(state)
        state = ["0.000000e+00"] * 4
        for pa, pb in small:
            state = self._products(state, head, m0, n0, pa, pb)
        state = [self._nan_to_zero(v) for v in state]
        state = self._products(state, head, m0, n0, 0, 0)
        return [self.em.op(f"fadd float {v}, {c}") for v, c in zip(state, c_values)]

    def _nan_to_zero(self, value: str) -> str:
        is_nan = self.em.op(f"fcmp uno float {value}, 0.000000e+00")
        return self.em.op(f"select i1 {is_nan}, float 0.000000e+00, float {value}")

    def _pack_acc(self, values: list[str]) -> list[str]:
        """The accumulator as the instruction's registers: four f32 / s32, or two f16x2."""
        if self.plan.acc == "half":
            return [pack32(self.em, values[:2], "half"), pack32(self.em, values[2:], "half")]
        return list(values)

    def _unpack_acc(self, state: list[str]) -> list[str]:
        if self.plan.acc != "half":
            return state
        em = self.em
        out = []
        for register in state:
            vector = em.op(f"bitcast i32 {register} to <2 x half>")
            out += [em.op(f"extractelement <2 x half> {vector}, i32 {i}") for i in range(2)]
        return out

    def _mma(self, state: list[str], a_regs: list[str], b_regs: list[str]) -> list[str]:
        """One `mma.sync`: D = A B + C with D tied to C."""
        n = len(state)
        kind = "i32" if self.plan.acc in ("half", "i32") else "float"
        letter = "r" if kind == "i32" else "f"
        outs = ",".join(f"${i}" for i in range(n))
        a_names = ",".join(f"${n + i}" for i in range(4))
        b_names = ",".join(f"${n + 4 + i}" for i in range(2))
        c_names = ",".join(f"${n + 6 + i}" for i in range(n))
        text = f"{self.plan.text} {{{outs}}}, {{{a_names}}}, {{{b_names}}}, {{{c_names}}};"
        constraints = ",".join([f"={letter}"] * n + ["r"] * 6 + [str(i) for i in range(n)])
        args = [("i32", r) for r in a_regs + b_regs] + [(kind, v) for v in state]
        struct = "{ " + ", ".join([kind] * n) + " }"
        result = self.em.asm(struct, text, constraints, args, side_effects=False, hint="mma")
        return [self.em.op(f"extractvalue {struct} {result}, {i}") for i in range(n)]
