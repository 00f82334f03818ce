"""Pointers as addresses: `tt.ptr_to_int`, `tt.int_to_ptr`, and `tt.bitcast` between pointee
types of different sizes.

A pointer's address is the aligned base of its argument plus its offset in bytes:

    %cast = memref.cast %x : memref<*xf32> to memref<?xf32>          (once per function)
    %intptr = memref.extract_aligned_pointer_as_index %cast : memref<?xf32> -> index
    %base = arith.index_cast %intptr : index to i64
    %address = %base + %offset * 4                                 (a linalg.generic on blocks)

A pointer made from an integer points into *memory*: a `memref<?xT>` whose element i lies at
address i * sizeof(T). Upstream's one op that places a typed view at a byte position is
`memref.view`, which shifts a byte buffer; shifting any buffer back by its own address gives
address 0, so memory is made once per function and element type from an empty stack buffer
(the anchor, whose address cancels):

    %alloca = memref.alloca() : memref<0xi8>
    %intptr = memref.extract_aligned_pointer_as_index %alloca : memref<0xi8> -> index
    %shift = arith.subi %c0, %intptr : index
    %view = memref.view %alloca[%shift][%n] : memref<0xi8> to memref<?xf32>
    %memory = memref.cast %view : memref<?xf32> to memref<*xf32>

and the pointer is `Pointer(%memory, address / sizeof(T))`: an address is taken to be aligned
to its pointee, as the GPU requires of every access. The pointer analysis knows no argument for
such a pointer (nor for a bitcast that changes the element size, which goes through its
address), so every access through it gathers or scatters element by element, and every other
pointer keeps its strided views. A loop or an if that carries a pointer with no one argument
on every path carries it as an offset into memory (`memory_offset`, control_flow.py).

With bounds checks, a pointer made from one integer (Triton's grouped GEMM loads one from a
table, then offsets it by blocks) points into memory through a base of its own, a
`builtin.unrealized_conversion_cast` of memory, whose extent is the storage of the argument
holding that address when it is made (bounds_checks.bind_address_extent): an access that
leaves it is reported through that argument, as the interpreter reports it. One made from a
block of integers (each lane may point into another argument), and one into memory no
argument holds, are not checked.
"""

from __future__ import annotations

from ...dialects import memref, tt
from ...dialects.base import bit_width
from ...ir import (
    DYNAMIC,
    MemRefType,
    RankedTensorType,
    UnrankedMemRefType,
    Value,
    create_operation,
    i8,
    i64,
    index,
    is_pointer_like,
)
from . import emit
from .bounds_checks import bind_address_extent
from .conversion import FunctionConversion, Pointer, converts, fail, pointee
from .emit_memory import flat_view

_LARGEST_BYTE = (1 << 63) - 1  # memory's extent: every non-negative i64 address


def storage_bytes(t) -> int:
    """Bytes one element of type `t` occupies in memory (an i1 takes a byte)."""
    return (bit_width(t) + 7) // 8


@converts(tt.PtrToIntOp)
def _ptr_to_int(c: FunctionConversion, op) -> None:
    c.bind(op.result, address(c, c.pointer(op.src), pointee(op.src.type)))


@converts(tt.IntToPtrOp)
def _int_to_ptr(c: FunctionConversion, op) -> None:
    c.bind(op.result, from_address(c, op, c.value(op.src), pointee(op.result.type)))


def address(c: FunctionConversion, pointer: Pointer, element) -> Value:
    """The address (i64, or a block of them) of `pointer`, whose pointee is `element`."""
    aligned = c.emit(memref.ExtractAlignedPointerAsIndexOp(flat_view(c, pointer.base, element)))
    base = emit.op(c, "arith.index_cast", [aligned.results[0]], i64)
    size = emit.scalar_constant(c, storage_bytes(element), i64)

    def at(offset: Value) -> Value:
        return emit.op(c, "arith.addi", [base, emit.op(c, "arith.muli", [offset, size], i64)], i64)

    offsets = pointer.offset
    if not isinstance(offsets.type, RankedTensorType):
        return at(offsets)
    return emit.elementwise(c, [offsets], [offsets.type], lambda xs: [at(xs[0])])[0]


def from_address(c: FunctionConversion, op, addresses: Value, element) -> Pointer:
    """The pointer to `element` at `addresses` (i64, or a block of them), into memory."""
    if is_pointer_like(element):
        fail(op, f"'{op.name}': a pointer to pointers has no lowering to Linalg")
    size = emit.scalar_constant(c, storage_bytes(element), i64)

    def offset(at: Value) -> Value:
        return emit.op(c, "arith.divsi", [at, size], i64)

    if isinstance(addresses.type, RankedTensorType):
        offsets = emit.elementwise(c, [addresses], [addresses.type], lambda xs: [offset(xs[0])])
        return Pointer(memory(c, element), offsets[0])
    return Pointer(_checked_memory(c, addresses, element), offset(addresses))


def _checked_memory(c: FunctionConversion, at: Value, element) -> Value:
    """Memory seen through a base of its own, checked against the argument holding the
    address `at` (see the module doc); plain memory without bounds checks."""
    plain = memory(c, element)
    if not c.extents:
        return plain
    own = create_operation(
        "builtin.unrealized_conversion_cast",
        [plain],
        [UnrankedMemRefType(element)],
        location=c.builder.location,
    )
    base = c.emit(own).results[0]
    bind_address_extent(c, base, at, storage_bytes(element))
    return base


def memory(c: FunctionConversion, element) -> Value:
    """All of memory as `memref<*xT>` (element i at address i * sizeof(T)), made once per
    function and element type at the function's entry, so that every region may use it."""
    made = c.memories.get(element)
    if made is None:
        with c.builder.at_start(c.entry_block):
            anchor = c.emit(memref.AllocaOp(MemRefType([0], i8))).results[0]
            at = c.emit(memref.ExtractAlignedPointerAsIndexOp(anchor)).results[0]
            shift = emit.op(c, "arith.subi", [emit.index_constant(c, 0), at], index)
            count = emit.index_constant(c, _LARGEST_BYTE // storage_bytes(element))
            typed = MemRefType([DYNAMIC], element)
            view = c.emit(memref.ViewOp(anchor, shift, [count], typed)).results[0]
            made = c.emit(memref.CastOp(view, UnrankedMemRefType(element))).results[0]
        c.memories[element] = made
    return made


def memory_offset(c: FunctionConversion, pointer: Pointer, element) -> Value:
    """The offset into memory (address / sizeof(T)) of `pointer`, whose pointee is `element`:
    how a pointer that a loop or an if carries is kept when it has no one argument."""
    if is_memory(c, pointer.base):
        return pointer.offset
    size = emit.scalar_constant(c, storage_bytes(element), i64)
    addresses = address(c, pointer, element)
    if not isinstance(addresses.type, RankedTensorType):
        return emit.op(c, "arith.divsi", [addresses, size], i64)
    divide = lambda xs: [emit.op(c, "arith.divsi", [xs[0], size], i64)]  # noqa: E731
    return emit.elementwise(c, [addresses], [addresses.type], divide)[0]


def is_memory(c: FunctionConversion, base: Value) -> bool:
    """Whether `base` (a Pointer's) is memory rather than a kernel argument."""
    return plain_memory(c, base) is not None


def plain_memory(c: FunctionConversion, base: Value) -> Value | None:
    """The memory `base` is (or sees through a base of its own), None for an argument."""
    made = base.defining_op
    if made is not None and made.name == "builtin.unrealized_conversion_cast":
        base = made.operands[0]
    return base if any(base is made for made in c.memories.values()) else None
