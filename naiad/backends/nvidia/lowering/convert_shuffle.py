"""Moving values between the lanes of a warp: `shfl.sync` of any element type, and the
lowering of a `convert_plan.Shuffle` (a `ttg.convert_layout` within warps).

`shfl.sync` moves 32 bits: narrower values travel zero-extended, 64-bit ones (f64, i64,
pointers) as two words, i1 as a word. A conversion packs the narrow values its rounds read
from the same lane into one word (`Shuffle.packs`: two 16-bit, four 8-bit or i1). The plan's
per-lane choices (the register a lane sends, the round a lane keeps, where a received value
goes) are trees of selects on bits of the lane index, whose selector bits are computed once
per function at the top of the entry block. 8-bit elements go a word at a time where every
destination word is one `prmt` of two received words (`convert_words.py`).
"""

from __future__ import annotations

from ....ir import IntegerType
from ..layouts import LinearLayout
from ..layouts.bits import xor_bits
from .context import Context
from .convert_lanes import LaneMux, Shuffle
from .convert_words import PER_WORD, Words, plan_words
from .dot_operands import unpack32
from .emitter import bit_width, from_memory, llvm_type, to_memory
from .indexing import emit_thread_coords

_I32 = IntegerType(32)


def warp_shuffle(ctx: Context, value: str, t, mode: str, lane: str) -> str:
    """`value` (scalar type `t`) of another lane: `mode` "bfly" reads lane `lane_id ^ lane`,
    "idx" reads lane `lane` (an i32 operand); all 32 lanes take part."""
    kind = llvm_type(t)
    bits = bit_width(t) if not kind.startswith("ptr") else 64
    name = f"llvm.nvvm.shfl.sync.{mode}.i32"

    def shfl(word: str) -> str:
        return ctx.em.call(
            "i32", name, [("i32", "-1"), ("i32", word), ("i32", lane), ("i32", "31")]
        )

    em = ctx.em
    if bits == 64:
        wide = value if kind == "i64" else _cast(em, value, kind, "i64")
        low = em.op(f"trunc i64 {wide} to i32")
        high = em.op(f"trunc i64 {em.op(f'lshr i64 {wide}, 32')} to i32")
        low, high = shfl(low), shfl(high)
        joined = em.op(f"zext i32 {low} to i64")
        top = em.op(f"shl i64 {em.op(f'zext i32 {high} to i64')}, 32")
        wide = em.op(f"or i64 {joined}, {top}")
        return wide if kind == "i64" else _cast(em, wide, "i64", kind)
    if kind == "i1":
        word = em.op(f"zext i1 {value} to i32")
        return em.op(f"trunc i32 {shfl(word)} to i1")
    int_kind = f"i{bits}"
    word = value if kind == int_kind else em.op(f"bitcast {kind} {value} to {int_kind}")
    if bits < 32:
        word = em.op(f"zext {int_kind} {word} to i32")
    out = shfl(word)
    if bits < 32:
        out = em.op(f"trunc i32 {out} to {int_kind}")
    return out if kind == int_kind else em.op(f"bitcast {int_kind} {out} to {kind}")


def _cast(em, value: str, kind: str, to: str) -> str:
    """Bits of a 64-bit value as another 64-bit type (pointers convert, others bitcast)."""
    if kind.startswith("ptr"):
        return em.op(f"ptrtoint {kind} {value} to {to}")
    if to.startswith("ptr"):
        return em.op(f"inttoptr {kind} {value} to {to}")
    return em.op(f"bitcast {kind} {value} to {to}")


def _shuffle_packed(ctx: Context, values: list[str], t, bits: int, lane: str) -> list[str]:
    """`values` (each `bits` wide as they travel) of lane `lane`, packed into one word when
    there are several."""
    if len(values) == 1:
        return [warp_shuffle(ctx, values[0], t, "idx", lane)]
    em = ctx.em
    kind = llvm_type(t)
    int_kind = f"i{bits}" if kind != "i1" else "i1"
    word = None
    for j, value in enumerate(values):
        if kind != int_kind:
            value = em.op(f"bitcast {kind} {value} to {int_kind}")
        part = em.op(f"zext {int_kind} {value} to i32")
        part = em.op(f"shl i32 {part}, {j * bits}") if j else part
        word = part if word is None else em.op(f"or i32 {word}, {part}")
    word = warp_shuffle(ctx, word, _I32, "idx", lane)
    out = []
    for j in range(len(values)):
        part = em.op(f"lshr i32 {word}, {j * bits}") if j else word
        value = em.op(f"trunc i32 {part} to {int_kind}")
        out.append(value if kind == int_kind else em.op(f"bitcast {int_kind} {value} to {kind}"))
    return out


def _lane_function(em, bases: tuple[int, ...]) -> str:
    """The i32 value XOR(bases[b] for the set bits b of this thread's lane), in the entry
    block (the thread-coordinate planner of `indexing.py` writes it as a few shifts)."""
    layout = LinearLayout({"lane": [[b] for b in bases]}, ["value"])
    return emit_thread_coords(em, layout)[0]


def _selector_bits(em, mux: LaneMux) -> list[str]:
    """The i1 selector bits of `mux` for this thread."""
    if not mux.steps:
        return []
    selector = _lane_function(em, mux.select_bases)
    bits = []
    for i in range(len(mux.steps)):
        masked = em.entry_op(f"and i32 {selector}, {1 << i}")
        bits.append(em.entry_op(f"icmp ne i32 {masked}, 0"))
    return bits


def select_tree(em, kind: str, candidates: list[str], bits: list[str], entry=False) -> str:
    """`candidates[x]` where x's bit i is `bits[i]`: a tree of selects, lowest bit first (in
    the entry block with `entry`)."""
    emit = em.entry_op if entry else em.op
    for bit in bits:
        paired = []
        for x in range(0, len(candidates), 2):
            low, high = candidates[x], candidates[x + 1]
            same = low == high
            paired.append(low if same else emit(f"select i1 {bit}, {kind} {high}, {kind} {low}"))
        candidates = paired
    return candidates[0]


def emit_shuffle(ctx: Context, plan: Shuffle, registers: list[str], t) -> list[str]:
    """The destination registers of `plan` from the source `registers` (element type `t`)."""
    words = plan_words(plan)
    if words is not None and words.whole:
        return _emit_words(ctx, plan, words, registers, t)
    em = ctx.em
    kind = llvm_type(t)
    reading = _lane_function(em, plan.lane_bases)
    send_bits = _selector_bits(em, plan.send)
    accept_bits = _selector_bits(em, plan.accept)
    rotate_bits = _selector_bits(em, plan.rotate)
    got: dict[tuple[int, int], str] = {}
    for pack in plan.packs():
        sent = []
        for i, r in pack:
            base = plan.rounds[i][r].register
            candidates = [
                registers[base ^ xor_bits(plan.send.steps, x)]
                for x in range(1 << len(plan.send.steps))
            ]
            sent.append(select_tree(em, kind, candidates, send_bits))
        source = plan.rounds[pack[0][0]][pack[0][1]].lane
        lane = em.op(f"xor i32 {reading}, {source}") if source else reading
        for key, value in zip(pack, _shuffle_packed(ctx, sent, t, plan.bits, lane)):
            got[key] = value
    received = {}
    for i, (target, rounds) in enumerate(zip(plan.targets, plan.rounds)):
        choices = [got[(i, r)] for r in range(len(rounds))]
        received[target] = select_tree(em, kind, choices, accept_bits)
    values = {}
    for target in plan.targets:  # round k filled register k ^ h(lane): put it back in place
        candidates = [
            received[target ^ xor_bits(plan.rotate.steps, x)]
            for x in range(1 << len(plan.rotate.steps))
        ]
        values[target] = select_tree(em, kind, candidates, rotate_bits)
    return [values[c] for c in plan.copies]


def _emit_words(ctx: Context, plan: Shuffle, words: Words, registers: list[str], t) -> list[str]:
    """The destination registers of `plan`, its 8-bit elements moved a word at a time: per
    pack a select of candidate words and a shuffle, per destination word a `prmt`."""
    em = ctx.em
    data = [to_memory(em, value, t) for value in registers]  # i1 travels as a byte
    reading = _lane_function(em, plan.lane_bases)
    send_bits = _selector_bits(em, plan.send)
    assembled: dict[tuple, str] = {}

    def word(sources: tuple) -> str:
        if sources not in assembled:
            assembled[sources] = _assemble(em, [data[r] for r in sources if r is not None])
        return assembled[sources]

    received = []
    for pack, candidates in zip(plan.packs(), words.sent):
        sent = select_tree(em, "i32", [word(c) for c in candidates], send_bits)
        source = plan.rounds[pack[0][0]][pack[0][1]].lane
        lane = em.op(f"xor i32 {reading}, {source}") if source else reading
        received.append(warp_shuffle(ctx, sent, _I32, "idx", lane))
    choice_bits = _selector_bits(em, plan.accept) + _selector_bits(em, plan.rotate)
    out = []
    for w, gather in enumerate(words.gathers):
        selectors = [str(s) for s in gather.selectors]
        selector = select_tree(em, "i32", selectors, choice_bits, entry=True)
        first, second = (received[p] for p in gather.words)
        args = [("i32", first), ("i32", second), ("i32", selector)]
        bytes_ = unpack32(em, em.call("i32", "llvm.nvvm.prmt", args), "i8", PER_WORD)
        count = min(PER_WORD, len(plan.copies) - w * PER_WORD)
        out.extend(from_memory(em, b, t) for b in bytes_[:count])
    return out


def _assemble(em, parts: list[str]) -> str:
    """Bytes as one i32, the first lowest: pairs as 16-bit halves by shifts and ors, the
    halves as a vector. LLVM folds a pair split from one 16-bit value (an fp8 conversion's
    two results) back into it, and writes the halves as one `mov.b32 {lo, hi}`."""
    halves = []
    for j in range(0, 4, 2):
        pair = [em.op(f"zext i8 {part} to i16") for part in parts[j : j + 2]]
        if len(pair) == 2:
            pair = [em.op(f"or i16 {pair[0]}, {em.op(f'shl i16 {pair[1]}, 8')}")]
        halves.append(pair[0] if pair else "0")
    vector = "poison"
    for j, half in enumerate(halves):
        vector = em.op(f"insertelement <2 x i16> {vector}, i16 {half}, i32 {j}")
    return em.op(f"bitcast <2 x i16> {vector} to i32")
