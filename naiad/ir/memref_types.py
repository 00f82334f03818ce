"""Builtin memref types and their strided layout: `memref<4x?xf32>`,
`memref<4x8xf32, strided<[?, 1], offset: ?>>`, `memref<*xf32>`, `memref<4xf32, 1>`.

A memref is a view of memory: a shape (dimensions known or DYNAMIC), an element type, a layout
that maps indices to an element offset from the base (None: the identity, row-major and
contiguous; a `StridedLayoutAttr`; or an `AffineMapAttr`), and a memory space (None: the
default; an integer spelled bare, or any attribute). The Linalg path of the CPU back end turns
each pointer argument into an unranked memref and carves strided views out of it.

Spelled as MLIR spells them: the layout is printed unless it is an identity affine map (a
strided layout is printed even when it happens to be contiguous, `strided<[1]>`), the memory
space unless it is the default (an i64 `0` is the default, as MLIR's `skipDefaultMemorySpace`
makes it), and `offset: 0` is left out of a strided layout.
"""

from __future__ import annotations

from collections.abc import Iterable

from .affine import AffineMapAttr
from .attributes import Attribute, DialectAttribute, DictionaryAttr, IntegerAttr, StringAttr
from .types import DYNAMIC, Type, check_shape, dims_text, i64


def _dim_str(value: int) -> str:
    return "?" if value == DYNAMIC else str(value)


class StridedLayoutAttr(Attribute):
    """`strided<[s0, s1, ...], offset: o>`: element `(i0, i1, ...)` lies at
    `o + i0 * s0 + i1 * s1 + ...` from the base; each stride and the offset may be DYNAMIC."""

    __slots__ = ("strides", "offset")  # noqa: RUF023 (order = parameters)
    strides: tuple[int, ...]
    offset: int

    def __new__(cls, strides: Iterable[int], offset: int = 0):
        return cls._intern(tuple(int(s) for s in strides), int(offset))

    @property
    def is_static(self) -> bool:
        return DYNAMIC not in self.strides and self.offset != DYNAMIC

    def _spelling(self) -> str:
        strides = ", ".join(map(_dim_str, self.strides))
        offset = "" if self.offset == 0 else f", offset: {_dim_str(self.offset)}"
        return f"strided<[{strides}]{offset}>"


def _memory_space(space) -> Attribute | None:
    """The memory space as stored: None for the default (an i64 `0` too); an int becomes an
    i64 attribute. As MLIR's isSupportedMemorySpace: an integer, a string, a dictionary or a
    dialect attribute."""
    if isinstance(space, int):
        space = IntegerAttr(space, i64)
    if space is None or (isinstance(space, IntegerAttr) and space.type is i64 and space.value == 0):
        return None
    if not isinstance(space, IntegerAttr | StringAttr | DictionaryAttr | DialectAttribute):
        raise TypeError(f"unsupported memory space Attribute {space}")
    return space


def _space_text(space) -> str:
    return "" if space is None else f", {space.elided_str()}"


class MemRefType(Type):
    """`memref<4x?xf32, strided<[?, 1], offset: ?>, 1>`: a ranked memref."""

    __slots__ = ("shape", "element_type", "layout", "memory_space")  # noqa: RUF023
    shape: tuple[int, ...]
    element_type: Type
    layout: Attribute | None
    memory_space: Attribute | None

    def __new__(cls, shape: Iterable[int], element_type: Type, layout=None, memory_space=None):
        shape = check_shape(shape, "memref")
        if not isinstance(element_type, Type):
            raise TypeError(f"memref element type must be a type, got {element_type!r}")
        if isinstance(layout, StridedLayoutAttr) and len(layout.strides) != len(shape):
            raise ValueError(
                f"expected {len(shape)} strides in {layout} for a memref of rank {len(shape)}"
            )
        if isinstance(layout, AffineMapAttr) and layout.value.num_dims != len(shape):
            raise ValueError(f"memref layout mismatch between rank and affine map: {layout}")
        if isinstance(layout, AffineMapAttr) and layout.value.is_identity():
            layout = None  # MLIR's default layout: printed as nothing
        if layout is not None and not isinstance(layout, StridedLayoutAttr | AffineMapAttr):
            raise TypeError(f"memref layout must be strided<...> or an affine map, got {layout}")
        return cls._intern(shape, element_type, layout, _memory_space(memory_space))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def has_static_shape(self) -> bool:
        return DYNAMIC not in self.shape

    def clone(self, shape=None, element_type=None, layout=..., memory_space=...) -> MemRefType:
        """This type with some parameters replaced (`layout=None` makes it the identity)."""
        return MemRefType(
            self.shape if shape is None else shape,
            self.element_type if element_type is None else element_type,
            self.layout if layout is ... else layout,
            self.memory_space if memory_space is ... else memory_space,
        )

    def strides_and_offset(self) -> tuple[tuple[int, ...], int] | None:
        """The strides and offset the layout gives (MLIR's getStridesAndOffset): those of a
        strided layout; for the identity, row-major strides (DYNAMIC from the first dynamic
        dimension inward) and offset 0; None for another affine map."""
        if self.layout is None:
            return contiguous_strides(self.shape), 0
        if isinstance(self.layout, StridedLayoutAttr):
            return self.layout.strides, self.layout.offset
        return None

    def _spelling(self) -> str:
        layout = "" if self.layout is None else f", {self.layout}"
        return (
            f"memref<{dims_text(self.shape)}{self.element_type}{layout}"
            f"{_space_text(self.memory_space)}>"
        )


class UnrankedMemRefType(Type):
    """`memref<*xf32>`, `memref<*xf32, 1>`: a memref whose rank is known at run time only
    (what a kernel's pointer argument becomes)."""

    __slots__ = ("element_type", "memory_space")
    element_type: Type
    memory_space: Attribute | None

    def __new__(cls, element_type: Type, memory_space=None):
        if not isinstance(element_type, Type):
            raise TypeError(f"memref element type must be a type, got {element_type!r}")
        return cls._intern(element_type, _memory_space(memory_space))

    def _spelling(self) -> str:
        return f"memref<*x{self.element_type}{_space_text(self.memory_space)}>"


def contiguous_strides(shape: Iterable[int]) -> tuple[int, ...]:
    """Row-major strides of `shape`: each the product of the dimensions after it, DYNAMIC once
    one of those is."""
    strides = []
    running = 1
    for d in reversed(tuple(shape)):
        strides.append(running)
        if running != DYNAMIC:
            running = DYNAMIC if d == DYNAMIC else running * d
    return tuple(reversed(strides))


def is_memref(t: Type) -> bool:
    """A ranked or unranked memref."""
    return isinstance(t, MemRefType | UnrankedMemRefType)
