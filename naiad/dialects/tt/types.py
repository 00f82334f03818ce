"""The types of the `tt` dialect, and the type constraints of TritonTypes.td.

`!tt.ptr<f32>` is a pointer to global memory (address space 1, which Triton leaves unprinted);
`!tt.ptr<f32, 3>` names another address space; `!tt.ptr<tensor<64x64xf16>>` is a block pointer
(`tt.make_tensor_ptr`). `!tt.tensordesc<64x64xf16>` is a TMA-style tensor descriptor: Triton 3.8
prints its block type as the body of a tensor type, without the `tensor` keyword.
"""

from __future__ import annotations

from ...ir import (
    DialectType,
    FloatType,
    IntegerType,
    RankedTensorType,
    Trait,
    Type,
    element_type,
    i1,
    i32,
    i64,
)
from ..base import Constraint, TypeClass, one_of

# Triton's default address space: global memory, elided in the printed type.
GLOBAL_ADDRESS_SPACE = 1


class PointerType(DialectType):
    """`!tt.ptr<pointee[, address_space]>`; the pointee is a scalar type or, for a block
    pointer, a ranked tensor."""

    __slots__ = ("pointee_type", "address_space")  # noqa: RUF023 (order = parameters)
    dialect = "tt"
    mnemonic = "ptr"
    is_pointer = True
    pointee_type: Type
    address_space: int

    def __new__(cls, pointee_type: Type, address_space: int = GLOBAL_ADDRESS_SPACE):
        if not isinstance(pointee_type, Type):
            raise TypeError(f"pointee must be a type, got {pointee_type!r}")
        return cls._intern(pointee_type, int(address_space))

    def print_body(self) -> str:
        if self.address_space == GLOBAL_ADDRESS_SPACE:
            return f"<{self.pointee_type}>"
        return f"<{self.pointee_type}, {self.address_space}>"


class TensorDescType(DialectType):
    """`!tt.tensordesc<64x64xf16>` (`<64x64xf16, #shared>` with an encoding): a descriptor of
    a tensor in global memory, loaded and stored a block of `block_type` at a time."""

    __slots__ = ("block_type",)
    dialect = "tt"
    mnemonic = "tensordesc"
    block_type: RankedTensorType

    def __new__(cls, block_type: RankedTensorType):
        if not isinstance(block_type, RankedTensorType):
            raise TypeError(f"tensordesc needs a ranked tensor block type, got {block_type!r}")
        return cls._intern(block_type)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.block_type.shape

    @property
    def element_type(self) -> Type:
        return self.block_type.element_type

    def print_body(self) -> str:
        # The tensor type's own spelling without `tensor`: `tensor<64x64xf16>` -> `<64x64xf16>`.
        return str(self.block_type)[len("tensor") :]


def ptr(pointee: Type, address_space: int = GLOBAL_ADDRESS_SPACE) -> PointerType:
    return PointerType(pointee, address_space)


def pointee_type(t: Type) -> Type | None:
    """What a load through `t` gives: the pointee of a pointer, a tensor of pointees for a
    tensor of pointers, the block tensor for a block pointer; None for a non-pointer."""
    element = element_type(t)
    if not isinstance(element, PointerType):
        return None
    if isinstance(t, RankedTensorType):
        return t.clone(element_type=element.pointee_type)
    return element.pointee_type


def pointer_type_same_shape(t: Type, address_space: int = GLOBAL_ADDRESS_SPACE) -> Type:
    """Triton's getPointerTypeSameShape: a pointer to `t`'s elements, with `t`'s shape."""
    if isinstance(t, RankedTensorType):
        return t.clone(element_type=PointerType(t.element_type, address_space))
    return PointerType(t, address_space)


def is_tensor_pointer(t: Type) -> bool:
    return isinstance(t, PointerType) and isinstance(t.pointee_type, RankedTensorType)


def _is_ptr(t: Type) -> bool:
    return isinstance(t, PointerType)


_FLOAT_KINDS = frozenset(
    ["f8E4M3FNUZ", "f8E4M3FN", "f8E4M3B11FNUZ", "f8E5M2", "f8E5M2FNUZ", "f16", "bf16", "f32", "f64"]
)
_INT_WIDTHS = frozenset([1, 8, 16, 32, 64])


def is_tt_float(t: Type) -> bool:
    return isinstance(t, FloatType) and t.kind in _FLOAT_KINDS


def is_tt_int(t: Type) -> bool:
    return isinstance(t, IntegerType) and t.width in _INT_WIDTHS


def _tensor_of(predicate, description: str) -> Constraint:
    return Constraint(
        description, lambda t: isinstance(t, RankedTensorType) and predicate(t.element_type)
    )


def _like(predicate, description: str) -> Constraint:
    return Constraint(
        description,
        lambda t: predicate(t) or (isinstance(t, RankedTensorType) and predicate(t.element_type)),
    )


TT_Float = Constraint("floating-point", is_tt_float)
TT_FloatTensor = _tensor_of(is_tt_float, "ranked tensor of floating-point values")
TT_FloatLike = _like(is_tt_float, "floating-point or ranked tensor of floating-point values")
TT_BoolLike = _like(lambda t: t is i1, "1-bit signless integer or ranked tensor of i1")
TT_Int = Constraint("integer", is_tt_int)
TT_IntTensor = _tensor_of(is_tt_int, "ranked tensor of integer values")
TT_IntLike = _like(is_tt_int, "integer or ranked tensor of integer values")
TT_I32Like = _like(lambda t: t is i32, "32-bit signless integer or ranked tensor of i32")
TT_I64Like = _like(lambda t: t is i64, "64-bit signless integer or ranked tensor of i64")
TT_Ptr = TypeClass(PointerType, "ptr")
TT_PtrTensor = _tensor_of(_is_ptr, "ranked tensor of ptr values")
TT_PtrLike = _like(_is_ptr, "ptr or ranked tensor of ptr values")
TT_FpIntTensor = _tensor_of(
    lambda t: is_tt_float(t) or is_tt_int(t), "ranked tensor of floating-point or integer values"
)
TT_Tensor = _tensor_of(
    lambda t: is_tt_float(t) or is_tt_int(t) or _is_ptr(t),
    "ranked tensor of floating-point, integer or ptr values",
)
TT_TensorPtr = TypeClass(PointerType, "ptr to a ranked tensor", is_tensor_pointer)
TT_TensorDescType = TypeClass(TensorDescType, "tensor descriptor")
TT_Type = one_of(
    "floating-point, integer or ptr, or ranked tensor thereof",
    TT_FloatLike,
    TT_IntLike,
    TT_PtrLike,
    TT_TensorPtr,
)
TT_PtrOrTensorPtr = one_of("ptr-like or tensor pointer", TT_PtrLike, TT_TensorPtr)


def scalar_element(t: Type) -> Type:
    """The element type of a tensor (or a block pointer's tensor), else `t`."""
    if is_tensor_pointer(t):
        return t.pointee_type.element_type
    return element_type(t)


MAX_TENSOR_NUMEL = 1 << 20  # Triton's maxTensorNumElements


def _tensor_size(op) -> str | None:
    """Triton's TensorSizeTrait: every tensor of a `tt` op (block pointers' included) has a
    power-of-two number of elements, at most 2**20."""
    for t in [v.type for v in op.operands] + [r.type for r in op.results]:
        if is_tensor_pointer(t):
            t = t.pointee_type
        if not isinstance(t, RankedTensorType):
            continue
        count = t.numel
        if count > MAX_TENSOR_NUMEL:
            return f"Maximum allowed number of elements is {MAX_TENSOR_NUMEL}, but {t} has more"
        if count & (count - 1):
            return f"Number of elements must be power-of-two, but {t} has {count}"
    return None


TensorSize = Trait("TensorSize", _tensor_size)
TT = frozenset({TensorSize})  # the traits every tt op has (TT_Op in TritonOps.td)
