"""Storing a register tensor of 16-bit elements into a shared buffer with `stmatrix` (sm_90).

`stmatrix.sync.aligned.m8n8.x4.shared.b16` is `ldmatrix` backwards: thread t hands the 32-bit
word t % 4 of row t / 4 of each of (up to) four 8 x 8 matrices, and lane l gives the address of
row l % 8 of matrix l / 8, each row 16 aligned bytes. With `.trans` each matrix is transposed:
the two elements of thread t's word go to rows 2 (t % 4) and 2 (t % 4) + 1, column t / 4. One
instruction thus writes 512 bytes where a thread's 16-byte vector stores write 16: a tensor-core
accumulator (`#ttg.nvidia_mma`, versions 2 and 3), whose thread holds two adjacent elements of
one row per 8 x 8 block, is otherwise stored 4 bytes at a time.

It applies exactly where the store's linear layout says so. `offsets` maps (register, lane,
warp) to the element offset each register goes to (the source composed with the buffer's
element -> offset map, swizzle included); since it is linear over GF(2), it fits when

- plain: register bit 0 and lane bits 0, 1 reach offsets 1, 2, 4 (a word is two adjacent
  elements, four lanes fill a 16-byte row), and lane bits 2-4 step rows;
- `.trans`: lane bits 2-4 reach offsets 1, 2, 4 (the eight lanes of a column fill a row), and
  register bit 0 and lane bits 0, 1 step rows;

and every other basis (rows, the remaining registers, warps) lands on a multiple of 8 elements,
so a row starts 16-byte aligned and XOR-ing into it is adding. The remaining register bits that
reach an offset number the words: the first two pick the matrix of an instruction (x4; x2 or x1
when fewer), the rest the instruction. The lanes then address their rows through the "address
layout" (register = instruction, lane, warp -> the offset of a row), computed once per thread
(`ThreadAddresses`). tests/backends/nvidia/test_stmatrix.py runs plans through a simulator of
the instruction as the PTX manual defines it, for every thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..layouts import LinearLayout
from .context import Context
from .dot_operands import pack32
from .emitter import SHARED_PTR, bit_width, llvm_type
from .indexing import layout_of
from .ldmatrix import emit_stores, store_plan
from .thread_addresses import ThreadAddresses

_ROW = 8  # 16-bit elements in a row of a matrix: 16 bytes
_ELEMENT_BYTES = 2
STMATRIX_CAPABILITY = 90


@dataclass(frozen=True)
class StmatrixPlan:
    """`address` maps (register = instruction, lane, warp) to the element offset of the row
    each lane addresses; instruction i stores `matrices` matrices (`.trans` when `trans`),
    matrix m from the word of registers (`words[i][m]`, `words[i][m]` + 1)."""

    address: LinearLayout
    matrices: int
    trans: bool
    words: tuple[tuple[int, ...], ...]
    rounds: int = 1  # the last `len(words) / rounds` instructions of each round in turn


def store_registers(ctx: Context, value, to_offset: LinearLayout, base=0, dynamic=None) -> None:
    """Store the register tensor `value` at the element offsets `to_offset` gives its elements:
    by `stmatrix` where it fits (sm_90 and later), else in vectors of up to 16 bytes. `base`
    is an element offset (constant) XOR-ed into all, `dynamic` bytes (a value) added."""
    t = value.type
    src = layout_of(t)
    bits = bit_width(t.element_type)
    elem = llvm_type(t)
    if ctx.capability >= STMATRIX_CAPABILITY and base % _ROW == 0:
        plan = plan_stmatrix(src.compose(to_offset), bits)
        if plan is not None:
            emit_stmatrix(ctx, ctx[value], elem, plan, base, dynamic)
            return
    nbytes = bits // 8
    offsets, vector, registers = store_plan(src, to_offset, nbytes)
    emit_stores(ctx, ctx[value], elem, nbytes, offsets, vector, registers, base, dynamic)


def plan_stmatrix(offsets: LinearLayout, element_bits: int, rounds: int = 1) -> StmatrixPlan | None:
    """The `stmatrix` stores of registers placed by `offsets` ((register, lane, warp) ->
    element offset, one CTA), or None when the instruction does not fit (see the module doc).
    In `rounds` (a conversion's, convert_rounds.py: the registers whose offsets reach the top
    bits), those registers number the instructions, highest, so that each round's are
    consecutive and no instruction's matrices straddle two rounds."""
    if element_bits != 16 or "offset" not in offsets.out_dims:
        return None
    registers = list(offsets.packed_bases("register"))
    lanes = list(offsets.packed_bases("lane"))
    if not registers or len(lanes) != 5:
        return None
    for trans in (False, True):
        plan = _plan(offsets, registers, lanes, trans, rounds)
        if plan is not None:
            return plan
    return None


def _plan(offsets: LinearLayout, registers, lanes, trans: bool, rounds: int):
    if trans:
        in_row, rows = lanes[2:], [registers[0], *lanes[:2]]
    else:
        in_row, rows = [registers[0], *lanes[:2]], lanes[2:]
    if in_row != [1, 2, 4]:
        return None
    word_bits = [i for i, basis in enumerate(registers[1:], start=1) if basis]
    warps = list(offsets.packed_bases("warp"))
    if any(b % _ROW for b in rows + [registers[i] for i in word_bits] + warps):
        return None
    scratch = offsets.out_dim_size("offset") // rounds
    # by offset: an instruction's round is then its offset's top bits (its address // scratch)
    round_bits = sorted(
        (i for i in word_bits if registers[i] >= scratch), key=registers.__getitem__
    )
    in_round = [i for i in word_bits if registers[i] < scratch]
    if len(round_bits) != rounds.bit_length() - 1:
        return None
    matrix_bits, instruction_bits = in_round[:2], in_round[2:] + round_bits
    lane_bases = rows + [registers[i] for i in matrix_bits]
    lane_bases += [0] * (5 - len(lane_bases))
    address = LinearLayout(
        {
            "register": [[registers[i]] for i in instruction_bits],
            "lane": [[b] for b in lane_bases],
            "warp": [[b] for b in warps],
        },
        {"offset": offsets.out_dim_size("offset")},
    )
    words = []
    for instruction in range(1 << len(instruction_bits)):
        first = sum(1 << b for j, b in enumerate(instruction_bits) if instruction >> j & 1)
        words.append(
            tuple(
                first + sum(1 << b for j, b in enumerate(matrix_bits) if m >> j & 1)
                for m in range(1 << len(matrix_bits))
            )
        )
    return StmatrixPlan(address, 1 << len(matrix_bits), trans, tuple(words), rounds)


def emit_stmatrix(
    ctx: Context, values, elem: str, plan: StmatrixPlan, base: int = 0, dynamic=None, round_=0
) -> None:
    """Store the registers `values` (LLVM type `elem`, 16 bits) by `plan`, the instructions
    of its round `round_` (each at its offset within that round's part); `base` is an
    element offset (a multiple of 8) XOR-ed into every address, `dynamic` bytes added."""
    em = ctx.em
    addresses = ThreadAddresses(ctx, plan.address, _ELEMENT_BYTES, dynamic)
    n = plan.matrices
    trans = ".trans" if plan.trans else ""
    words = ", ".join(f"${i + 1}" for i in range(n))
    constraints = ",".join(["r"] * (n + 1) + ["~{memory}"])
    per_round = len(plan.words) // plan.rounds
    scratch = plan.address.out_dim_size("offset") // plan.rounds
    for instruction in range(round_ * per_round, (round_ + 1) * per_round):
        firsts = plan.words[instruction]
        element = plan.address.apply(register=instruction)[0] % scratch
        constant = (element ^ base) * _ELEMENT_BYTES
        address, immediate = addresses.split(constant)
        at = f"$0+{immediate}" if immediate else "$0"
        text = f"stmatrix.sync.aligned.m8n8.x{n}{trans}.shared.b16 [{at}], {{{words}}};"
        args = [(SHARED_PTR, address)]
        args += [("i32", pack32(em, values[r : r + 2], elem)) for r in firsts]
        em.asm("void", text, constraints, args, True, "stm")
