"""`tt` types and the enum attributes of `tt`, `arith` and `ttg`: spelling, interning,
keywords and the values Triton stores."""

import pytest

from naiad.dialects import arith, tt
from naiad.dialects.arith.attributes import FastMathFlagsAttr, IntegerOverflowFlagsAttr
from naiad.dialects.ttg import barrier
from naiad.ir import (
    DialectType,
    IntegerAttr,
    RankedTensorType,
    dialect_attribute_class,
    dialect_type_class,
    f16,
    f32,
    i1,
    i32,
    i64,
    is_pointer_like,
)


def test_pointer_spelling_elides_the_global_address_space():
    assert str(tt.ptr(f32)) == "!tt.ptr<f32>"
    assert str(tt.ptr(f32, 3)) == "!tt.ptr<f32, 3>"
    assert str(tt.ptr(RankedTensorType([64, 64], f16))) == "!tt.ptr<tensor<64x64xf16>>"
    assert str(RankedTensorType([128], tt.ptr(f32))) == "tensor<128x!tt.ptr<f32>>"


def test_pointers_are_interned_and_pointer_like():
    assert tt.ptr(f32) is tt.PointerType(f32, 1)
    assert tt.ptr(f32) is not tt.ptr(f32, 3)
    assert is_pointer_like(RankedTensorType([4], tt.ptr(i32)))
    assert isinstance(tt.ptr(f32), DialectType)
    assert dialect_type_class("tt", "ptr") is tt.PointerType


def test_tensordesc_prints_its_block_without_the_tensor_keyword():
    desc = tt.TensorDescType(RankedTensorType([64, 64], f16))
    assert str(desc) == "!tt.tensordesc<64x64xf16>"
    assert desc.shape == (64, 64) and desc.element_type is f16
    assert dialect_type_class("tt", "tensordesc") is tt.TensorDescType
    with pytest.raises(TypeError):
        tt.TensorDescType(f16)


def test_pointee_and_same_shape_pointer():
    t = RankedTensorType([8], tt.ptr(f16))
    assert tt.pointee_type(t) == RankedTensorType([8], f16)
    assert tt.pointee_type(tt.ptr(i32)) is i32
    assert tt.pointer_type_same_shape(RankedTensorType([8], f16)) is t


def test_tt_enums_hold_triton_values_as_i32():
    assert tt.CacheModifier.get("ca") is IntegerAttr(2, i32)
    assert tt.EvictionPolicy.get("evict_last") is IntegerAttr(3, i32)
    assert tt.RMWOp.get("exch") is IntegerAttr(10, i32)
    assert tt.MemSemantic.get("acq_rel") is IntegerAttr(4, i32)
    assert tt.PropagateNan.get("all") is IntegerAttr(0xFFFF, i32)
    assert tt.InputPrecision.get("ieee") is IntegerAttr(2, i32)
    assert tt.PaddingOption.keyword(IntegerAttr(2, i32)) == "nan"
    assert str(tt.CacheModifier.get(1)) == "1 : i32"  # what the generic form shows


def test_enum_constraints_reject_other_values_and_types():
    assert tt.CacheModifier(IntegerAttr(7, i32))
    assert not tt.CacheModifier(IntegerAttr(8, i32))
    assert not tt.CacheModifier(IntegerAttr(1, i64))
    with pytest.raises(ValueError):
        tt.CacheModifier.get("bogus")
    with pytest.raises(ValueError):
        tt.CacheModifier.get(0)


def test_arith_predicates_are_i64():
    assert arith.CmpIPredicate.get("uge") is IntegerAttr(9, i64)
    assert arith.CmpFPredicate.get("une") is IntegerAttr(13, i64)
    assert arith.CmpFPredicate.keyword(IntegerAttr(15, i64)) == "true"


def test_fastmath_and_overflow_are_dialect_attributes():
    assert str(FastMathFlagsAttr("nnan,ninf")) == "#arith.fastmath<nnan,ninf>"
    assert str(FastMathFlagsAttr(127)) == "#arith.fastmath<fast>"
    assert str(FastMathFlagsAttr(0)) == "#arith.fastmath<none>"
    assert FastMathFlagsAttr("fast").has("nnan")
    assert FastMathFlagsAttr.from_body("<contract>") is FastMathFlagsAttr(32)
    assert str(IntegerOverflowFlagsAttr("nsw, nuw")) == "#arith.overflow<nsw, nuw>"
    assert IntegerOverflowFlagsAttr(1).print_body() == "<nsw>"
    assert dialect_attribute_class("arith", "fastmath") is FastMathFlagsAttr
    with pytest.raises(ValueError):
        FastMathFlagsAttr("fastest")


def test_bit_enum_keywords_join_with_the_separator():
    space = barrier.AddrSpace
    assert space.keyword(space.get("all")) == "all"
    assert space.get("local|global_read") is IntegerAttr(3, i32)
    assert space.keyword(IntegerAttr(3, i32)) == "local|global_read"
    assert space.keyword(IntegerAttr(0, i32)) == "none"


def test_type_constraints():
    assert tt.TT_PtrLike(RankedTensorType([2], tt.ptr(f32)))
    assert not tt.TT_PtrLike(f32)
    assert tt.TT_TensorPtr(tt.ptr(RankedTensorType([2], f32)))
    assert not tt.TT_TensorPtr(tt.ptr(f32))
    assert tt.TT_BoolLike(i1) and not tt.TT_BoolLike(i32)
    assert tt.TT_Ptr.type_class is tt.PointerType
