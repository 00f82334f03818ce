"""`tt.atomic_rmw` and `tt.atomic_cas`: one predicated PTX `atom` per distinct element.

Each access is inline PTX, as Triton writes it: `@p atom.global.gpu.acq_rel.add.f32 d, [a], b;`
with the op's memory semantics (`relaxed`, `acquire`, `release`, `acq_rel`) and scope (`cta`,
`gpu`, `sys`) spelled as PTX qualifiers, in Triton's order, which differs per instruction and
which programs and tests read back: the scope first for a read-modify-write, the semantics
first for a compare-and-swap (`atom.global.acq_rel.gpu.cas.b32`) and, in the compare-and-swap
loop, before the state space (`atom.acq_rel.gpu.global.cas.b16`). The instruction per kind and
element type:

| kind | PTX |
|---|---|
| add (integers) | `add.u32` / `add.u64` (two's complement: the same bits for signed values) |
| fadd | `add.f32`, `add.f64`, `add.noftz.f16`, `add.noftz.bf16` (sm_90; the loop before) |
| max, min (integers) / umax, umin | `max.s32` ... / `max.u32` ... |
| max, min (floats) | the loop, computing `llvm.maximum` / `llvm.minimum` |
| and, or, xor, exch | `.b32` / `.b64` |
| cas | `cas.b16` / `cas.b32` / `cas.b64` |

PTX has no float `atom.max`/`atom.min` (but vector forms on sm_90), and no bf16 add before
sm_90: those read the element, compute the new value and `atom.cas` it until no other thread
changed it in between. Float max and min are IEEE 754-2019's maximum and minimum, as the
interpreter's atomics (runtime/interpreter/atomics.py): a NaN on either side gives NaN, and -0
is below +0. The frontend makes them only for a tensor descriptor's fp16/bf16 `atomic_max` /
`atomic_min` on sm_90 and later (tl.atomic_max takes fp32/fp64 by their bits, as Triton).

An atomic happens once per element, whatever the layout: registers repeating an element are
skipped (their result is the first register's), and threads holding copies of another thread's
elements (the layout's free variables) are predicated off. Those threads still need the old
values the op returns: when the result is used, the threads that did the atomics write them to
the shared scratch and every thread reads its elements back (a barrier on each side). A scalar
atomic is done by thread 0 and its old value broadcast the same way.
"""

from __future__ import annotations

from ....dialects.tt.attributes import MemSemantic, MemSyncScope, RMWOp
from ....ir import FloatType, RankedTensorType
from ....passes.diagnostics import unsupported
from .context import Context, lowers
from .convert import element_offsets, shared_load, shared_store
from .elementwise import intrinsic_suffix
from .emitter import GLOBAL_PTR, element_of, llvm_type
from .guards import predicated
from .indexing import layout_of, redundant_thread_mask, register_coords, unique_registers
from .memory import store_predicate

_INT_OPS = {"add": "add.u", "max": "max.s", "min": "min.s", "umax": "max.u", "umin": "min.u"}
_BIT_OPS = {"and": "and.b", "or": "or.b", "xor": "xor.b", "exch": "exch.b"}
# The register type of each width: (LLVM type, inline-asm constraint).
_WORDS = {16: ("i16", "h"), 32: ("i32", "r"), 64: ("i64", "l")}


def _ptx_op(kind: str, t, capability: int) -> str | None:
    """The `op.type` part of the instruction, or None when PTX has no such atomic (float max
    and min, bf16 add before sm_90: done by a compare-and-swap loop)."""
    scalar = element_of(t)
    width = scalar.width
    if isinstance(scalar, FloatType) and kind in ("max", "min"):
        return None
    if kind == "fadd":
        if scalar.kind == "bf16":
            return "add.noftz.bf16" if capability >= 90 else None
        return f"add.noftz.{scalar.kind}" if scalar.kind == "f16" else f"add.{scalar.kind}"
    if kind in _BIT_OPS:
        return f"{_BIT_OPS[kind]}{width}"
    return f"{_INT_OPS[kind]}{width}"


def _qualifiers(op) -> str:
    """`.acq_rel.gpu`: the memory semantics, then the scope."""
    return f".{MemSemantic.keyword(op.sem)}.{MemSyncScope.keyword(op.scope)}"


def _scope_first(op) -> str:
    """`.gpu.acq_rel`: the scope, then the memory semantics (a read-modify-write's order)."""
    return f".{MemSyncScope.keyword(op.scope)}.{MemSemantic.keyword(op.sem)}"


def _as_word(ctx: Context, value: str, t) -> str:
    """`value` as the integer register of its width (floats by their bits)."""
    kind = llvm_type(t)
    word, _ = _WORDS[element_of(t).width]
    return value if kind == word else ctx.em.op(f"bitcast {kind} {value} to {word}")


def _from_word(ctx: Context, value: str, t) -> str:
    kind = llvm_type(t)
    word, _ = _WORDS[element_of(t).width]
    return value if kind == word else ctx.em.op(f"bitcast {word} {value} to {kind}")


def _atom(ctx: Context, text: str, t, address: str, operands: list[str], predicate: str) -> str:
    """One predicated `atom` whose PTX is `text` (operands `$1`, `$2`, ...); the old value."""
    word, letter = _WORDS[element_of(t).width]
    count = len(operands)
    constraints = ",".join([f"={letter}", "l"] + [letter] * count + ["b"])
    args = [(GLOBAL_PTR, address)] + [(word, _as_word(ctx, v, t)) for v in operands]
    body = f"@${count + 2} {text} $0, [ $1 + 0 ], " + ", ".join(f"${i + 2}" for i in range(count))
    old = ctx.em.asm(word, body + ";", constraints, args + [("i1", predicate)])
    return _from_word(ctx, old, t)


def _combine(ctx: Context, kind: str, t, old: str, value: str) -> str:
    """What the compare-and-swap loop stores over `old`: `old + value`, or IEEE 754-2019's
    maximum / minimum of the two (a NaN wins, -0 < +0)."""
    kind_type = llvm_type(t)
    if kind == "fadd":
        return ctx.em.op(f"fadd {kind_type} {old}, {value}")
    name = f"llvm.{'maximum' if kind == 'max' else 'minimum'}.{intrinsic_suffix(t)}"
    return ctx.em.call(kind_type, name, [(kind_type, old), (kind_type, value)])


def _cas_loop(ctx: Context, op, kind: str, address: str, value: str, predicate: str) -> str:
    """`*address = combine(*address, value)` (`_combine`) by compare-and-swap until no other
    thread intervened, for the float atomics PTX lacks; the old value. The loop retries with
    the bits the failed swap saw, so it ends once a swap finds what it combined."""
    em = ctx.em
    t = op.val.type
    kind_type = llvm_type(t)
    width = element_of(t).width
    word, letter = _WORDS[width]
    head, body, done = em.label("cas.head"), em.label("cas.body"), em.label("cas.done")
    before = em.block
    em.emit(f"br i1 {predicate}, label %{head}, label %{done}")
    em.start_block(head)
    load = f"ld.global.b{width} $0, [ $1 + 0 ];"
    start = em.asm(word, load, f"={letter},l", [(GLOBAL_PTR, address)])
    em.emit(f"br label %{body}")
    em.start_block(body)
    current = em.fresh("cur")
    phi = em.placeholder()
    old = _from_word(ctx, current, t)
    new = _combine(ctx, kind, t, old, value)
    text = f"atom{_qualifiers(op)}.global.cas.b{width}"
    seen = _atom(ctx, text, t, address, [old, new], "true")
    seen_word = _as_word(ctx, seen, t)
    again = em.op(f"icmp ne {word} {seen_word}, {current}")
    em.fill(phi, f"{current} = phi {word} [ {start}, %{head} ], [ {seen_word}, %{body} ]")
    em.emit(f"br i1 {again}, label %{body}, label %{done}")
    em.start_block(done)
    return em.op(f"phi {kind_type} [ poison, %{before} ], [ {seen}, %{body} ]")


def _old_values(ctx: Context, op, t, olds: dict[int, str]) -> list[str]:
    """Every register's old value: from the register that did the atomic, and, when other
    threads hold copies and the result is used, broadcast through the shared scratch."""
    if not isinstance(t, RankedTensorType):
        return _broadcast_scalar(ctx, t, olds[0]) if op.result.has_uses else [olds[0]]
    layout = layout_of(t)
    coords = register_coords(layout)
    first = {}
    for r in olds:
        first.setdefault(coords[r], r)
    registers = [olds[first[c]] for c in coords]
    if not redundant_thread_mask(layout) or not op.result.has_uses:
        return registers
    size = max(element_of(t).width // 8, 1)
    ctx.need_shared(_numel(t) * size)
    offsets = element_offsets(ctx, layout, t.shape, size)
    writer = store_predicate(ctx, t, "true")
    for r in olds:
        predicated(ctx, writer, lambda r=r: shared_store(ctx, olds[r], element_of(t), offsets[r]))
    ctx.em.barrier()
    values = [shared_load(ctx, element_of(t), offset) for offset in offsets]
    ctx.em.barrier()
    return values


def _numel(t) -> int:
    count = 1
    for extent in t.shape:
        count *= extent
    return count


def _broadcast_scalar(ctx: Context, t, old: str) -> str:
    """Thread 0's old value, for every thread (through the scratch)."""
    ctx.need_shared(8)
    em = ctx.em
    writer = store_predicate(ctx, t, "true")
    predicated(ctx, writer, lambda: shared_store(ctx, old, t, "0"))
    em.barrier()
    value = shared_load(ctx, t, "0")
    em.barrier()
    return [value]


def _unique(t) -> list[int]:
    """The registers that do the atomics: the first of each distinct element."""
    if not isinstance(t, RankedTensorType):
        return [0]
    layout = layout_of(t)
    coords = register_coords(layout)
    seen, registers = set(), []
    for r in unique_registers(layout):
        if coords[r] not in seen:
            seen.add(coords[r])
            registers.append(r)
    return registers


@lowers("tt.atomic_rmw")
def _atomic_rmw(ctx: Context, op) -> None:
    t = op.val.type
    kind = RMWOp.keyword(op.atomic_rmw_op)
    scalar = element_of(t)
    if scalar.width not in _WORDS or (
        isinstance(scalar, FloatType) and kind not in ("fadd", "exch", "max", "min")
    ):
        unsupported(op, f"no GPU atomic `{kind}` on {scalar}")
    ptx = _ptx_op(kind, t, ctx.capability)
    ptrs, values = ctx[op.ptr], ctx[op.val]
    masks = ctx[op.mask] if op.mask is not None else None
    masks = ctx.bounds.guard(ctx, op, masks, 1) if ctx.bounds else masks
    olds = {}
    for r in _unique(t):
        predicate = store_predicate(ctx, t, masks[r] if masks is not None else "true")
        if ptx is None:
            olds[r] = _cas_loop(ctx, op, kind, ptrs[r], values[r], predicate)
        else:
            text = f"atom.global{_scope_first(op)}.{ptx}"
            olds[r] = _atom(ctx, text, t, ptrs[r], [values[r]], predicate)
    ctx[op.result] = _old_values(ctx, op, t, olds)


@lowers("tt.atomic_cas")
def _atomic_cas(ctx: Context, op) -> None:
    t = op.val.type
    width = element_of(t).width
    if width not in _WORDS:
        unsupported(op, f"no GPU atomic_cas on {element_of(t)}")
    ptrs, cmps, values = ctx[op.ptr], ctx[op.cmp], ctx[op.val]
    text = f"atom.global{_qualifiers(op)}.cas.b{width}"
    masks = ctx.bounds.guard(ctx, op, None, 1) if ctx.bounds else None
    olds = {}
    for r in _unique(t):
        predicate = store_predicate(ctx, t, masks[r] if masks is not None else "true")
        olds[r] = _atom(ctx, text, t, ptrs[r], [cmps[r], values[r]], predicate)
    ctx[op.result] = _old_values(ctx, op, t, olds)
