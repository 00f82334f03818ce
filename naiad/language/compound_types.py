"""The compound types of the kernel language: pointers, blocks (tensors), tuples and constexprs.

Each is a `dtype` (scalar_types.py), equal by structure and hashable, with Triton's names and
mangling.
"""

from __future__ import annotations

from .scalar_types import dtype, int32


class pointer_type(dtype):
    """A pointer to `element_ty` in `address_space` (1 = global); `const` ones are read-only."""

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        element_ty = getattr(element_ty, "value", element_ty)
        if not isinstance(element_ty, dtype):
            raise TypeError(f"pointer element type must be a dtype, got {element_ty!r}")
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = const
        self.name = f"pointer<{element_ty}>" if not const else f"const_pointer<{element_ty}>"
        self.primitive_bitwidth = 64

    def is_ptr(self):
        return True

    def is_const(self):
        return self.const

    @property
    def scalar(self):
        return self

    def mangle(self):
        return f"P{self.element_ty.mangle()}"

    def __eq__(self, other):
        if not isinstance(other, dtype):
            return NotImplemented
        return (
            isinstance(other, pointer_type)
            and self.element_ty == other.element_ty
            and self.address_space == other.address_space
            and self.const == other.const
        )

    def __hash__(self):
        return hash(("ptr", self.element_ty, self.address_space, self.const))

    def __str__(self):
        return self.name

    def __repr__(self):
        return self.name


class const_pointer_type(pointer_type):
    """A read-only pointer (Triton's `*k` signature prefix)."""

    def __init__(self, element_ty: dtype, address_space: int = 1):
        super().__init__(element_ty, address_space, const=True)


class block_type(dtype):
    """A tensor type: `shape` (a tuple of ints) of `element_ty` scalars (which may be pointers)."""

    def __init__(self, element_ty: dtype, shape):
        self.element_ty = element_ty
        self.shape = tuple([int(getattr(s, "value", s)) for s in shape])
        if not self.shape:
            raise TypeError("0d block_type is forbidden")
        self.numel = 1
        for s in self.shape:
            self.numel *= s
        self.primitive_bitwidth = element_ty.primitive_bitwidth

    @property
    def name(self):
        """Made when asked: the interpreter makes thousands of block types a launch."""
        return f"<{self.shape}, {self.element_ty}>"

    def is_block(self):
        return True

    def is_ptr(self):
        return False

    @property
    def scalar(self):
        return self.element_ty

    def get_block_shapes(self):
        return self.shape

    def with_element_ty(self, scalar_ty):
        return block_type(scalar_ty, self.shape)

    def mangle(self):
        return f"{self.element_ty.mangle()}S{'_'.join(map(str, self.shape))}S"

    def __eq__(self, other):
        if not isinstance(other, dtype):
            return NotImplemented
        return (
            isinstance(other, block_type)
            and self.element_ty == other.element_ty
            and self.shape == other.shape
        )

    def __hash__(self):
        return hash(("block", self.element_ty, self.shape))

    def __str__(self):
        return self.name

    __repr__ = __str__


class tuple_type(dtype):
    """The type of a `tl.tuple`: the types of its elements, and field names for named tuples."""

    def __init__(self, types, fields=None):
        self.types = list(types)
        self.fields = list(fields) if fields else [""] * len(self.types)
        self.name = (
            "["
            + ",".join(f"{f}:{t}" if f else str(t) for f, t in zip(self.fields, self.types))
            + "]"
        )

    def __iter__(self):
        return iter(self.types)

    def __getitem__(self, index):
        return self.types[index]

    def __len__(self):
        return len(self.types)

    def is_tuple(self):
        return True

    def mangle(self):
        return "T" + "_".join(t.mangle() for t in self.types) + "T"

    def __eq__(self, other):
        if not isinstance(other, dtype):
            return NotImplemented
        return (
            isinstance(other, tuple_type)
            and self.types == other.types
            and self.fields == other.fields
        )

    def __hash__(self):
        return hash(("tuple", tuple(self.types), tuple(self.fields)))

    __repr__ = dtype.__str__


class constexpr_type(dtype):
    """The type of a compile-time constant value (it lives in the key, not in the IR)."""

    def __init__(self, value):
        self.value = value

    @property
    def name(self):
        """Made when asked: every constexpr has a type, and few types are ever printed."""
        return f"constexpr[{self.value!r}]"

    def mangle(self):
        return f"c{self.value!r}"

    def __eq__(self, other):
        if not isinstance(other, dtype):
            return NotImplemented
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self):
        return hash(("constexpr", repr(self.value)))

    __repr__ = dtype.__str__


pi32_t = pointer_type(int32)
