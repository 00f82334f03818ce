"""`tritongpu-reduce-data-duplication`: before a `ttg.convert_layout` that goes through shared
memory, drop the registers of the source that repeat an element, so that each thread writes
every element it holds once.

A layout repeats an element in a thread when register bases are zero or linearly dependent
(a tensor narrower than the layout's tile: Triton's linear layouts zero those bases rather
than drop them). Converting to the same lanes and warps with only the independent register
bases costs no instruction (the registers are renumbered), and the round trip through shared
memory that follows stores fewer values. Conversions that only renumber registers are left
alone, as are sources without repeats.

    #blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [32, 1], ...}>
    %c = ttg.convert_layout %x : tensor<128x4xf32, #blocked> -> tensor<128x4xf32, #blocked1>
    ==>   (fitted to 4 columns, #blocked's third register basis is zero: two copies each)
    %d = ttg.convert_layout %x : tensor<128x4xf32, #blocked> -> tensor<128x4xf32, #linear>
    %c = ttg.convert_layout %d : tensor<128x4xf32, #linear> -> tensor<128x4xf32, #blocked1>

Legal always: the inserted conversion keeps every element. Copies held by other lanes or
warps (broadcast threads) stay: removing them would need a register choice per thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects import ttg
from ....dialects.ttg.attributes import DistributedEncoding
from ....ir import Operation, RankedTensorType, register_pass
from ....ir.passes import Pass
from ..layouts import to_linear_encoding, to_linear_layout
from .layout_inference import with_encoding


def independent_registers(layout) -> list[int]:
    """The register bits whose bases are independent of the lower ones (over GF(2))."""
    kept, reduced = [], []  # `reduced`: an echelon basis of the span so far
    for bit, basis in enumerate(layout.packed_bases("register")):
        for pivot in reduced:
            basis = min(basis, basis ^ pivot)
        if basis:
            reduced.append(basis)
            reduced.sort(reverse=True)
            kept.append(bit)
    return kept


def _through_shared(src_t, dst_t) -> bool:
    """Whether the lowering converts `src_t` to `dst_t` through shared memory (the threads
    do not already hold the elements they need)."""
    from ..lowering.indexing import layout_of, register_map

    return register_map(layout_of(src_t), layout_of(dst_t), lambda c: c) is None


def _dedup_encoding(t: RankedTensorType):
    """`t`'s encoding without repeated registers, or None when it has none."""
    layout = to_linear_layout(t.encoding, t.shape)
    kept = independent_registers(layout)
    if len(kept) == layout.in_dim_size_log2("register"):
        return None
    linear = to_linear_encoding(layout)
    registers = [linear.register[bit] for bit in kept]
    return type(linear)(registers, linear.lane, linear.warp, linear.block)


@register_pass("tritongpu-reduce-data-duplication")
@dataclass(frozen=True)
class ReduceDataDuplication(Pass):
    """Drop repeated registers before a conversion through shared memory (see the module
    doc)."""

    def run(self, module: Operation) -> None:
        for op in list(module.walk()):
            if op.name != "ttg.convert_layout":
                continue
            src_t, dst_t = op.src.type, op.result.type
            encodings = (src_t.encoding, dst_t.encoding)
            if not all(isinstance(e, DistributedEncoding) for e in encodings):
                continue
            if not _through_shared(src_t, dst_t):
                continue
            encoding = _dedup_encoding(src_t)
            if encoding is None:
                continue
            narrow = ttg.ConvertLayoutOp(
                op.src, result=with_encoding(src_t, encoding), location=op.location
            )
            op.parent.insert_before(narrow, op)
            op.set_operand(0, narrow.result)
