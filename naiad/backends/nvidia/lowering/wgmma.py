"""`ttng.warp_group_dot` on Hopper: `wgmma.mma_async` reading B (and A) from shared memory
through matrix descriptors, A otherwise from registers (`#ttg.dot_op` of a version 3 parent:
the mma.sync fragment of A for each K step of 16), the accumulator in the `#ttg.nvidia_mma`
version 3 registers.

One instruction computes a warpgroup's m64 x n x k16 block (k8 of tf32, k32 of 8-bit types):
its four warps hold 16 rows each, every thread the mma.sync fragment of its rows repeated
every 8 columns, d[4j .. 4j+3] = (row, 8j + c), (row, 8j + c + 1), (row + 8, 8j + c), (row + 8,
8j + c + 1). The accumulator's layout names those registers (its register part: the tile's
origin, +8 rows, +1 column, +8j columns), its warp part the warpgroup's rows or columns.

An operand's descriptor (`matrix_descriptor`) holds the shared address of the first element
the instruction reads and its `#ttg.nvmma_shared` layout: the swizzle mode, the stride between
8-row groups of the strided dimension (SBO, 8 rows of the swizzle width) and between column
blocks of the contiguous dimension (LBO); the hardware applies the swizzle to the address
bits, which is why buffers are 1024-byte aligned. The first element of an instruction's
operand lies on a row that is a multiple of 8, where the swizzle moves nothing, so its offset
is the buffer's linear map applied to it; the next K step moves the start along the row.

The operand types are f16, bf16 (either major order), tf32, int8 (an s32 accumulator) and
fp8 e4m3 / e5m2 (K-major only). An fp8 dot whose `maxNumImpreciseAcc` is at most its K sums
each run of that many K elements in fresh registers (the first instruction with scale-d off),
waits for them and adds them into the accumulator at f32, as Triton does: the instruction's
own fp8 accumulation keeps fewer bits than f32. The adds are contractible as elementwise ones
are (`add.f32` in the PTX, as Triton's, unless `enable_fp_fusion=False`: `add.rn.f32`). A dot
whose `useC` is false computes d = A B: the first instruction of each block takes the flag as
its scale-d (the accumulator registers still go in, unread).

A dot is issued as `wgmma.fence`, every instruction, `commit_group`; a synchronous one then
waits (`wait_group 0`), an asynchronous one leaves that to `ttng.warp_group_dot_wait`
(wgmma_wait.py). The fence takes the accumulator and A's registers in and out, so that
everything writing them comes before it; the wait takes the accumulator in and out, so that
nothing reads it before it.
Stores from registers into a buffer (`ttg.local_alloc %x`) are generic-proxy writes: each
thread fences them to the asynchronous proxy before the barrier that publishes them;
`cp.async` copies need no fence.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....errors import InternalError
from ....ir import RankedTensorType
from ..passes.asynchronous_dots import buffer_of
from ..passes.dot_kinds import FP8_KINDS, element_kind
from ..passes.wgmma_dot import EITHER_MAJOR, REGISTER_A_WIDTHS
from . import barriers
from .context import Context, lowers
from .dot_operands import lookup, pack32, register_table
from .emitter import SHARED_PTR, llvm_type
from .indexing import layout_of, register_coords
from .matrix_descriptors import Descriptor, matrix_descriptor
from .wgmma_wait import register_constraint, wait_group  # (registers the wait's lowering)

# Operand types as PTX names them, and what follows scale-d in the instruction: the scales of
# A and B (+1 or -1; not for integers), then each operand's transpose flag (16-bit types
# only: the others are read K-major).
_PTX_TYPES = {
    "f16": "f16",
    "bf16": "bf16",
    "f32": "tf32",
    "f8E4M3FN": "e4m3",
    "f8E5M2": "e5m2",
    "i8": "s8",
}
WARPGROUP_THREADS = 128


@dataclass(frozen=True)
class _Operand:
    """An operand's buffer as the instructions read it."""

    view: object  # shared_memory.SharedView
    descriptor: Descriptor


class _WgmmaDot:
    """The lowering of one `ttng.warp_group_dot` (see the module doc)."""

    def __init__(self, ctx: Context, op):
        self.ctx, self.em, self.op = ctx, ctx.em, op
        enc = op.d.type.encoding
        self.instr_n, self.instr_k = enc.instr_shape[1], enc.instr_shape[2]
        a_type, b_type = (_PTX_TYPES.get(element_kind(v.type.element_type)) for v in (op.a, op.b))
        if a_type is None or b_type is None:
            raise InternalError(f"wgmma: no instruction for {op.a.type.element_type} operands")
        self.integer = a_type == "s8"
        self.acc_type = llvm_type(op.d.type)  # i32 or float
        self.either_major = element_kind(op.a.type.element_type) in EITHER_MAJOR
        shape = f"m64n{self.instr_n}k{self.instr_k}"
        self.text = f"wgmma.mma_async.sync.aligned.{shape}.{'s32' if self.integer else 'f32'}"
        self.text += f".{a_type}.{b_type}"
        self.imprecise_every = self._imprecise_every(op)
        self.acc_layout = layout_of(op.d.type)
        # A from registers (a chained dot's first operand): None here, its packed words in
        # `_a_words`; B always from shared memory.
        a_in_registers = isinstance(op.a.type, RankedTensorType)
        self.elem = llvm_type(op.a.type) if a_in_registers else None
        self.operands = [
            None if a_in_registers else self._operand(op.a, 1),
            self._operand(op.b, 0),
        ]
        self.a_table = register_table(layout_of(op.a.type)) if a_in_registers else None
        if a_in_registers and op.a.type.element_type.width not in REGISTER_A_WIDTHS:
            raise InternalError(f"wgmma: {a_type} operands are read from shared memory only")

    def _buffers(self) -> list:
        """The shared-memory operands (memdesc values) the dot reads."""
        return [v for v in (self.op.a, self.op.b) if not isinstance(v.type, RankedTensorType)]

    def _operand(self, value, k_dim: int) -> _Operand:
        view = self.ctx.values[value]
        t = value.type
        swizzle = t.encoding.swizzling_byte_width
        descriptor = matrix_descriptor(view.to_offset, swizzle, view.element_bytes, k_dim)
        if descriptor.transposed and not self.either_major:
            raise InternalError(f"wgmma: {t.element_type} operands are read K-major only")
        return _Operand(view, descriptor)

    def lower(self) -> None:
        ctx, em = self.ctx, self.em
        barriers.sync_stores(ctx)
        table = register_table(self.acc_layout)
        acc = list(ctx[self.op.c])
        tiles = self._tiles()
        warpgroup = self._warpgroup_origin()
        fields = [
            None if operand is None else self._address_field(operand, warpgroup[i])
            for i, operand in enumerate(self.operands)
        ]
        a_words = None
        if self.a_table is not None:
            steps = range(0, self.op.a.type.shape[1], self.instr_k)
            a_words = {(m0, k0): self._a_words(m0, k0) for m0, _ in tiles for k0 in steps}
        acc, a_words = self._fence(acc, a_words)
        self.a_words = a_words
        self.use_c = "1"
        if self.op.useC is not None:
            (flag,) = ctx[self.op.useC]
            self.use_c = em.op(f"zext i1 {flag} to i32")
        for m0, n0 in tiles:
            registers = [lookup(table, c, "the accumulator") for c in self._tile_coords(m0, n0)]
            state = self._block([acc[r] for r in registers], fields, m0, n0)
            for r, value in zip(registers, state):
                acc[r] = value
        em.asm("void", "wgmma.commit_group.sync.aligned;", "", [])
        is_async = self.op.attributes.get("isAsync")
        if is_async is None or not is_async.value:
            acc = wait_group(em, acc, 0, self.acc_type)
        ctx[self.op.d] = acc
        if not all(_ring_of(operand) in ctx.handed_back for operand in self._buffers()):
            barriers.owe(ctx)

    def _fence(self, acc: list[str], a_words: dict | None):
        """`wgmma.fence` holding the accumulator and A's registers: they go in and come out
        of it, so that everything that writes them (A's conversion from the first dot's
        result, attention's rescale of the accumulator) comes before it, as the instruction
        requires of registers an `wgmma` reads. Without them LLVM may schedule those writes
        between the instructions, and ptxas then fences each one on its own."""
        keys = [] if a_words is None else list(a_words)
        words = [w for key in keys for w in a_words[key]]
        acc_type = self.acc_type
        typed = [(acc_type, v) for v in acc] + [("i32", w) for w in words]
        n = len(typed)
        outs = [f"={register_constraint(t)}" for t, _ in typed]
        constraints = ",".join(outs + [str(i) for i in range(n)])
        struct = "{ " + ", ".join(t for t, _ in typed) + " }"
        em = self.em
        fenced = em.asm(struct, "wgmma.fence.sync.aligned;", constraints, typed, hint="fence")
        values = [em.op(f"extractvalue {struct} {fenced}, {i}") for i in range(n)]
        acc, words = values[: len(acc)], values[len(acc) :]
        if a_words is None:
            return acc, None
        return acc, {key: words[4 * i : 4 * i + 4] for i, key in enumerate(keys)}

    def _block(self, state: list[str], fields: list, m0: int, n0: int) -> list[str]:
        """The instructions of one result block, every K step accumulating into `state`; with
        partial sums (`imprecise_every`), into fresh registers that are added into `state`,
        at f32, every that many K elements."""
        steps = list(range(0, self.op.a.type.shape[1], self.instr_k))
        if self.imprecise_every is None:
            for k0 in steps:
                accumulate = self.use_c if k0 == steps[0] else "1"
                state = self._mma(state, fields, m0, n0, k0, accumulate)
            return state
        em = self.em
        per_sum = -(-self.imprecise_every // self.instr_k)
        for first in range(0, len(steps), per_sum):
            partial = ["0.0"] * len(state)
            for k0 in steps[first : first + per_sum]:
                accumulate = "0" if k0 == steps[first] else "1"
                partial = self._mma(partial, fields, m0, n0, k0, accumulate)
            em.asm("void", "wgmma.commit_group.sync.aligned;", "", [])
            partial = wait_group(em, partial, 0, "float")
            add = "fadd contract" if self.ctx.fp_fusion else "fadd"  # elementwise.py's rule
            if first == 0 and self.use_c != "1":  # d = A B: the first sum is the result
                keep = em.op(f"icmp ne i32 {self.use_c}, 0")
                state = [em.op(f"select i1 {keep}, float {x}, float 0.0") for x in state]
            state = [em.op(f"{add} float {x}, {y}") for x, y in zip(state, partial)]
            em.asm("void", "wgmma.fence.sync.aligned;", "", [])
        return state

    @staticmethod
    def _imprecise_every(op) -> int | None:
        """How many K elements an fp8 dot sums in the instruction's reduced-precision
        accumulator before adding them into its f32 one (`maxNumImpreciseAcc`, as Triton
        reads it: partial sums when it is at most K), or None: the whole dot accumulates in
        the instruction."""
        if element_kind(op.a.type.element_type) not in FP8_KINDS:
            return None
        attr = op.attributes.get("maxNumImpreciseAcc")
        every = 0 if attr is None else attr.value
        return every if every <= op.a.type.shape[1] else None

    def _tiles(self) -> list[tuple[int, int]]:
        """The (row, column) origins, in registers, of the instructions' result blocks."""
        tiles: dict[tuple[int, int], None] = {}
        for m, n in register_coords(self.acc_layout):
            tiles[(m & ~8, n - n % self.instr_n)] = None
        return list(tiles)

    def _tile_coords(self, m0: int, n0: int) -> list[tuple[int, int]]:
        """The register parts of the instruction's d registers, in order."""
        return [
            (m0 + dm, n0 + 8 * j + dn)
            for j in range(self.instr_n // 8)
            for dm in (0, 8)
            for dn in (0, 1)
        ]

    def _warpgroup_origin(self) -> tuple[list, list]:
        """Per warpgroup bit of the warp index: the (row, column) it moves the block by."""
        warps = self.acc_layout.bases("warp")
        if warps[:2] != [(16, 0), (32, 0)]:
            raise InternalError("wgmma: the warps of a warpgroup do not stack its rows")
        bits = warps[2:]
        return ([(m, 0) for m, _ in bits], [(0, n) for _, n in bits])

    def _start_address(self, operand: _Operand, warpgroup_bases) -> str:
        """This warpgroup's shared address of the operand's first element: the buffer's
        base, the slot, the view's origin and the warpgroup's rows or columns."""
        em, view = self.em, operand.view
        nbytes = view.element_bytes
        offset = view.origin_offset() * nbytes
        byte = str(offset)
        if warpgroup_bases:
            group = self._warpgroup_index()
            for i, basis in enumerate(warpgroup_bases):
                moved = view.offset_of(basis) * nbytes
                if not moved:
                    continue
                bit = em.op(f"and i32 {group}, {1 << i}")
                on = em.op(f"icmp ne i32 {bit}, 0")
                step = em.op(f"select i1 {on}, i32 {moved}, i32 0")
                byte = em.op(f"xor i32 {byte}, {step}")
        if view.dynamic is not None:
            byte = em.op(f"add i32 {byte}, {view.dynamic}")
        em.scratch_base = view.base
        address = em.shared_address(byte)
        return em.op(f"ptrtoint {SHARED_PTR} {address} to i32")

    def _warpgroup_index(self) -> str:
        """This thread's warpgroup, read from lane 0 through `shfl.sync.idx` (as Triton reads
        its warp index): ptxas then knows every lane holds it, and the descriptors made from
        it stay in uniform registers. From `tid.x` alone it took vector registers and an R2UR
        per word at every K step (tutorial 09's persistent matmul on sm_90a: 15 of 132 SASS
        instructions a step)."""
        em = self.em
        group = em.op(f"lshr i32 {em.tid()}, {WARPGROUP_THREADS.bit_length() - 1}")
        lanes = [("i32", "-1"), ("i32", group), ("i32", "0"), ("i32", "31")]
        return em.call("i32", "llvm.nvvm.shfl.sync.idx.i32", lanes, hint="warpgroup")

    def _address_field(self, operand: _Operand, warpgroup_bases) -> str:
        """Bits 0-13 of the descriptor of the operand's first element (its address / 16), an
        i64 that LLVM can neither hoist out of the dot's loop nor share with another dot: it
        passes through a `mov` with side effects. Attention backward's K and V (and Q and dO,
        at the same addresses) stay put across four loops, the first of a constant trip
        count (no guard): their descriptors were made once above it and held through all
        four, which nvJitLink 13.5 kept in ordinary registers, spilled, and reloaded one per
        instruction. Made at each dot, they live in uniform registers, as with one loop."""
        start = self._start_address(operand, warpgroup_bases)
        field = self.em.op(f"lshr i32 {start}, 4")
        field = self.em.op(f"and i32 {field}, 16383")
        field = self.em.asm("i32", "mov.b32 $0, $1;", "=r,r", [("i32", field)], hint="field")
        return self.em.op(f"zext i32 {field} to i64")

    def _descriptor(self, index: int, field: str, corner: tuple[int, int]) -> str:
        """The descriptor of operand `index`'s block whose first element is `corner` (view
        coordinates, on a row that is a multiple of 8): the operand's address `field` plus
        one 64-bit constant, the constant part and the block's offset / 16 (buffers end below
        the field's 256 KB, so nothing carries out of it). One add to one value per operand,
        which ptxas redoes in uniform registers at each instruction instead of holding every
        block's descriptor."""
        operand = self.operands[index]
        moved = operand.view.offset_of(corner) * operand.view.element_bytes
        if moved % 16:
            raise InternalError(f"wgmma: a block starts {moved} bytes into its buffer")
        return self.em.op(f"add i64 {field}, {operand.descriptor.bits + (moved >> 4)}")

    def _a_words(self, m0: int, k0: int) -> list[str]:
        """A's four 32-bit words of the K step at `k0` for the rows at `m0`, each `per` = 32 /
        bits consecutive columns: rows +0 / +8, columns +0 / +4 per (the mma.sync fragment of
        A: columns +0 / +8 of 16-bit elements, +0 / +16 of 8-bit ones)."""
        values = self.ctx[self.op.a]
        per = 32 // self.op.a.type.element_type.width
        words = []
        for dk, dm in ((0, 0), (0, 8), (4 * per, 0), (4 * per, 8)):
            run = [(m0 + dm, k0 + dk + e) for e in range(per)]
            regs = [lookup(self.a_table, c, "A") for c in run]
            words.append(pack32(self.em, [values[r] for r in regs], self.elem))
        return words

    def _mma(self, state: list[str], fields: list, m0: int, n0: int, k0: int, accumulate: str):
        """One `wgmma.mma_async` for the block at rows `m0`, columns `n0` and K step `k0`: the
        accumulator registers in and out, scale-d on where `accumulate` (an i32: a constant or
        a value) is not 0 (off: d = A B)."""
        if self.a_table is None:
            a = [("l", self._descriptor(0, fields[0], (m0, k0)))]
        else:
            a = [("r", word) for word in self.a_words[(m0, k0)]]
        b_desc = self._descriptor(1, fields[1], (k0, n0))
        n = len(state)
        outs = ",".join(f"${i}" for i in range(n))
        a_names = ",".join(f"${n + i}" for i in range(len(a)))
        b, scale = n + len(a), n + len(a) + 1
        a_text = a_names if self.a_table is None else "{" + a_names + "}"
        text = (
            f"{{ .reg .pred p; setp.ne.b32 p, ${scale}, 0; "
            f"{self.text} {{{outs}}}, {a_text}, ${b}, {self._tail()}; }}"
        )
        acc_type = self.acc_type
        constraints = ",".join(
            [f"={register_constraint(acc_type)}"] * n
            + [c for c, _ in a]
            + ["l", "r"]
            + [str(i) for i in range(n)]
        )
        a_args = [("i64" if c == "l" else "i32", v) for c, v in a]
        args = [*a_args, ("i64", b_desc), ("i32", accumulate)]
        args += [(acc_type, v) for v in state]
        struct = "{ " + ", ".join([acc_type] * n) + " }"
        result = self.em.asm(struct, text, constraints, args, hint="wgmma")
        return [self.em.op(f"extractvalue {struct} {result}, {i}") for i in range(n)]

    def _tail(self) -> str:
        """The instruction's operands after scale-d: A's and B's scales (+1), then the
        transpose flags of the operands read from shared memory (16-bit types only)."""
        if self.integer:
            return "p"
        if not self.either_major:
            return "p, 1, 1"
        flags = [operand.descriptor.transposed for operand in self.operands if operand]
        return "p, 1, 1, " + ", ".join(str(int(flag)) for flag in flags)


def _ring_of(memdesc):
    """The multi-buffered allocation a slot view (through transposes) belongs to, or None."""
    owner = buffer_of(memdesc).defining_op
    return owner.src if owner is not None and owner.name == "ttg.memdesc_index" else None


@lowers("ttng.warp_group_dot")
def _warp_group_dot(ctx: Context, op) -> None:
    _WgmmaDot(ctx, op).lower()


@lowers("ttng.fence_async_shared")
def _fence_async_shared(ctx: Context, op) -> None:
    barriers.fence_async_shared(ctx.em)
