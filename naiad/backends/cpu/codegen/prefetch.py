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
programs of one row each, prefetching the row after theirs, ran 2.16 -> 2.68 ms.
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import Value
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
    argument) at the next iteration of the innermost enclosing `scf.for`, where it qualifies
    (module docstring)."""
    if not fl.loops or not _read_only(op.results[0]):
        return
    loop_op, next_iv, more = fl.loops[-1]
    body = loop_op.body
    if op.parent is not body or len(op.mixed_offsets) != 1:
        return
    (offset,) = op.mixed_offsets
    lines = _lines(view)
    if not isinstance(offset, Value) or lines is None:
        return
    chain = _iteration_chain(offset, loop_op.induction_var, body)
    if not chain:
        return
    with fl.builder.if_then(more):  # past the last row, a page that may not be mapped
        following = _recomputed(fl, chain, loop_op.induction_var, next_iv, offset)
        _prefetch_lines(fl, View(view.pointer, view.element, following, view.sizes, view.strides))


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


def _iteration_chain(value: Value, iv: Value, body) -> list | None:
    """The ops of `body` that compute `value` from the induction variable `iv`, in order; None
    when `value` does not depend on `iv` or depends on it through anything else."""
    chain: dict = {}
    depends: dict[Value, bool] = {}

    def visit(v: Value) -> bool:
        if v is iv:
            return True
        if v in depends:
            return depends[v]
        op = v.defining_op
        if op is None:
            if v.parent_block is body:  # a value the loop carries: known at the iteration's end
                raise _Unknown
            return False  # an argument of the kernel or of an outer loop: the same next time
        if op.parent is not body:
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


class _Unknown(Exception):
    """The next iteration's offset is not computable where the block is read."""


def _recomputed(fl, chain: list, iv: Value, next_iv: ir.Value, offset: Value) -> ir.Value:
    """`offset` computed again with `iv` bound to `next_iv`; the bindings are restored."""
    saved = {v: fl.values[v] for op in chain for v in op.results}
    saved[iv] = fl.values[iv]
    fl.bind(iv, next_iv)
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
