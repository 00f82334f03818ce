"""Scalar pointer arithmetic: `tt.addptr`, `tt.int_to_ptr`, `tt.ptr_to_int`.

An offset counts elements of the pointee, read signed (as the reference widens it to int64); an
`i1` element takes one byte, as in memory.
"""

from __future__ import annotations

from ....ir import RankedTensorType, element_type
from .registry import lowers, unsupported
from .types import I64, llvm_type


@lowers("tt.addptr")
def addptr(b, op, operands, ctx):
    ptr, offset = operands
    pointee = getattr(element_type(op.ptr.type), "pointee_type", None)
    if pointee is None or isinstance(pointee, RankedTensorType):
        unsupported(op, f"'tt.addptr' on {op.ptr.type} is not scalar pointer arithmetic")
    if offset.type.width < 64:
        offset = b.sext(offset, I64)
    return b.gep(ptr, [offset], source_etype=llvm_type(pointee))


@lowers("tt.int_to_ptr")
def int_to_ptr(b, op, operands, ctx):
    return b.inttoptr(operands[0], llvm_type(op.results[0].type))


@lowers("tt.ptr_to_int")
def ptr_to_int(b, op, operands, ctx):
    return b.ptrtoint(operands[0], llvm_type(op.results[0].type))
