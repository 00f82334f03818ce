"""`tt.load` and `tt.store` of global memory: vectorized, predicated PTX accesses.

Each access is inline PTX, as Triton writes it: `@p ld.global.v4.b32 {...}, [addr + 0];` and
`@p st.global.v4.b32 [addr + 0], {...};`. Inline assembly rather than LLVM's masked
intrinsics: the predicate stays a predicate (no branch around each access) and the width is
exactly the one chosen here, which LLVM's vectorizers would otherwise re-derive.

The vector width (up to 16 bytes) is the least of: the registers of the layout that hold
consecutive elements along the pointer's fastest dimension (`contiguous_registers`), what
AxisInfo proves of the pointers (contiguity and alignment) and, with a mask, how many
neighbouring lanes of the mask agree. A vector is a group of registers `[k*v, (k+1)*v)`; its
address is that of its first register. Its bits travel as 32-bit words (64-bit for 64-bit
elements; one 16- or 8-bit word when smaller), the unit of `ld.global.v{1,2,4}.b{32,64}`.

A store is issued once per element: registers repeating an element, and threads holding copies
of another thread's elements (the layout's free variables), do not store.

The op's hints become Triton's qualifiers: a volatile load is `ld.volatile.global` (never served
from L1, for a flag another program writes), the cache operator `.ca`, `.cg`, `.cs`, `.cv` (of a
load) or `.wb`, `.cg`, `.cs`, `.wt` (of a store), the eviction policy `.L1::evict_first` or
`.L1::evict_last`. PTX takes at most one of them: volatile wins over the others, a cache
operator over an eviction policy, which is only a hint.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects.tt.attributes import CacheModifier, EvictionPolicy
from ....ir import RankedTensorType
from .context import Context, lowers
from .emitter import (
    GLOBAL_PTR,
    bit_width,
    from_memory,
    memory_type,
    to_memory,
)
from .indexing import layout_of, redundant_thread_mask, unique_registers


@dataclass(frozen=True)
class Vector:
    """How one vector of `count` elements of `elem_bits` moves: `words` words of `word_bits`."""

    count: int
    elem_bits: int

    @property
    def word_bits(self) -> int:
        total = self.count * self.elem_bits
        return 64 if self.elem_bits == 64 else min(32, total)

    @property
    def words(self) -> int:
        return self.count * self.elem_bits // self.word_bits

    @property
    def per_word(self) -> int:
        return self.word_bits // self.elem_bits

    @property
    def suffix(self) -> str:
        """`.v4.b32`, `.b16`, ..."""
        vector = f".v{self.words}" if self.words > 1 else ""
        return f"{vector}.b{self.word_bits}"

    @property
    def constraint(self) -> str:
        return {64: "l", 32: "r", 16: "h", 8: "h"}[self.word_bits]

    @property
    def word_type(self) -> str:
        """The LLVM type of a word's register (PTX has no 8-bit registers: 16 bits)."""
        return f"i{max(self.word_bits, 16)}"


def _through_converts(value):
    """The value a chain of `ttg.convert_layout`s starts from: the same elements, so the
    same AxisInfo facts (which the analysis does not carry across a conversion)."""
    while getattr(getattr(value, "owner", None), "name", None) == "ttg.convert_layout":
        value = value.owner.src
    return value


def vector_width(ctx: Context, ptr, mask) -> int:
    """Elements per access for a tensor of pointers (see the module doc)."""
    t = ptr.type
    if not isinstance(t, RankedTensorType):
        return 1
    layout = layout_of(t)
    ptr, mask = _through_converts(ptr), _through_converts(mask)
    dim = ctx.axis_info.order(ptr)[0]
    width = min(layout.contiguous_registers(f"dim{dim}"), ctx.axis_info.max_vector_width(ptr))
    if mask is not None:
        width = min(width, ctx.axis_info.mask_alignment(mask, dim))
    # Every vector must start where the run of consecutive elements starts: the bases of the
    # higher registers move along `dim` by whole vectors only.
    bases = layout.bases("register")
    while width > 1 and any(b[dim] % width for b in bases[width.bit_length() - 1 :]):
        width //= 2
    return max(1, width)


def _pack(ctx: Context, values: list[str], mem: str, vec: Vector) -> str:
    """The elements of one word as an integer of the word's type."""
    word = f"i{vec.word_bits}"
    if vec.per_word == 1:
        packed = values[0] if mem == word else ctx.em.op(f"bitcast {mem} {values[0]} to {word}")
    else:
        vt = f"<{vec.per_word} x {mem}>"
        acc = "poison"
        for i, v in enumerate(values):
            acc = ctx.em.op(f"insertelement {vt} {acc}, {mem} {v}, i32 {i}")
        packed = ctx.em.op(f"bitcast {vt} {acc} to {word}")
    if vec.word_type != word:
        packed = ctx.em.op(f"zext {word} {packed} to {vec.word_type}")
    return packed


def _unpack(ctx: Context, word: str, mem: str, vec: Vector) -> list[str]:
    bits = f"i{vec.word_bits}"
    if vec.word_type != bits:
        word = ctx.em.op(f"trunc {vec.word_type} {word} to {bits}")
    if vec.per_word == 1:
        return [word if mem == bits else ctx.em.op(f"bitcast {bits} {word} to {mem}")]
    vt = f"<{vec.per_word} x {mem}>"
    vector = ctx.em.op(f"bitcast {bits} {word} to {vt}")
    return [ctx.em.op(f"extractelement {vt} {vector}, i32 {i}") for i in range(vec.per_word)]


def _load_vector(
    ctx: Context, address: str, predicate: str, vec: Vector, fill: list[str] | None, hints: str
) -> list[str]:
    """The words of one predicated vector load. Masked-off words read `fill` (the packed
    `other` words, moved in before the load, as Triton does), else 0: one predicate covers
    the whole vector, so no select per element follows."""
    outputs = [f"${i}" for i in range(vec.words)]
    mov = f"mov.u{max(vec.word_bits, 16)}"
    if fill is None:
        inits = "".join(f"{mov} {o}, 0x0;\n" for o in outputs)
    else:
        inits = "".join(f"{mov} {o}, ${vec.words + 2 + i};\n" for i, o in enumerate(outputs))
    registers = outputs[0] if vec.words == 1 else "{ " + ", ".join(outputs) + " }"
    text = f"{inits}@${vec.words + 1} ld{hints}{vec.suffix} {registers}, [ ${vec.words} + 0 ];"
    word = vec.word_type
    args = [(GLOBAL_PTR, address), ("i1", predicate)]
    constraints = [f"={vec.constraint}"] * vec.words + ["l", "b"]
    if fill is not None:
        args += [(word, w) for w in fill]
        constraints += [vec.constraint] * vec.words
    ret = word if vec.words == 1 else "{ " + ", ".join([word] * vec.words) + " }"
    result = ctx.em.asm(ret, text, ",".join(constraints), args)
    if vec.words == 1:
        return [result]
    return [ctx.em.op(f"extractvalue {ret} {result}, {i}") for i in range(vec.words)]


def _hints(op) -> str:
    """`.volatile.global`, `.global.cg`, `.global.L1::evict_last`, ...: what follows `ld` or
    `st` for the op's hints (the module doc says which one wins)."""
    volatile = op.attributes.get("isVolatile")
    if volatile is not None and volatile.value:
        return ".volatile.global"
    cache = op.attributes.get("cache")
    if cache is not None and CacheModifier.keyword(cache) != "none":
        return f".global.{CacheModifier.keyword(cache)}"
    evict = op.attributes.get("evict")
    if evict is not None and EvictionPolicy.keyword(evict) != "evict_normal":
        return f".global.L1::{EvictionPolicy.keyword(evict)}"
    return ".global"


def _fill_words(ctx: Context, others: list[str], start: int, mem: str, vec: Vector, t) -> list:
    """The `other` elements of the vector at `start`, packed into load words."""
    chunk = [to_memory(ctx.em, v, t) for v in others[start : start + vec.count]]
    return [
        _pack(ctx, chunk[i : i + vec.per_word], mem, vec) for i in range(0, vec.count, vec.per_word)
    ]


@lowers("tt.load")
def _load(ctx: Context, op) -> None:
    t = op.result.type
    mem = memory_type(t)
    vec = Vector(vector_width(ctx, op.ptr, op.mask), bit_width(t))
    ptrs = ctx[op.ptr]
    masks = ctx[op.mask] if op.mask is not None else None
    masks = ctx.bounds.guard(ctx, op, masks, vec.count) if ctx.bounds else masks
    others = ctx[op.other] if op.other is not None and masks is not None else None
    values = []
    for start in range(0, len(ptrs), vec.count):
        predicate = masks[start] if masks is not None else "true"
        # The vector width never exceeds the mask's constancy, so `masks[start]` is every
        # element's mask and `other` can fill the words the load leaves untouched.
        fill = _fill_words(ctx, others, start, mem, vec, t) if others is not None else None
        words = _load_vector(ctx, ptrs[start], predicate, vec, fill, _hints(op))
        for word in words:
            values += _unpack(ctx, word, mem, vec)
    ctx[op.result] = [from_memory(ctx.em, v, t) for v in values]


def store_predicate(ctx: Context, t, predicate: str) -> str:
    """`predicate`, further limited to the threads that hold each element first."""
    if isinstance(t, RankedTensorType):
        redundant = redundant_thread_mask(layout_of(t))
    else:
        redundant = -1  # a scalar: thread 0 stores it
    if not redundant:
        return predicate
    key = ("first-holder", redundant)
    if key not in ctx.em.cache:
        bits = ctx.em.entry_op(f"and i32 {ctx.em.tid()}, {redundant}")
        ctx.em.cache[key] = ctx.em.entry_op(f"icmp eq i32 {bits}, 0", "first")
    first = ctx.em.cache[key]
    if predicate == "true":
        return first
    return ctx.em.op(f"and i1 {predicate}, {first}")


@lowers("tt.store")
def _store(ctx: Context, op) -> None:
    t = op.value.type
    mem = memory_type(t)
    vec = Vector(vector_width(ctx, op.ptr, op.mask), bit_width(t))
    ptrs = ctx[op.ptr]
    values = [to_memory(ctx.em, v, t) for v in ctx[op.value]]
    masks = ctx[op.mask] if op.mask is not None else None
    masks = ctx.bounds.guard(ctx, op, masks, vec.count) if ctx.bounds else masks
    unique = unique_registers(layout_of(t)) if isinstance(t, RankedTensorType) else [0]
    for start in range(0, len(ptrs), vec.count):
        if start not in unique:
            continue
        predicate = store_predicate(ctx, t, masks[start] if masks is not None else "true")
        chunk = values[start : start + vec.count]
        words = [
            _pack(ctx, chunk[i : i + vec.per_word], mem, vec)
            for i in range(0, vec.count, vec.per_word)
        ]
        inputs = [f"${i + 1}" for i in range(vec.words)]
        registers = inputs[0] if vec.words == 1 else "{ " + ", ".join(inputs) + " }"
        text = f"@${vec.words + 1} st{_hints(op)}{vec.suffix} [ $0 + 0 ], {registers};"
        constraints = ",".join(["l"] + [vec.constraint] * vec.words + ["b"])
        args = [(GLOBAL_PTR, ptrs[start])] + [(vec.word_type, w) for w in words]
        ctx.em.asm("void", text, constraints, args + [("i1", predicate)])
