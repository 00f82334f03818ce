"""Pointer arithmetic: every pointer's offset from its base is computed in `i64` elements.

    tt.addptr %p, %off     offset(p) + sext(off)    (a scalar add, or a linalg.generic)
    arith.select %c, %p, %q  a select of the offsets (both point into one argument); of the
                           addresses, into memory, for pointers into different arguments
    tt.bitcast %p          the same offsets into the same argument, when the element size is
                           unchanged; else the pointer at the same address (convert_addresses.py)

The structured loads and stores do not read these offsets (they build views from the pointer
analysis); what they leave unused is dead code, removed after the conversion.
"""

from __future__ import annotations

from ...dialects import arith, tt
from . import emit, emit_memory
from .conversion import FunctionConversion, Pointer, converts, is_pointer, pointee
from .convert_addresses import address, from_address, is_memory, plain_memory, storage_bytes
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
    a, b = c.pointer(op.true_value), c.pointer(op.false_value)
    base = a.base
    if a.base is not b.base:
        # Two pointers made from integers: memory, unchecked (each had its own extent).
        base = plain_memory(c, a.base)
        if base is None or base is not plain_memory(c, b.base):
            # Into different arguments (`tl.where(c, x_ptr, y_ptr)`): the address chosen, a
            # pointer into memory (convert_addresses.py), read element by element.
            element = pointee(op.result.type)
            chosen = emit.select(
                c, c.value(op.condition), address(c, a, element), address(c, b, element)
            )
            c.bind(op.result, from_address(c, op, chosen, element))
            return
    offset = emit.select(c, c.value(op.condition), a.offset, b.offset)
    c.bind(op.result, Pointer(base, offset))


@converts(tt.BitcastOp)
def _bitcast(c: FunctionConversion, op) -> None:
    if not is_pointer(op.result):
        convert_elementwise(c, op)
        return
    source, target = pointee(op.src.type), pointee(op.result.type)
    pointer = c.pointer(op.src)
    if source is target:
        c.bind(op.result, pointer)
    elif storage_bytes(source) == storage_bytes(target) and not is_memory(c, pointer.base):
        base = emit_memory.retype_base(c, pointer.base, target)
        c.bind(op.result, Pointer(base, pointer.offset))
    else:
        c.bind(op.result, from_address(c, op, address(c, pointer, source), target))
