"""Memory reached by address: `memref.view` and `memref.extract_aligned_pointer_as_index`.

The middle layer makes *memory*, the view whose element i lies at address i * size, by
shifting a buffer back by its own address (`memref.view %anchor[-address(anchor)]`,
middle/linalg/convert_addresses.py); a pointer made from an integer indexes it. As a GEP from
the anchor's pointer that would go wrong: LLVM folds `anchor - address(anchor)` to null and
takes any load through a GEP of null to be undefined. So the view of a `memref.view` is an
`AddressView`: each element's address is computed as an integer and turned into a pointer with
`inttoptr`, which may point anywhere. Its `pointer` is its base address as a pointer, so that
the aligned pointer of such a view, as of any other, is `ptrtoint(view.pointer)`.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ....dialects.base import bit_width
from ....ir import DYNAMIC
from ..lower_scalar.types import llvm_type
from .function import I64, PTR, FunctionLowering, lowers
from .loops import as_value
from .views import View, mul


@dataclass
class AddressView(View):
    """A view whose element addresses are integers: `size` bytes per element from the address
    `pointer` holds (see the module)."""

    size: int = 1

    def address(self, b: ir.IRBuilder, indices) -> ir.Value:
        offset = b.mul(as_value(self.linear(b, indices)), ir.Constant(I64, self.size))
        return b.inttoptr(b.add(b.ptrtoint(self.pointer, I64), offset), PTR)

    def subview(self, b: ir.IRBuilder, offsets, sizes, strides, keep=None) -> AddressView:
        view = super().subview(b, offsets, sizes, strides, keep)
        return AddressView(**vars(view), size=self.size)


def base_address(fl: FunctionLowering, memory) -> ir.Value:
    """The address (i64) of the aligned base of a memref's value: a View, or the pointer an
    unranked argument is."""
    pointer = memory.pointer if isinstance(memory, View) else memory
    return fl.builder.ptrtoint(pointer, I64)


@lowers("memref.extract_aligned_pointer_as_index")
def _extract_aligned_pointer(fl: FunctionLowering, op) -> None:
    fl.bind(op.results[0], base_address(fl, fl.value(op.source)))


@lowers("memref.view")
def _view(fl: FunctionLowering, op) -> None:
    b = fl.builder
    source = fl.value(op.source)
    start = b.ptrtoint(source.address(b, [0]), I64)
    at = b.inttoptr(b.add(start, fl.value(op.byte_shift)), PTR)
    t = op.results[0].type
    dynamic = iter(fl.value(v) for v in op.sizes)
    sizes = [next(dynamic) if d == DYNAMIC else d for d in t.shape]
    strides, step = [], 1
    for size in reversed(sizes):  # row-major: the result's layout is the identity
        strides.append(step)
        step = mul(b, step, size)
    element = llvm_type(t.element_type)
    size = (bit_width(t.element_type) + 7) // 8
    fl.bind(op.results[0], AddressView(at, element, 0, sizes, strides[::-1], size))
