"""Types: interning (equality is identity), immutability, MLIR spellings, dialect types."""

import gc
import weakref

import pytest

from naiad.ir import (
    DialectType,
    FloatType,
    FunctionType,
    IndexType,
    IntegerType,
    NoneType,
    RankedTensorType,
    StringAttr,
    bf16,
    dialect_type_class,
    element_type,
    encoding_of,
    f16,
    f32,
    i1,
    i32,
    i64,
    index,
    is_float_like,
    is_integer_like,
    is_pointer_like,
    shape_of,
    with_element_type,
)
from naiad.ir.interning import _TABLE


class PtrType(DialectType):
    """A pointer type as a dialect would declare it: `!toy.ptr<f32>`, `!toy.ptr<f32, 3>`."""

    dialect = "toy"
    mnemonic = "ptr"
    is_pointer = True
    __slots__ = ("pointee", "address_space")  # noqa: RUF023 (order = parameters)

    def __new__(cls, pointee, address_space=1):
        return cls._intern(pointee, address_space)

    def print_body(self):
        space = "" if self.address_space == 1 else f", {self.address_space}"
        return f"<{self.pointee}{space}>"


class OpaqueThing(DialectType):
    dialect = "toy"
    mnemonic = "thing"
    __slots__ = ("text",)

    def __new__(cls, text):
        return cls._intern(text)

    def print_body(self):
        return f" {self.text}"  # not of the `ident<...>` form: printed `!toy<thing ...>`


def test_construction_is_interned():
    assert IntegerType(32) is i32
    assert FloatType("f32") is f32
    assert IndexType() is index
    assert RankedTensorType([4, 8], f32) is RankedTensorType((4, 8), f32)
    assert RankedTensorType([4], f32) is not RankedTensorType([4], f16)
    assert FunctionType([i32], [f32]) is FunctionType((i32,), (f32,))
    assert PtrType(f32) is PtrType(f32, 1)
    assert PtrType(f32) is not PtrType(f32, 3)


def test_types_are_immutable():
    with pytest.raises(AttributeError):
        i32.width = 64
    with pytest.raises(AttributeError):
        RankedTensorType([4], f32).shape = (8,)


def test_unreferenced_types_leave_the_table():
    key = (RankedTensorType, (12345, 7), bf16, None)
    gone = weakref.ref(RankedTensorType([12345, 7], bf16))
    gc.collect()
    assert gone() is None and key not in _TABLE


@pytest.mark.parametrize(
    ("t", "spelling"),
    [
        (i1, "i1"),
        (i64, "i64"),
        (bf16, "bf16"),
        (FloatType("f8E4M3FN"), "f8E4M3FN"),
        (FloatType("f8E4M3B11FNUZ"), "f8E4M3B11FNUZ"),
        (index, "index"),
        (NoneType(), "none"),
        (RankedTensorType([128, 64], f32), "tensor<128x64xf32>"),
        (RankedTensorType([], f32), "tensor<f32>"),
        (RankedTensorType([0], i32), "tensor<0xi32>"),
        (RankedTensorType([4], i32, StringAttr("enc")), 'tensor<4xi32, "enc">'),
        (RankedTensorType([128], PtrType(f32)), "tensor<128x!toy.ptr<f32>>"),
        (PtrType(f16, 3), "!toy.ptr<f16, 3>"),
        (OpaqueThing("x y"), "!toy<thing x y>"),
        (FunctionType([i32, f32], [f32]), "(i32, f32) -> f32"),
        (FunctionType([], []), "() -> ()"),
        (FunctionType([i32], [i32, i64]), "(i32) -> (i32, i64)"),
        (FunctionType([], [FunctionType([i32], [i32])]), "() -> ((i32) -> i32)"),
    ],
)
def test_spelling(t, spelling):
    assert str(t) == spelling


def test_dialect_types_are_registered_by_mnemonic():
    assert dialect_type_class("toy", "ptr") is PtrType
    assert dialect_type_class("toy", "nope") is None
    with pytest.raises(ValueError, match="already registered"):

        class Other(DialectType):
            dialect = "toy"
            mnemonic = "ptr"


def test_invalid_types_are_refused():
    with pytest.raises(ValueError):
        IntegerType(0)
    with pytest.raises(ValueError, match="unknown float type"):
        FloatType("f12")
    with pytest.raises(ValueError):
        RankedTensorType([-1], f32)
    with pytest.raises(TypeError):
        RankedTensorType([2], RankedTensorType([2], f32))


def test_element_and_shape_helpers():
    tensor = RankedTensorType([4, 2], i32, StringAttr("enc"))
    assert element_type(tensor) is i32 and element_type(f32) is f32
    assert shape_of(tensor) == (4, 2) and shape_of(i32) == ()
    assert encoding_of(tensor) is StringAttr("enc") and encoding_of(i32) is None
    assert with_element_type(tensor, f32) is RankedTensorType([4, 2], f32, StringAttr("enc"))
    assert with_element_type(i32, f32) is f32
    assert tensor.rank == 2 and tensor.numel == 8
    assert tensor.clone(encoding=None) is RankedTensorType([4, 2], i32)
    assert is_integer_like(tensor) and is_integer_like(index) and not is_integer_like(f32)
    assert is_float_like(RankedTensorType([2], f16)) and not is_float_like(i1)
    assert is_pointer_like(RankedTensorType([2], PtrType(f32))) and not is_pointer_like(i64)
