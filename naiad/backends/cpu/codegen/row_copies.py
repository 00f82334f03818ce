"""Copies between views that cannot overlap, by rows: one `llvm.memcpy.inline` per row.

Two kinds of copy cannot overlap: `memref.copy`'s (its contract, on which MLIR's own lowering to
memcpy relies too), and a scratch buffer stored into memory the kernel was given (the arena is
Naiad's own: `in_scratch`). A row is the longest run of trailing dimensions dense in both views,
of static sizes; the loops over the dimensions before it stay, and the row moves as whole
bytes, expanded by LLVM into vector moves, whatever the element type:

    memref<?x64xf16, strided<[64, 1]>>:   for i < rows: memcpy.inline(dst + 128 i, src + 128 i, 128)

The element loop it replaces has a dynamic trip count and two pointers LLVM cannot tell apart,
so LLVM vectorized it behind run-time alias checks with a scalar remainder: tutorial 06's
attention forward makes four such copies (its Q, K and V tiles in, its output tile out), and
they cost a tenth of LLVM's time on it. Rows past `INLINE_COPY_BYTES` (and copies without a
dense row) keep the element loop, whose vectorized body LLVM makes as short as a long run of
inline moves.
"""

from __future__ import annotations

from llvmlite import ir

from .function import FunctionLowering
from .loops import I64, loop_nest
from .views import View, element_bytes

INLINE_COPY_BYTES = 1024


def copy_rows(b: ir.IRBuilder, source, target) -> bool:
    """Copy `source` into `target` (views of the same sizes that do not overlap) a row at a
    time, and say so; False, with nothing emitted, when they have no dense row that fits."""
    if type(source) is not View or type(target) is not View or source.element != target.element:
        return False
    size = element_bytes(source.element)
    if size is None or target.rank == 0:
        return False
    first, step = target.rank, 1  # the row: dimensions first.. of `step` elements in all
    for d in reversed(range(target.rank)):
        extent = target.sizes[d]
        dense = source.strides[d] == step and target.strides[d] == step
        if not isinstance(extent, int) or not dense or step * extent * size > INLINE_COPY_BYTES:
            break
        first, step = d, step * extent
    if first == target.rank:
        return False
    with loop_nest(b, target.sizes[:first], name="row") as outer:
        at = outer + [0] * (target.rank - first)
        _memcpy_inline(b, target.address(b, at), source.address(b, at), step * size)
    return True


def in_scratch(fl: FunctionLowering, view) -> bool:
    """Whether `view` is a buffer of the program's scratch arena (function.py's `buffer`)."""
    pointer = getattr(view, "pointer", None)
    return isinstance(pointer, ir.GEPInstr) and pointer.pointer is fl.scratch


def _memcpy_inline(b: ir.IRBuilder, target: ir.Value, source: ir.Value, size: int) -> None:
    name = "llvm.memcpy.inline.p0.p0.i64"
    function = b.module.globals.get(name)
    if function is None:
        pointer = ir.PointerType()
        signature = ir.FunctionType(ir.VoidType(), [pointer, pointer, I64, ir.IntType(1)])
        function = ir.Function(b.module, signature, name)
    b.call(function, [target, source, ir.Constant(I64, size), ir.IntType(1)(0)])
