"""Pointer arithmetic: every pointer's offset from its base is computed in `i64` elements.

    tt.addptr %p, %off     offset(p) + sext(off)    (a scalar add, or a linalg.generic)
    arith.select %c, %p, %q  a select of the offsets (both point into one argument)
    tt.bitcast %p          the same offsets into the same argument, when the element size is
                           unchanged

The structured loads and stores do not read these offsets (they build views from the pointer
analysis); what they leave unused is dead code, removed after the conversion.
"""

from __future__ import annotations

from ...dialects import arith, tt
from ...dialects.base import bit_width
from . import emit, emit_memory
from .conversion import FunctionConversion, Pointer, converts, fail, is_pointer, pointee
from .convert_elementwise import convert_elementwise


@converts(tt.AddPtrOp)
def _addptr(c: FunctionConversion, op) -> None:
    pointer = c.pointer(op.ptr)
    offset = emit.add_offsets(c, pointer.offset, c.value(op.offset))
    c.bind(op.result, Pointer(pointer.base, offset))


@converts(arith.SelectOp)
def _select(c: FunctionConversion, op) -> None:
    if not is_pointer(op.result):
        convert_elementwise(c, op)
        return
    if c.analysis.base_of(op.result) is None:
        fail(op, "a select between pointers into different arguments has no lowering to Linalg")
    a, b = c.pointer(op.true_value), c.pointer(op.false_value)
    offset = emit.select(c, c.value(op.condition), a.offset, b.offset)
    c.bind(op.result, Pointer(a.base, offset))


@converts(tt.BitcastOp)
def _bitcast(c: FunctionConversion, op) -> None:
    if not is_pointer(op.result):
        convert_elementwise(c, op)
        return
    source, target = pointee(op.src.type), pointee(op.result.type)
    if source is not target and _storage_bytes(source) != _storage_bytes(target):
        fail(
            op,
            f"a pointer cast from {source} to {target} changes the element size, which the "
            "Linalg lowering does not support yet",
        )
    pointer = c.pointer(op.src)
    base = pointer.base if source is target else emit_memory.retype_base(c, pointer.base, target)
    c.bind(op.result, Pointer(base, pointer.offset))


def _storage_bytes(t) -> int:
    """Bytes one element occupies in memory (an i1 takes a byte)."""
    return (bit_width(t) + 7) // 8


@converts(tt.IntToPtrOp, tt.PtrToIntOp)
def _integer_pointer(c: FunctionConversion, op) -> None:
    fail(op, f"'{op.name}': pointers made from integers have no lowering to Linalg")
