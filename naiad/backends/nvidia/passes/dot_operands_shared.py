"""Dot operands through explicit shared-memory buffers, sliced along K.

An `mma.sync` operand is read from shared memory by `ldmatrix`. As one conversion
(`ttg.convert_layout` to `#ttg.dot_op`), every register of the operand is loaded before the
dot's first instruction: on a 128x256x64 f16 tile, 128 accumulator registers and 128 operand
registers per thread, and the kernel spills. As Triton does, the conversion becomes a buffer
(`ttg.local_alloc`) and loads from it (`ttg.local_load`), and the dot is cut along K into dots
of one instruction's depth, each loading the slices it multiplies (`ttg.memdesc_subslice`):
only one slice of each operand is live at a time, and the next slice's `ldmatrix` overlaps
the current `mma`.

    %a = ttg.convert_layout %x : tensor<128x64xf16, #blocked> -> tensor<128x64xf16, #dot_a>
    %b = ttg.convert_layout %y : tensor<64x256xf16, #blocked1> -> tensor<64x256xf16, #dot_b>
    %d = tt.dot %a, %b, %c
    ==>
    %sa = ttg.local_alloc %x : (tensor<128x64xf16, #blocked>) -> !ttg.memdesc<128x64xf16, ...>
    %sb = ttg.local_alloc %y : ...
    %a0 = ttg.memdesc_subslice %sa[0, 0] : ... -> !ttg.memdesc<128x16xf16, ..., 128x64>
    %l0 = ttg.local_load %a0 : ... -> tensor<128x16xf16, #dot_a>
    ...                                                       (the same for B: [0, 0])
    %d0 = tt.dot %l0, %r0, %c
    ... three more slices ...  %d = tt.dot %l3, %r3, %d2

The shared layout is the one the `ldmatrix` lowering reads best (ldmatrix.operand_encoding);
a 32-bit (tf32) operand stored with its rows along M or N, which `ldmatrix` cannot read, is
read from its buffer one element per register. Other conversions (fp8 operands upcast in
registers, chained dots whose operand comes from an accumulator) stay conversions. Legal
always: the sum over K is the same sum in the same order, slice after slice, as the one dot's
instruction sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects import tt, ttg
from ....dialects.ttg.attributes import (
    SHARED_MEMORY,
    DotOperandEncodingAttr,
    NvidiaMmaEncodingAttr,
)
from ....dialects.ttg.types import MemDescType
from ....ir import DenseArrayAttr, Operation, register_pass
from ....ir.passes import Pass
from ....ir.types import i32
from ..lowering.ldmatrix import fragment_dims, operand_encoding, plan_ldmatrix
from .operand_buffers import operand_buffer


def operand_through_shared(convert: Operation) -> Operation | None:
    """Replace a conversion into an `mma.sync` operand by a buffer and a load of it (see the
    module doc); the `ttg.local_load`, or None when the conversion stays."""
    src_t, dst_t = convert.src.type, convert.result.type
    if not isinstance(dst_t.encoding, DotOperandEncodingAttr):
        return None
    if plan_ldmatrix(src_t, dst_t) is not None:
        encoding = operand_encoding(src_t, dst_t)
    elif _element_operand(src_t, dst_t):
        encoding = operand_encoding(src_t, dst_t, element_loads=True)
    else:
        return None
    memdesc = MemDescType(dst_t.shape, dst_t.element_type, encoding, SHARED_MEMORY)
    at = convert.location
    trans = _transposed_source(convert)
    if trans is not None:  # store the tensor as it was loaded, read it transposed
        natural = memdesc.clone(
            shape=trans.src.type.shape, encoding=_permuted(encoding, [1, 0]), alloc_shape=None
        )
        buffer = operand_buffer(trans.src, natural, at)
        view = ttg.MemDescTransOp(
            buffer, order=DenseArrayAttr(i32, [1, 0]), result=memdesc, location=at
        )
        convert.parent.insert_before(view, convert)
        buffer = view.result
    else:
        buffer = operand_buffer(convert.src, memdesc, at)
    load = ttg.LocalLoadOp(buffer, result=dst_t, location=at)
    convert.parent.insert_before(load, convert)
    convert.result.replace_all_uses_with(load.result)
    convert.erase()
    if trans is not None:
        trans.erase()  # read by nothing now: the load it transposed has the buffer alone
    return load


def _element_operand(src_t, dst_t) -> bool:
    """A 32-bit (tf32) operand `ldmatrix` cannot load because its rows run along M or N (B
    stored row-major): through a buffer all the same, read one element per register, so
    that its dot is sliced and its load pipelined like the others."""
    if isinstance(src_t.encoding, NvidiaMmaEncodingAttr | DotOperandEncodingAttr):
        return False
    return fragment_dims(dst_t) is not None and dst_t.element_type.width == 32


def _transposed_source(convert: Operation) -> Operation | None:
    """The `tt.trans` of a 2-D tensor that only this conversion reads (attention's K^T): the
    tensor is stored untransposed, so that a load of it can be copied into the buffer as it
    comes (the pipeliner's copies), and read through a transposed view."""
    trans = convert.src.defining_op
    if not isinstance(trans, tt.TransOp) or not trans.result.has_one_use:
        return None
    if len(trans.src.type.shape) != 2 or list(trans.order.values) != [1, 0]:
        return None
    return trans


def _permuted(encoding, order: list[int]):
    """A swizzled shared encoding of the dimensions permuted by `order` (its own inverse
    for 2-D): the same element -> offset map, each dimension renamed."""
    return type(encoding)(
        encoding.vec,
        encoding.per_phase,
        encoding.max_phase,
        [order[d] for d in encoding.order],
    )


def instruction_depth(element_bits: int) -> int:
    """K of one `mma.sync` (m16n8k16 for 16-bit operands, k32 for 8-bit, k8 for tf32)."""
    return 256 // element_bits


def slice_dot(dot: Operation) -> None:
    """Cut `dot` along K into dots of one instruction's depth when both operands are whole
    loads of buffers read by nothing else (see the module doc)."""
    a, b = dot.a.defining_op, dot.b.defining_op
    if not all(_sliceable(load, dot) for load in (a, b)):
        return
    a_t = dot.a.type
    rank = len(a_t.shape)
    k = a_t.shape[-1]
    depth = instruction_depth(a_t.element_type.width)
    if k <= depth or k % depth:
        return
    acc = dot.c
    for start in range(0, k, depth):
        a_part = _slice_load(a, rank - 1, start, depth)
        b_part = _slice_load(b, rank - 2, start, depth)
        part = tt.DotOp(
            a_part,
            b_part,
            acc,
            inputPrecision=dot.attributes.get("inputPrecision"),
            maxNumImpreciseAcc=dot.attributes.get("maxNumImpreciseAcc"),
            location=dot.location,
        )
        dot.parent.insert_before(part, dot)
        acc = part.d
    dot.d.replace_all_uses_with(acc)
    dot.erase()
    for load in (a, b):
        load.erase()


def _sliceable(load: Operation | None, dot: Operation) -> bool:
    """A whole load of a buffer read by nothing but `dot`. It may be outside the dot's loop
    (an operand that does not change, such as attention's Q): its slices are then read in
    every iteration, from shared memory, rather than held in registers across the loop."""
    return (
        isinstance(load, ttg.LocalLoadOp)
        and load.result.has_one_use
        and load.src.type.shape == load.src.type.alloc_shape
    )


def _slice_load(load: Operation, dim: int, start: int, depth: int):
    """A load of the slice [start, start + depth) along `dim` of `load`'s buffer, inserted
    before the dot being cut."""
    buffer_t = load.src.type
    shape = list(buffer_t.shape)
    shape[dim] = depth
    offsets = [0] * len(shape)
    offsets[dim] = start
    view_t = buffer_t.clone(shape=shape, alloc_shape=buffer_t.alloc_shape)
    view = ttg.MemDescSubsliceOp(
        load.src, offsets=DenseArrayAttr(i32, offsets), result=view_t, location=load.location
    )
    result_t = load.result.type.clone(shape=shape)
    part = ttg.LocalLoadOp(view.result, result=result_t, location=load.location)
    dot = next(iter(load.result.users))
    dot.parent.insert_before(view, dot)
    dot.parent.insert_before(part, dot)
    return part.result


@register_pass("tritongpu-dot-operands-shared")
@dataclass(frozen=True)
class DotOperandsShared(Pass):
    """Dot operands through shared-memory buffers, dots sliced along K (see the module doc)."""

    def run(self, module: Operation) -> None:
        for op in list(module.walk()):
            if isinstance(op, ttg.ConvertLayoutOp):
                operand_through_shared(op)
        for op in list(module.walk()):
            if isinstance(op, tt.DotOp):
                slice_dot(op)
