"""A floor on CTAs per SM for memory-bound kernels (`.minnctapersm`), from register pressure.

The linkers (nvJitLink, the driver's cuLink*) compile PTX as relocatable code, and there ptxas
spends registers more freely than in the whole-program compile Triton uses: layer norm over rows
of 1024 takes 48 registers instead of 32 (10 CTAs of 128 threads per SM instead of 16), over
rows of 8192 80 instead of 60 (3 CTAs of 256 instead of 4). A memory-bound kernel's speed is the
bytes it keeps in flight, which is occupancy times the loads in flight per thread, so those
registers cost speed where rows are short. A floor on CTAs per SM is a cap on registers that
ptxas honours in both compiles (`-maxrregcount` is ignored in the relocatable one), and below
the cap it still issues a loop iteration's loads together where they fit (layer norm 8192 at
64 registers: 4 CTAs, its four loads per thread still in flight at once).

The floor comes from an estimate of the registers the kernel needs: the most 32-bit words of
data tensors (floats; integers and pointers not computed from indices) live at once in any
block (loop bodies and branches included), where a value made by an elementwise op for one
elementwise user is transient (both run register by register, so it never lives whole), plus
`ADDRESS_ROOM` for addresses, masks, indices and loop counters. The CTAs that many registers
allow, capped by the 2048 threads of an SM, is the floor. Only kernels made of the ops of
memory-bound kernels (`_ESTIMATED`: loads, stores, elementwise math, reductions, control flow)
get one: dots and shared buffers have their own register plans, and what sorts, scans, gathers
or atomics hold is beyond this estimate (the language tests' sort, underestimated, spilled).
"""

from __future__ import annotations

import itertools

from ....ir import RankedTensorType
from ....ir.traits import Elementwise
from ....ir.types import FloatType
from .emitter import bit_width
from .indexing import layout_of

ADDRESS_ROOM = 16  # 32-bit registers for addresses, masks, indices and counters
# Beyond this many registers per thread, a kernel holds enough per thread to keep loads in
# flight, and the estimate's error (what ptxas hoists across loop iterations) grows: no floor.
# Layer norm's backward partial sums (two 32-element accumulators and loads per thread) took
# 154 registers uncapped and spilled under the floor an estimate of 102 gave.
LEAN_REGISTERS = 64
REGISTERS_PER_SM = 65536
THREADS_PER_SM = 2048
MAX_CTAS_PER_SM = 32
# The ops of memory-bound kernels. Others (dots and shared buffers with their own register
# plans; scans, sorts built of reshapes, joins, gathers, atomics) keep ptxas's own choice.
_ESTIMATED = frozenset(
    {
        "scf.for",
        "scf.if",
        "scf.while",
        "scf.yield",
        "scf.condition",
        "tt.addptr",
        "tt.broadcast",
        "tt.expand_dims",
        "tt.extern_elementwise",
        "tt.fp_to_fp",
        "tt.get_num_programs",
        "tt.get_program_id",
        "tt.load",
        "tt.make_range",
        "tt.precise_divf",
        "tt.precise_sqrt",
        "tt.reduce",
        "tt.reduce.return",
        "tt.return",
        "tt.splat",
        "tt.store",
        "ttg.convert_layout",
    }
)
_RENAMED = frozenset(
    {"arith.constant", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans"}
)
_INDEX_SOURCES = frozenset({"tt.make_range", "tt.splat", "arith.constant"})
_ADDRESS_ARITHMETIC = _RENAMED | {"tt.addptr"}


def min_ctas_per_sm(func, num_warps: int) -> int | None:
    """The `.minnctapersm` floor for kernel `func`, or None where it gets none."""
    if not all(_estimated(op) for op in _all_nested(func)):
        return None
    threads = 32 * num_warps
    need = max(32, _pressure(func.regions[0].block, {})[0] + ADDRESS_ROOM)
    per_thread = -(-need // 8) * 8  # ptxas allocates registers in units of 8 per thread
    if per_thread > LEAN_REGISTERS:
        return None
    ctas = min(
        MAX_CTAS_PER_SM, THREADS_PER_SM // threads, REGISTERS_PER_SM // (per_thread * threads)
    )
    return ctas if ctas > 1 else None


def _estimated(op) -> bool:
    """Whether the estimate knows what `op` keeps in registers."""
    return op.name in _ESTIMATED or op.name.startswith(("arith.", "math."))


def _nested_ops(op):
    for region in op.regions:
        for block in region.blocks:
            yield from block.ops


def _words(value, memo: dict) -> int:
    """32-bit registers per thread holding `value`; none for splats, constants and shape ops
    (one value, or another's registers renamed) and for integers and pointers computed only
    from ranges, splats and constants (indices, their masks and addresses: folded into each
    vector's address arithmetic). Pointers take two words, other integers one."""
    t = value.type
    if not isinstance(t, RankedTensorType):
        return 0
    owner = value.defining_op
    if owner is not None and owner.name in _RENAMED:
        return 0
    if isinstance(t.element_type, FloatType):
        bits = bit_width(t)  # 16-bit floats travel packed in pairs
    elif _index_like(value, memo):
        return 0
    else:
        bits = max(bit_width(t), 32)
    return -(-layout_of(t).in_dim_size("register") * bits // 32)


def _index_like(value, memo: dict) -> bool:
    """An integer or pointer tensor made only from ranges, splats and constants by integer
    and pointer arithmetic (not exchanged between threads, loaded or carried by a loop).
    `memo` holds the answers so far: arithmetic DAGs (Philox rounds) reuse values often."""
    if not isinstance(value.type, RankedTensorType):
        return True  # a scalar operand (a loop counter, an argument)
    known = memo.get(id(value))
    if known is not None:
        return known
    owner = value.defining_op
    if owner is None or isinstance(value.type.element_type, FloatType):
        answer = False
    elif owner.name in _INDEX_SOURCES:
        answer = True
    elif not owner.name.startswith("arith.") and owner.name not in _ADDRESS_ARITHMETIC:
        answer = False
    else:
        answer = all(_index_like(operand, memo) for operand in owner.operands)
    memo[id(value)] = answer
    return answer


def _transient(value) -> bool:
    """Made by an elementwise op for one elementwise user: consumed register by register."""
    users = value.users
    if len(users) != 1:
        return False
    (user,) = users
    return value.defining_op.has_trait(Elementwise) and user.has_trait(Elementwise)


def _pressure(block, memo: dict) -> tuple[int, int]:
    """(the most words of data tensors live at once in `block`, nested blocks included;
    the words of those read from enclosing blocks). Live after op i: the values made at or
    before i and read after it, and op i's own results."""
    ops = list(block.ops)
    position = {id(op): i for i, op in enumerate(ops)}
    last_use: dict[int, int] = {}
    live_in: dict[int, int] = {}  # words of the values from enclosing blocks read here
    for i, op in enumerate(ops):
        nested = list(_all_nested(op))
        made_inside = {id(v) for inner in nested for v in inner.results}
        made_inside.update(id(a) for r in op.regions for b in r.blocks for a in b.arguments)
        for user in [op, *nested]:
            for operand in user.operands:
                if id(operand) in made_inside:
                    continue
                last_use[id(operand)] = i
                owner = operand.defining_op
                inside = owner is not None and id(owner) in position
                if not inside and operand not in block.arguments:
                    live_in[id(operand)] = _words(operand, memo)
    base = sum(live_in.values())
    change = [0] * (len(ops) + 1)  # live words change by these at each op
    for arg in block.arguments:  # carried into the block: live until their last read
        change[0] += _words(arg, memo)
        change[last_use.get(id(arg), 0)] -= _words(arg, memo)
    for i, op in enumerate(ops):
        for result in op.results:
            if not _transient(result):
                change[i] += _words(result, memo)
                change[max(i + 1, last_use.get(id(result), i))] -= _words(result, memo)
    live = list(itertools.accumulate(change, initial=base))[1:]
    best = max(live)
    for i, op in enumerate(ops):
        around = live[i] - sum(_words(r, memo) for r in op.results if not _transient(r))
        for region in op.regions:  # a loop's results are its carried values, counted inside
            for inner in region.blocks:
                inner_best, inner_base = _pressure(inner, memo)
                best = max(best, around + inner_best - inner_base)
    return best, base


def _all_nested(op):
    for inner in _nested_ops(op):
        yield inner
        yield from _all_nested(inner)
