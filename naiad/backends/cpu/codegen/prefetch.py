"""A loop's next load, prefetched: the block the next iteration reads, asked for one ahead.

Programs that stride over rows (`for row in tl.range(pid, n_rows, num_programs)`, tutorial 02's
softmax) read one row of 4 KiB per iteration, each a page away from the last: the hardware
prefetchers follow a stream within a page and do not guess the next row, so every row's first
pass waits on memory. With 4096 rows run as one program each in order, the same softmax ran
in 2.1 ms on one Zen 4 core; with 64 programs striding, in 3.3 ms (bench/RESULTS.md).

So a block read from a kernel argument in an `scf.for`, at an offset that is plain scalar
arithmetic of the induction variable (`row * stride`), has the same block at the next
iteration's offset prefetched where it is read, one line of 64 bytes after another:

    offset      = f(iv)            (lowered as usual)
    next_offset = f(iv + step)     (the same ops lowered again, iv replaced)
    prefetch(base + next_offset + 64 k)  for each line k of the block

Only blocks of at most `MAX_LINES` lines whose rows are contiguous are prefetched, and only those
that are read (loads' copies and in-place reads), never stored to: a store's lines are either
streamed past the caches or written whole soon. An offset that depends on a value the loop
carries (`ptrs += BLOCK`), or on any op but integer arithmetic, is left to the hardware: its next
value is not known before the iteration's end. The last iteration prefetches nothing: a prefetch
never faults, but one into an unmapped page still walks the page tables, and 4096 softmax
programs of one row each, prefetching the row after theirs, ran 2.16 -> 2.68 ms. Nor does an
iteration whose next block follows on from its own (`_follows_on` when compiling, `_apart` at
run time): the hardware streams it already, and a burst of prefetches only holds up the loads
behind it.
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import Value
from ....ir.rewriter import constant_value
from ..lower_scalar.registry import intrinsic
from .views import View, element_bytes

LINE_BYTES = 64
# The most lines a block may span to be prefetched (a 4 KiB row is 64).
MAX_LINES = 128
# Integer ops that are recomputed for the next iteration (none divides: nothing can trap).
_ARITHMETIC = frozenset(
    f"arith.{name}"
    for name in [
        "constant",
        "index_cast",
        "index_castui",
        "addi",
        "subi",
        "muli",
        "minsi",
        "maxsi",
        "minui",
        "maxui",
        "extsi",
        "extui",
        "trunci",
        "shli",
        "select",
    ]
)
I32 = ir.IntType(32)
I64 = ir.IntType(64)


def prefetch_next_iteration(fl, op, view: View) -> None:
    """Prefetch the block `view` (bound to `op`, a `memref.reinterpret_cast` of a kernel
    argument) where the next iteration of the innermost enclosing `scf.for` reads it, where
    it qualifies (module docstring)."""
    offsets = op.mixed_offsets
    if len(offsets) != 1 or not isinstance(offsets[0], Value) or _lines(view) is None:
        return
    if not _read_only(op.results[0]):
        return
    if not fl.loops or op.parent is not fl.loops[-1].op.body:
        return
    loop = fl.loops[-1]
    if loop.interleaved:  # the next call reads the next program's block, in order
        return
    chain = _iteration_chain(offsets[0], loop.op)
    if not chain or _follows_on(chain, loop.op, view):
        return
    b = fl.builder
    next_iv = loop.following(b)
    following = _recomputed(fl, chain, loop.op.induction_var, next_iv, offsets[0])
    with b.if_then(b.and_(loop.runs(b, next_iv), _apart(b, view, following))):
        _prefetch_lines(fl, View(view.pointer, view.element, following, view.sizes, view.strides))


def _apart(b: ir.IRBuilder, view: View, following: ir.Value) -> ir.Value:
    """Whether the next block (at offset `following`) does not start within or right after
    this one (i1): a stream the hardware prefetchers follow already. A softmax whose single
    program walks the rows in order ran 1.9 -> 2.2 ms with each next row prefetched."""
    first = view.linear(b, [0] * view.rank)
    last = view.linear(b, [n - 1 for n in view.sizes])
    first, last = (ir.Constant(I64, v) if isinstance(v, int) else v for v in (first, last))
    ahead = b.sub(following, first)
    span = b.add(b.sub(last, first), ir.Constant(I64, 1))
    return b.icmp_unsigned(">", ahead, span)  # a block behind this one is far ahead unsigned


def _read_only(value: Value) -> bool:
    """Whether every use of the view `value` only reads it: copied from, sliced, loaded."""
    for user, index in value.uses:
        if user.name == "memref.subview":
            if not _read_only(user.results[0]):
                return False
        elif not (user.name == "memref.copy" and index == 0) and user.name != "memref.load":
            return False
    return True


def _lines(view: View) -> int | None:
    """The lines a block of static sizes with contiguous rows spans (one more per row for a
    row that starts mid-line), or None when it does not qualify."""
    size = element_bytes(view.element)
    if size is None or view.rank == 0 or view.strides[-1] != 1:
        return None
    if not all(isinstance(n, int) and n > 0 for n in view.sizes):
        return None
    rows = 1
    for n in view.sizes[:-1]:
        rows *= n
    lines = rows * (-(-view.sizes[-1] * size // LINE_BYTES) + 1)
    return lines if lines <= MAX_LINES else None


def _iteration_chain(value: Value, loop) -> list | None:
    """The ops of the loop's body that compute `value` from its induction variable, in order;
    None when `value` does not depend on it or depends on it through anything but integer
    arithmetic (a value the loop carries among them)."""
    chain: dict = {}
    depends: dict[Value, bool] = {}

    def visit(v: Value) -> bool:
        if v is loop.induction_var:
            return True
        if v in depends:
            return depends[v]
        op = v.defining_op
        if op is None:
            if v.parent_block is loop.body:  # carried by the loop: known at the iteration's end
                raise _Unknown
            return False  # an argument of the kernel or of an outer loop: the same next time
        if op.parent is not loop.body:
            depends[v] = False  # made before the loop
            return False
        found = any([visit(operand) for operand in op.operands])
        if found and (op.name not in _ARITHMETIC or op.regions):
            raise _Unknown
        if found:
            chain[op] = None
        depends[v] = found
        return found

    try:
        return list(chain) if visit(value) else None
    except _Unknown:
        return None


# Ops through which an offset stays the induction variable plus what the loop does not change.
_SHIFTS = frozenset(f"arith.{name}" for name in ("index_cast", "index_castui", "extsi", "extui"))


def _follows_on(chain: list, loop, view: View) -> bool:
    """Whether the next iteration's block starts where this one ends: a 1-d block of `n`
    elements at `iv + c`, the loop stepping by the constant `n` (`for off in range(0, N,
    BLOCK)`). The hardware prefetchers follow such a stream already, and a row of 1024
    elements read in one iteration made four blocks of prefetches that never ran."""
    if view.rank != 1:
        return False
    moving = {loop.induction_var, *(result for op in chain for result in op.results)}
    for op in chain:
        if op.name not in _SHIFTS and op.name != "arith.addi":
            return False
        if sum(operand in moving for operand in op.operands) != 1:
            return False
    loop_step = constant_value(loop.step)
    return getattr(loop_step, "value", None) == view.sizes[0]


class _Unknown(Exception):
    """The next iteration's offset is not computable where the block is read."""


def _recomputed(fl, chain: list, variable: Value, value: ir.Value, offset: Value) -> ir.Value:
    """`offset` computed again with `variable` bound to `value`; the bindings are restored
    after."""
    saved = {v: fl.values[v] for op in chain for v in op.results}
    saved[variable] = fl.values[variable]
    fl.bind(variable, value)
    try:
        for op in chain:
            fl.lower_scalar(op)
        return fl.value(offset)
    finally:
        fl.values.update(saved)


def _prefetch_lines(fl, view: View) -> None:
    """A read prefetch, to every level of cache, of each line each row of `view` touches."""
    b = fl.builder
    pointer = ir.PointerType()
    prefetch = intrinsic(fl.module, "llvm.prefetch.p0", ir.VoidType(), [pointer, I32, I32, I32])
    row_bytes = view.sizes[-1] * element_bytes(view.element)
    rows = [[]]
    for n in view.sizes[:-1]:
        rows = [index + [i] for index in rows for i in range(n)]
    for index in rows:
        start = _address(b, view, index + [0])
        for at in [*range(0, row_bytes, LINE_BYTES), row_bytes - 1]:
            line = b.gep(start, [ir.Constant(I64, at)], source_etype=ir.IntType(8))
            b.call(prefetch, [line, I32(0), I32(3), I32(1)])


def _address(b: ir.IRBuilder, view: View, indices) -> ir.Value:
    """The address of an element of `view`, without `inbounds`: the next block may lie past
    the end of its array."""
    offset = view.linear(b, indices)
    offset = ir.Constant(I64, offset) if isinstance(offset, int) else offset
    return b.gep(view.pointer, [offset], source_etype=view.element)
