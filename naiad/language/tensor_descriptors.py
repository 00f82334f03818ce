"""Tensor descriptors: block loads, stores, row gathers and scatters, and block atomics.

A descriptor is a language-level value, as a block pointer is (`memory.py`): each access builds
the block of pointers and the in-bounds mask, then goes through ordinary loads, stores and atomic
read-modify-writes. Every back end (the interpreter, the CPU, the GPU) therefore compiles it with
nothing of its own; out-of-bounds elements read as the padding and are never written, as through
Triton's tensor memory accelerator. A descriptor the NVIDIA back end reads by tensor copies (a
host one, or one made in the kernel over memory it can prove aligned) carries a `tensor_map`: a
tensor of the descriptor's type over the `!tt.tensordesc` value, through which the builder makes
its block loads and stores (frontend/tensor_maps.py). It is the descriptor's first part, so that
it crosses calls as a function argument ahead of the base, shapes and strides it stands for.

The argument rules are Triton 3.8's, checked here so that a kernel Naiad accepts is one Triton
accepts: a gather or scatter works on a 2-D descriptor of one-row blocks, with at least 8 int16 or
int32 row offsets and a block of at least 32 bytes a row of elements no wider than 32 bits; block
atomics take a value of exactly the block's shape and element type, and only the element types
Triton's reductions accept.
"""

from __future__ import annotations

from . import core
from . import dtypes as t
from .core import _unwrap_if_constexpr, builtin
from .memory import block_ptr

# Element types of Triton's block atomics (`tt.descriptor_reduce`), by reduction.
_BITWISE_TYPES = (t.uint32, t.int32, t.uint64, t.int64)
_HALF_FLOATS = (t.float16, t.bfloat16)  # min and max of these need bulk tensor reductions
# The block atomics a descriptor with a tensor map makes one bulk tensor reduction of (the
# copy engine combines the block into memory as it writes it); min and max keep element atomics.
BULK_REDUCTIONS = ("add", "and", "or", "xor")
_ATOMIC_TYPES = {
    "add": (t.uint32, t.int32, t.uint64, t.float32, t.float16, t.bfloat16),
    "min": _BITWISE_TYPES + _HALF_FLOATS,
    "max": _BITWISE_TYPES + _HALF_FLOATS,
    "and": _BITWISE_TYPES,
    "or": _BITWISE_TYPES,
    "xor": _BITWISE_TYPES,
}


class tensor_descriptor_type:
    """The type of a tensor descriptor: its block type and its padding."""

    def __init__(self, block_type: t.block_type, padding: str = "zero"):
        self.block_type, self.padding = block_type, padding

    def __str__(self):
        return f"tensordesc<{self.block_type}>"

    def __eq__(self, other):
        return (
            isinstance(other, tensor_descriptor_type)
            and self.block_type == other.block_type
            and self.padding == other.padding
        )

    def __hash__(self):
        return hash(("tensordesc", self.block_type, self.padding))

    def mangle(self):
        return f"D{self.block_type.mangle()}{self.padding}D"

    # A descriptor's tensor map is one (scalar) value of this type: what a tensor asks its type.
    @property
    def scalar(self):
        return self

    def get_block_shapes(self):
        return ()

    def is_block(self):
        return False


def _block_atomic(op: str, what: str):
    """The method `desc.atomic_<op>(offsets, value)`."""

    @builtin
    def atomic(self, offsets, value, _semantic=None):
        self._reduce(_semantic, op, offsets, value)

    atomic.__name__ = atomic.__qualname__ = f"atomic_{op}"
    atomic.__doc__ = f"Atomically {what} (in-bounds elements only); returns nothing."
    return atomic


class tensor_descriptor:
    """A descriptor of a strided 1- to 5-D tensor in global memory, read and written in blocks."""

    def __init__(
        self, base, shape, strides, block_type: t.block_type, padding="zero", tensor_map=None
    ):
        self.tensor_map = tensor_map  # first: a call passes it ahead of the parts (module doc)
        self.base, self.shape, self.strides = base, shape, strides
        self.type = tensor_descriptor_type(block_type, padding)

    @property
    def block_type(self):
        return self.type.block_type

    @property
    def block_shape(self):
        return list(self.type.block_type.shape)

    @property
    def dtype(self):
        return self.type.block_type.element_ty

    def _offsets(self, semantic, offsets) -> list:
        """`offsets`, one per dimension, as int32 tensors (as Triton converts them)."""
        offsets = _unwrap_if_constexpr(offsets)
        if len(offsets) != len(self.shape):
            raise ValueError(
                f"tensor descriptor of rank {len(self.shape)} needs {len(self.shape)} "
                f"offsets, got {len(offsets)}"
            )
        return [semantic.cast(semantic.to_tensor(o), t.int32) for o in offsets]

    def _block_pointer(self, offsets):
        """The block pointer at `offsets` (`_offsets`'), rows outermost."""
        order = list(range(len(self.shape)))[::-1]
        return block_ptr(self.base, self.shape, self.strides, offsets, self.block_shape, order)

    def _check_block_value(self, value, what):
        """A stored or reduced value must be a block of exactly the block's shape and type."""
        shape = list(value.type.get_block_shapes())
        if shape != self.block_shape:
            raise ValueError(
                f"tensor descriptor {what}: the value's shape {shape} must equal the block shape "
                f"{self.block_shape}"
            )

    @builtin
    def load(self, offsets, _semantic=None):
        """The block at `offsets`; out-of-bounds elements read as the descriptor's padding."""
        offsets = self._offsets(_semantic, offsets)
        if self.tensor_map is not None:
            handle = _semantic.builder.tensor_map_load(
                self.tensor_map.handle, [o.handle for o in offsets], self.type
            )
            if handle is not None:
                return core.tensor(handle, self.block_type)
        pointer = self._block_pointer(offsets)
        return pointer.load(_semantic, range(len(self.shape)), self.type.padding)

    @builtin
    def store(self, offsets, value, _semantic=None):
        """Store `value` at `offsets`; out-of-bounds elements are not written."""
        value = _semantic.to_tensor(value)
        self._check_block_value(value, "store")
        offsets = self._offsets(_semantic, offsets)
        if self.tensor_map is not None:
            value = _semantic.cast(value, self.dtype)
            indices = [o.handle for o in offsets]
            return _semantic.builder.tensor_map_store(self.tensor_map.handle, indices, value.handle)
        return self._block_pointer(offsets).store(_semantic, value, range(len(self.shape)))

    # -- rows by index -----------------------------------------------------------------------
    def _rows(self, semantic, x_offsets, y_offset, what):
        """The pointers and in-bounds mask of rows `x_offsets`, columns `y_offset + arange`."""
        block = self.block_shape
        if len(block) != 2 or block[0] != 1:
            raise ValueError(
                f"tensor descriptor {what} needs a 2-D descriptor whose block is one row, "
                f"got block shape {block}"
            )
        x_offsets = semantic.to_tensor(x_offsets)
        rows = list(x_offsets.type.get_block_shapes())
        if len(rows) != 1:
            raise ValueError(f"tensor descriptor {what}: x_offsets must be 1-D, got shape {rows}")
        if x_offsets.type.scalar not in (t.int16, t.int32):
            raise ValueError(
                f"tensor descriptor {what}: x_offsets must be int16 or int32, "
                f"got {x_offsets.type.scalar}"
            )
        if rows[0] < 8:
            raise ValueError(f"tensor descriptor {what} needs at least 8 rows, got {rows[0]}")
        bits = self.dtype.primitive_bitwidth
        if bits > 32:
            raise ValueError(
                f"tensor descriptor {what} takes elements of at most 32 bits, got {self.dtype}"
            )
        if block[1] < 32 // bits * 8:
            raise ValueError(
                f"tensor descriptor {what} of {self.dtype} needs at least {32 // bits * 8} "
                f"columns, got {block[1]}"
            )
        y_offset = semantic.to_tensor(y_offset)
        if y_offset.type.is_block() or not y_offset.type.scalar.is_int():
            raise ValueError(
                f"tensor descriptor {what}: y_offset must be an integer scalar, got {y_offset.type}"
            )
        shape = [rows[0], block[1]]
        row = semantic.expand_dims(semantic.cast(x_offsets, t.int64), 1)
        row = semantic.broadcast_impl_shape(row, shape)
        span = semantic.cast(semantic.arange(0, block[1]), t.int64)
        column = semantic.add(semantic.cast(semantic.cast(y_offset, t.int32), t.int64), span)
        column = semantic.broadcast_impl_shape(semantic.expand_dims(column, 0), shape)
        pointers = semantic.add(self.base, semantic.mul(row, self.strides[0]))
        pointers = semantic.add(pointers, semantic.mul(column, self.strides[1]))
        zero = semantic.scalar_constant(0, t.int64)
        mask = None
        for coords, extent in ((row, self.shape[0]), (column, self.shape[1])):
            inside = semantic.and_(
                semantic.greater_equal(coords, zero), semantic.less_than(coords, extent)
            )
            mask = inside if mask is None else semantic.and_(mask, inside)
        return pointers, mask

    @builtin
    def gather(self, *args, _semantic=None):
        """`gather(x_offsets, y_offset)`: rows `x_offsets` (a 1-D int16/int32 block), columns
        `y_offset` to `y_offset + block_shape[1]`, as one `[len(x_offsets), block_shape[1]]`
        block; out-of-bounds elements read as the descriptor's padding."""
        if len(args) != 2:
            raise ValueError(
                f"tensor descriptor gather takes (x_offsets, y_offset), got {len(args)} arguments"
            )
        pointers, mask = self._rows(_semantic, args[0], args[1], "gather")
        if not self.dtype.is_floating():
            return _semantic.pointer_load(pointers, mask, 0)
        if self.type.padding == "nan":
            return _semantic.pointer_load(pointers, mask, float("nan"))
        return _semantic.pointer_load(pointers, mask, 0.0)

    @builtin
    def scatter(self, value, *args, _semantic=None):
        """`scatter(value, x_offsets, y_offset)`: write `value` to the rows and columns a
        `gather` with the same offsets reads; out-of-bounds elements are not written."""
        if len(args) != 2:
            raise ValueError(
                f"tensor descriptor scatter takes (value, x_offsets, y_offset), got "
                f"{len(args) + 1} arguments"
            )
        pointers, mask = self._rows(_semantic, args[0], args[1], "scatter")
        value = _semantic.to_tensor(value)
        shape = list(pointers.type.get_block_shapes())
        if list(value.type.get_block_shapes()) != shape or value.type.scalar != self.dtype:
            raise ValueError(
                f"tensor descriptor scatter: the value must be a {shape} block of {self.dtype}, "
                f"got {value.type}"
            )
        _semantic.pointer_store(pointers, value, mask)

    # -- block atomics -----------------------------------------------------------------------
    def _reduce(self, semantic, op, offsets, value):
        """Combine `value` into the block at `offsets` with atomic `op`, element by element;
        out-of-bounds elements are left alone. Nothing is returned, as Triton's block atomics
        return nothing; the order is `release` at GPU scope, as Triton's pointer fallback. Through
        a tensor map, add and the bitwise ones are one bulk tensor reduction (BULK_REDUCTIONS)."""
        value = semantic.to_tensor(value)
        self._check_block_value(value, f"atomic_{op}")
        if value.type.scalar != self.dtype:
            raise ValueError(
                f"tensor descriptor atomic_{op}: the value's element type {value.type.scalar} "
                f"must be the descriptor's {self.dtype}"
            )
        half_float = op in ("min", "max") and self.dtype in _HALF_FLOATS
        if half_float and not semantic.target.bulk_tensor_reduce:
            raise ValueError(
                f"tensor descriptor atomic_{op} of {self.dtype} needs Hopper's bulk tensor "
                f"reduction (CUDA sm_90 or later), which {semantic.target.name} lacks; Triton "
                "refuses it there too"
            )
        if self.dtype not in _ATOMIC_TYPES[op]:
            accepted = ", ".join(str(d) for d in _ATOMIC_TYPES[op])
            raise ValueError(
                f"tensor descriptor atomic_{op} does not support {self.dtype} (it takes {accepted})"
            )
        offsets = self._offsets(semantic, offsets)
        if self.tensor_map is not None and op in BULK_REDUCTIONS:
            indices = [o.handle for o in offsets]
            semantic.builder.tensor_map_reduce(self.tensor_map.handle, indices, value.handle, op)
            return
        pointer = self._block_pointer(offsets)
        pointers, mask = pointer._pointers_and_mask(semantic, range(len(self.shape)))
        if half_float:
            semantic.float_extremum(op, pointers, value, mask, "release", "gpu")
        elif op in ("min", "max"):
            semantic.atomic_extremum(op, pointers, value, mask, "release", "gpu")
        else:
            semantic.atomic_rmw(op, pointers, value, mask, "release", "gpu")

    atomic_add = _block_atomic("add", "add `value` into the block at `offsets`")
    atomic_min = _block_atomic("min", "lower the block at `offsets` to `value` where it is less")
    atomic_max = _block_atomic("max", "raise the block at `offsets` to `value` where it is more")
    atomic_and = _block_atomic("and", "`&` `value` into the block at `offsets`")
    atomic_or = _block_atomic("or", "`|` `value` into the block at `offsets`")
    atomic_xor = _block_atomic("xor", "`^` `value` into the block at `offsets`")


@builtin
def make_tensor_descriptor(
    base, shape, strides, block_shape, padding_option="zero", _semantic=None
):
    """A tensor descriptor for the strided tensor at `base` (last stride 1, blocks >= 16 bytes)."""
    base = _semantic.to_tensor(base)
    if base.type.is_block() or not base.type.scalar.is_ptr():
        raise ValueError(f"make_tensor_descriptor: base must be a scalar pointer, got {base.type}")
    block_shape = [_unwrap_if_constexpr(b) for b in _unwrap_if_constexpr(block_shape)]
    rank = len(block_shape)
    if not 1 <= rank <= 5 or len(shape) != rank or len(strides) != rank:
        raise ValueError(
            f"Expected 1 <= ndim <= 5 with matching shape and strides, got "
            f"{len(shape)}, {len(strides)}, {rank}"
        )
    _semantic.validate_block_shape(block_shape)
    element = base.type.scalar.element_ty
    if block_shape[-1] * element.primitive_bitwidth // 8 < 16:
        raise ValueError(
            f"Descriptor block shape must have at least 16 bytes in the last dimension, "
            f"but got {block_shape[-1]} * {element.primitive_bitwidth // 8} = "
            f"{block_shape[-1] * element.primitive_bitwidth // 8} bytes"
        )
    last_stride = _unwrap_if_constexpr(strides[-1])
    if isinstance(last_stride, int) and last_stride != 1:
        raise ValueError(f"Tensor descriptor last dim must be 1 but got {last_stride}")
    padding_option = _unwrap_if_constexpr(padding_option)
    if padding_option not in ("zero", "nan"):
        raise ValueError(f"padding_option must be 'zero' or 'nan', got {padding_option!r}")
    block_type = t.block_type(element, block_shape)
    given_shape, given_strides = list(shape), list(strides)
    shape = [_semantic.cast(_semantic.to_tensor(s), t.int64) for s in shape]
    strides = [_semantic.cast(_semantic.to_tensor(s), t.int64) for s in strides]
    handle = _semantic.builder.tensor_map(
        _semantic.target, base, given_shape, given_strides, strides, block_type, padding_option
    )
    desc_type = tensor_descriptor_type(block_type, padding_option)
    tensor_map = None if handle is None else core.tensor(handle, desc_type)
    return tensor_descriptor(base, shape, strides, block_type, padding_option, tensor_map)


@builtin
def load_tensor_descriptor(desc, offsets, _semantic=None):
    """`desc.load(offsets)`."""
    return desc.load(offsets, _semantic=_semantic)


@builtin
def store_tensor_descriptor(desc, offsets, value, _semantic=None):
    """`desc.store(offsets, value)`."""
    return desc.store(offsets, value, _semantic=_semantic)
