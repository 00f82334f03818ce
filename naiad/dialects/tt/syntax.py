"""`tt` syntax: `tt.func` (the function syntax of function.py, as Triton uses it) and the
bodies of the `tt` types."""

from __future__ import annotations

from ...ir import RankedTensorType
from ...ir.asm_syntax import body_parser, custom_syntax
from ..syntax.function import FunctionSyntax
from .types import GLOBAL_ADDRESS_SPACE, PointerType, TensorDescType


@custom_syntax("tt.func")
class FuncSyntax(FunctionSyntax):
    """Triton's `tt.func`: no default dialect (its body spells `tt.return`)."""


@body_parser("tt", "ptr")
def _parse_pointer(parser) -> PointerType:
    """`<pointee>` or `<pointee, address_space>`; `<i8, "descriptor">`, the spelling older
    Triton gave a TMA descriptor parameter (a pointer to the descriptor's bytes in global
    memory, marked `tt.nv_tma_desc`), reads as a global pointer."""
    parser.expect("<")
    pointee = parser.parse_type()
    space = GLOBAL_ADDRESS_SPACE
    if parser.accept(",") and not parser.accept('"descriptor"'):
        space = parser.parse_integer("address space")
    parser.expect(">", "to close the pointer type")
    return PointerType(pointee, space)


@body_parser("tt", "tensordesc")
def _parse_tensor_descriptor(parser) -> TensorDescType:
    """`<64x64xf16>` or `<64x64xf16, #encoding>`: a tensor type without `tensor` (Triton
    3.8's spelling, the one printed); `<tensor<64x64xf16, #encoding>>`, Triton 3.6's, reads
    as the same type."""
    parser.expect("<")
    spelled = parser.accept("tensor")
    if spelled:
        parser.expect("<")
    shape = parser.parse_dimension_list()
    element = parser.parse_type()
    encoding = parser.parse_attribute() if parser.accept(",") else None
    parser.expect(">", "to close the tensor descriptor type")
    if spelled:
        parser.expect(">", "to close the tensor descriptor type")
    return TensorDescType(RankedTensorType(shape, element, encoding))
