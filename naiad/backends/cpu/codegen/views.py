"""Views of memory: what a memref — and, after bufferization, a tensor — is at run time.

A `View` is a typed pointer to element 0 of some memory (a kernel argument or a scratch
buffer) plus an element offset, sizes and strides. Each of those is a Python int when known at
compile time (every tensor's shape; the strides of scratch buffers and most views) or an i64
llvmlite value, so index arithmetic on known parts folds while the IR is built.

    view.address(b, [i, j])      # &base[offset + i·stride0 + j·stride1]
    view.subview(b, offsets, sizes, strides)
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from .loops import as_value


def add(b: ir.IRBuilder, x, y):
    """x + y over ints and i64 values, folding ints."""
    if isinstance(x, int) and isinstance(y, int):
        return x + y
    if isinstance(x, int) and x == 0:
        return y
    if isinstance(y, int) and y == 0:
        return x
    return b.add(as_value(x), as_value(y))


def mul(b: ir.IRBuilder, x, y):
    """x · y over ints and i64 values, folding ints."""
    if isinstance(x, int) and isinstance(y, int):
        return x * y
    if (isinstance(x, int) and x == 0) or (isinstance(y, int) and y == 0):
        return 0
    if isinstance(x, int) and x == 1:
        return y
    if isinstance(y, int) and y == 1:
        return x
    return b.mul(as_value(x), as_value(y))


def static_or_dynamic(value):
    """An llvmlite i64 constant back to a Python int; anything else unchanged."""
    if isinstance(value, ir.Constant) and isinstance(value.type, ir.IntType):
        return int(value.constant)
    return value


@dataclass
class View:
    """`pointer[offset + Σ index_k · strides[k]]` over `0 <= index_k < sizes[k]`, elements of
    LLVM type `element` (pointers are opaque)."""

    pointer: ir.Value
    element: ir.Type
    offset: object
    sizes: list
    strides: list

    @property
    def rank(self) -> int:
        return len(self.sizes)

    @staticmethod
    def contiguous(pointer: ir.Value, element: ir.Type, sizes) -> View:
        """A row-major contiguous view of static `sizes` at `pointer`."""
        strides, step = [], 1
        for size in reversed(sizes):
            strides.append(step)
            step *= size
        return View(pointer, element, 0, list(sizes), list(reversed(strides)))

    def linear(self, b: ir.IRBuilder, indices) -> object:
        """The element offset of `indices` from `pointer`."""
        total = self.offset
        for index, stride in zip(indices, self.strides):
            total = add(b, total, mul(b, index, stride))
        return total

    def address(self, b: ir.IRBuilder, indices) -> ir.Value:
        offset = as_value(self.linear(b, indices))
        return b.gep(self.pointer, [offset], inbounds=True, source_etype=self.element)

    def load(self, b: ir.IRBuilder, indices) -> ir.Value:
        return b.load(self.address(b, indices), typ=self.element)

    def store(self, b: ir.IRBuilder, value: ir.Value, indices) -> None:
        b.store(value, self.address(b, indices))

    def subview(self, b: ir.IRBuilder, offsets, sizes, strides, keep=None) -> View:
        """The view of `sizes` elements from `offsets` by `strides` (in this view's indices);
        `keep` lists the dimensions to keep (a rank-reducing subview drops the others)."""
        offset = self.linear(b, offsets)
        new_strides = [mul(b, s, step) for s, step in zip(self.strides, strides)]
        dims = range(self.rank) if keep is None else keep
        return View(
            self.pointer,
            self.element,
            offset,
            [sizes[d] for d in dims],
            [new_strides[d] for d in dims],
        )

    def is_contiguous(self) -> bool:
        """Row-major and dense, as far as compile-time facts tell."""
        step = 1
        for size, stride in zip(reversed(self.sizes), reversed(self.strides)):
            if not isinstance(size, int) or stride != step:
                return False
            step *= size
        return True
