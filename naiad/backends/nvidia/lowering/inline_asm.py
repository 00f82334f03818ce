"""`tt.elementwise_inline_asm` (`tl.inline_asm_elementwise`): the user's PTX, `packed_element`
elements of every operand at a time.

The constraints are the user's, outputs first (`"=r,r"`). With `packed_element` = 1 each element
is one operand of its own type (a 16-bit float in an `h` register as its bits). With k > 1,
elements narrower than 32 bits travel packed, as in Triton: k consecutive registers of a
thread (padded with poison past its last) form one integer of k * width bits (`<4 x i8>` as an
`r` register), for the operands and for the results alike.
"""

from __future__ import annotations

from ....passes.diagnostics import unsupported
from .context import Context, lowers, register_count
from .emitter import bit_width, llvm_type


def _word(t, pack: int) -> str:
    """The LLVM type of one asm operand holding `pack` elements of `t`."""
    if pack == 1:
        kind = llvm_type(t)
        return f"i{bit_width(t)}" if kind in ("half", "bfloat") else kind
    return f"i{bit_width(t) * pack}"


def _pack(ctx: Context, values: list[str], t, pack: int) -> str:
    kind = llvm_type(t)
    if pack == 1:
        word = _word(t, 1)
        return values[0] if word == kind else ctx.em.op(f"bitcast {kind} {values[0]} to {word}")
    vector = f"<{pack} x {kind}>"
    acc = "poison"
    for i, v in enumerate(values):
        acc = ctx.em.op(f"insertelement {vector} {acc}, {kind} {v}, i32 {i}")
    return ctx.em.op(f"bitcast {vector} {acc} to {_word(t, pack)}")


def _unpack(ctx: Context, word: str, t, pack: int) -> list[str]:
    kind = llvm_type(t)
    if pack == 1:
        wide = _word(t, 1)
        return [word if wide == kind else ctx.em.op(f"bitcast {wide} {word} to {kind}")]
    vector = f"<{pack} x {kind}>"
    values = ctx.em.op(f"bitcast {_word(t, pack)} {word} to {vector}")
    return [ctx.em.op(f"extractelement {vector} {values}, i32 {i}") for i in range(pack)]


def _register(registers: list[str], i: int, count: int) -> str:
    """Register i of an operand (a scalar broadcasts); past the thread's last register, a pack
    is filled with poison, as when a thread holds fewer than `pack` elements."""
    if i >= count:
        return "poison"
    return registers[i if len(registers) > 1 else 0]


@lowers("tt.elementwise_inline_asm")
def _inline_asm(ctx: Context, op) -> None:
    pack = int(op.packed_element.value)
    types = [v.type for v in op.args] + [r.type for r in op.results]
    if pack > 1 and any(bit_width(t) * pack > 32 for t in types):
        unsupported(
            op,
            "`tt.elementwise_inline_asm` packs elements into 32-bit registers: pack * width <= 32",
        )
    lists = [ctx[v] for v in op.args]
    count = register_count(op.results[0].type) if op.results else 1
    outputs = [_word(r.type, pack) for r in op.results]
    ret = "void" if not outputs else outputs[0]
    if len(outputs) > 1:
        ret = "{ " + ", ".join(outputs) + " }"
    results: list[list[str]] = [[] for _ in op.results]
    for start in range(0, count, pack):
        args = []
        for registers, value in zip(lists, op.args):
            chunk = [_register(registers, i, count) for i in range(start, start + pack)]
            args.append((_word(value.type, pack), _pack(ctx, chunk, value.type, pack)))
        out = ctx.em.asm(
            ret, op.asm_string.value, op.constraints.value, args, not bool(op.pure.value)
        )
        for k, result in enumerate(op.results):
            word = out if len(outputs) == 1 else ctx.em.op(f"extractvalue {ret} {out}, {k}")
            results[k] += _unpack(ctx, word, result.type, pack)
    for result, registers in zip(op.results, results):
        ctx[result] = registers[:count]
