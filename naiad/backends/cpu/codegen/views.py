"""Views of memory: what a memref — and, after bufferization, a tensor — is at run time.

A `View` is a typed pointer to element 0 of some memory (a kernel argument or a scratch
buffer) plus an element offset, sizes and strides. Each of those is a Python int when known at
compile time (every tensor's shape; the strides of scratch buffers and most views) or an i64
llvmlite value, so index arithmetic on known parts folds while the IR is built.

    view.address(b, [i, j])      # &base[offset + i·stride0 + j·stride1]
    view.subview(b, offsets, sizes, strides)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from llvmlite import ir

from .loops import I64, as_value, counted_loop, loop_nest


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


# Fills of a repeated byte up to this size are stored inline (`llvm.memset.inline`). Left as
# loops, LLVM turns them into calls of the C library's memset, whose start-up for a few KiB (a
# `rep stosb` on x86) cost a layer norm as much as the rest of its row did.
INLINE_FILL_BYTES = 16384

# A fill of a whole number of these, more than one, is a loop calling one out-of-line function
# that stores this many bytes (`naiad.fill.<byte>`, one per module): a 16 KiB fill stored
# inline is 512 stores in one block, and tutorial 06's attention forward had 1,289 of them, a
# third of its instructions and of its object code's compile time. Attention, matmul and layer
# norm run as fast (bench/RESULTS.md). (A loop of inline chunks would become memset calls.)
FILL_CHUNK_BYTES = 4096


def copy_elements(b: ir.IRBuilder, source: View, target: View) -> None:
    """Element-by-element copy between two views of the same sizes (a fill when the source is
    a splat constant)."""
    splat = _splat_constant(source)
    if splat is not None:
        fill_elements(b, target, splat)
        return
    with loop_nest(b, target.sizes) as indices:
        target.store(b, source.load(b, indices), indices)


def fill_elements(b: ir.IRBuilder, target: View, value: ir.Value) -> None:
    """Store `value` in every element of `target`."""
    byte, size = _repeated_byte(value), _static_bytes(target)
    inline = byte is not None and size is not None and 0 < size <= INLINE_FILL_BYTES
    if inline and target.is_contiguous():
        _fill_bytes(b, target.address(b, [0] * target.rank), byte, size)
        return
    with loop_nest(b, target.sizes) as indices:
        target.store(b, value, indices)


def _fill_bytes(b: ir.IRBuilder, start: ir.Value, byte: int, size: int) -> None:
    """`size` bytes from `start` set to `byte`: a whole number of chunks past one by
    `naiad.fill.<byte>`, anything else inline (a tensor's bytes are a power of two)."""
    chunks, rest = divmod(size, FILL_CHUNK_BYTES)
    if chunks <= 1 or rest:
        _memset_inline(b, start, byte, size)
        return
    fill = _chunk_filler(b.module, byte)
    with counted_loop(b, 0, chunks, name="fill") as i:
        offset = b.mul(i, ir.Constant(I64, FILL_CHUNK_BYTES), flags=("nsw",))
        b.call(fill, [b.gep(start, [offset], inbounds=True, source_etype=ir.IntType(8))])


def _chunk_filler(module: ir.Module, byte: int) -> ir.Function:
    """`void naiad.fill.<byte>(ptr)`: FILL_CHUNK_BYTES bytes set to `byte`, never inlined."""
    name = f"naiad.fill.{byte}"
    function = module.globals.get(name)
    if function is None:
        function = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.PointerType()]), name)
        function.linkage = "internal"
        function.attributes.add("noinline")
        function.attributes.add("nounwind")
        b = ir.IRBuilder(function.append_basic_block("entry"))
        _memset_inline(b, function.args[0], byte, FILL_CHUNK_BYTES)
        b.ret_void()
    return function


def _splat_constant(view: View) -> ir.Constant | None:
    """The value of a view that repeats one constant element (lower_tensor's splat constants:
    a one-element constant global read with all strides 0), or None."""
    storage = view.pointer
    if not isinstance(storage, ir.GlobalVariable) or not storage.global_constant:
        return None
    if any(stride != 0 for stride in view.strides):
        return None
    elements = storage.initializer.constant
    return elements[0] if len(elements) == 1 else None


def _repeated_byte(value) -> int | None:
    """The byte a scalar constant repeats in memory (0 for 0.0 or 0), or None."""
    if not isinstance(value, ir.Constant) or not isinstance(value.constant, int | float):
        return None
    t = value.type
    if isinstance(t, ir.IntType) and t.width % 8 == 0:
        data = (int(value.constant) & ((1 << t.width) - 1)).to_bytes(t.width // 8, "little")
    elif isinstance(t, ir.FloatType | ir.DoubleType):
        data = struct.pack("<f" if isinstance(t, ir.FloatType) else "<d", value.constant)
    else:
        return None
    return data[0] if len(set(data)) == 1 else None


def element_bytes(t: ir.Type) -> int | None:
    """The bytes one element of LLVM type `t` takes in a view (None for i1 and pointers)."""
    if isinstance(t, ir.IntType) and t.width % 8 == 0:
        return t.width // 8
    if isinstance(t, ir.FloatType | ir.DoubleType):
        return 4 if isinstance(t, ir.FloatType) else 8
    return None


def _static_bytes(view: View) -> int | None:
    size = element_bytes(view.element)
    if size is None:
        return None
    for n in view.sizes:
        if not isinstance(n, int):
            return None
        size *= n
    return size


def _memset_inline(b: ir.IRBuilder, pointer: ir.Value, byte: int, size: int) -> None:
    name = "llvm.memset.inline.p0.i64"
    function = b.module.globals.get(name)
    if function is None:
        i1, i8, i64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)
        signature = ir.FunctionType(ir.VoidType(), [ir.PointerType(), i8, i64, i1])
        function = ir.Function(b.module, signature, name)
    b.call(function, [pointer, ir.IntType(8)(byte), ir.IntType(64)(size), ir.IntType(1)(0)])
