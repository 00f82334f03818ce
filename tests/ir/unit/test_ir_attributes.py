"""Attributes and locations: interning and their exact MLIR spellings (floats included)."""

import math

import pytest

from naiad.ir import (
    ArrayAttr,
    BoolAttr,
    CallSiteLoc,
    DenseArrayAttr,
    DenseElementsAttr,
    DialectAttribute,
    DictionaryAttr,
    FileLineColLoc,
    FloatAttr,
    FloatType,
    FusedLoc,
    IntegerAttr,
    NameLoc,
    RankedTensorType,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
    UnknownLoc,
    bf16,
    dialect_attribute_class,
    f16,
    f32,
    f64,
    file_line_col,
    i1,
    i8,
    i32,
    i64,
    index,
)


def tensor(*shape, element=f32):
    return RankedTensorType(shape, element)


def test_integer_attributes():
    assert str(IntegerAttr(42, i32)) == "42 : i32"
    assert str(IntegerAttr(-7, index)) == "-7 : index"
    assert IntegerAttr(2**32 - 1, i32) is IntegerAttr(-1, i32)  # signless: stored signed
    assert str(IntegerAttr(255, i8)) == "-1 : i8"
    assert IntegerAttr(42, i32) is not IntegerAttr(42, i64)


def test_i1_integers_are_bool_attributes():
    assert IntegerAttr(1, i1) is BoolAttr(True)
    assert str(BoolAttr(False)) == "false"
    assert BoolAttr(True).value is True and isinstance(BoolAttr(True), IntegerAttr)


@pytest.mark.parametrize(
    ("value", "kind", "spelling"),
    [
        (1.0, "f32", "1.000000e+00"),
        (0.0, "f32", "0.000000e+00"),
        (-0.0, "f32", "-0.000000e+00"),
        (math.inf, "f32", "0x7F800000"),
        (-math.inf, "f32", "0xFF800000"),
        (math.nan, "f32", "0x7FC00000"),
        (math.inf, "f64", "0x7FF0000000000000"),
        (math.inf, "f16", "0x7C00"),
        (1e-8, "f64", "1.000000e-08"),
        # APFloat truncates before it rounds, so f32(1e-8) misses the short form, as in mlir-opt
        (1e-8, "f32", "9.99999993E-9"),
        (1e-5, "f32", "9.99999974E-6"),
        (3.14, "f32", "3.140000e+00"),
        (3.14, "f64", "3.140000e+00"),
        (0.7, "f32", "0.699999988"),
        (0.7, "f64", "0.69999999999999996"),
        (0.1, "f64", "1.000000e-01"),
        (1 / 3, "f64", "0.33333333333333331"),
        (-3.4028234663852886e38, "f32", "-3.40282347E+38"),
        (1.4426950408889634, "f32", "1.44269502"),
        (0.01, "f32", "0.00999999977"),
        (16777216.0, "f32", "0x4B800000"),  # integral and too long: hex
        (123456789.0, "f64", "0x419D6F3454000000"),
        (2.0**60, "f64", "1.152921504606847E+18"),
        (5e-324, "f64", "4.940660e-324"),
        (0.1, "f16", "9.997550e-02"),
        (0.1, "bf16", "1.000980e-01"),
        (448.0, "f8E4M3FN", "4.480000e+02"),
        (math.nan, "f8E4M3FN", "0x7F"),
    ],
)
def test_float_spelling(value, kind, spelling):
    t = FloatType(kind)
    assert str(FloatAttr(value, t)) == f"{spelling} : {t}"


def test_float_attributes_are_told_apart_by_bits():
    assert FloatAttr(0.0, f32) is not FloatAttr(-0.0, f32)
    assert FloatAttr(math.nan, f32) is FloatAttr(math.nan, f32)
    assert FloatAttr(0.1, f32) is FloatAttr(0.10000000149011612, f32)  # rounded to the type
    assert FloatAttr(0.1, f32).value == 0.10000000149011612
    assert FloatAttr(1e39, f32).value == math.inf
    assert FloatAttr(1.0, f16) is not FloatAttr(1.0, bf16)


def test_dense_elements_attributes():
    assert str(DenseElementsAttr(tensor(128), 1.0)) == "dense<1.000000e+00> : tensor<128xf32>"
    full = DenseElementsAttr(tensor(2, 2, element=i32), [1, 2, 3, 4])
    assert str(full) == "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>"
    assert full.elements() == (1, 2, 3, 4) and not full.is_splat
    same = DenseElementsAttr(tensor(2, 2, element=i32), [5, 5, 5, 5])
    assert same.is_splat and same is DenseElementsAttr(tensor(2, 2, element=i32), 5)
    assert str(same) == "dense<5> : tensor<2x2xi32>"
    assert str(DenseElementsAttr(tensor(0), [])) == "dense<> : tensor<0xf32>"
    assert str(DenseElementsAttr(tensor(2, element=i1), [1, 0])) == (
        "dense<[true, false]> : tensor<2xi1>"
    )
    mixed_zero = DenseElementsAttr(tensor(2), [0.0, -0.0])
    assert not mixed_zero.is_splat  # -0.0 differs from 0.0 bit for bit
    with pytest.raises(ValueError):
        DenseElementsAttr(tensor(3), [1.0, 2.0])


def test_large_dense_elements_print_as_hex():
    attr = DenseElementsAttr(tensor(101, element=i8), list(range(101)))
    assert str(attr).startswith('dense<"0x000102') and str(attr).endswith('"> : tensor<101xi8>')
    floats = DenseElementsAttr(tensor(101), [float(i) for i in range(101)])
    assert str(floats).startswith('dense<"0x000000000000803F')  # 0.0, 1.0 little-endian


def test_dense_array_attributes():
    assert str(DenseArrayAttr(i32, [1, 2])) == "array<i32: 1, 2>"
    assert str(DenseArrayAttr(i64, [])) == "array<i64>"
    assert str(DenseArrayAttr(i1, [True, False])) == "array<i1: true, false>"
    assert str(DenseArrayAttr(f32, [0.5])) == "array<f32: 5.000000e-01>"
    assert DenseArrayAttr(i32, [1, 2]) is DenseArrayAttr(i32, (1, 2))
    assert list(DenseArrayAttr(i32, [3, 4])) == [3, 4]


def test_containers_and_references():
    array = ArrayAttr([IntegerAttr(1, i64), FloatAttr(2.0, f64), IntegerAttr(3, i32)])
    assert str(array) == "[1, 2.000000e+00, 3 : i32]"  # i64 and f64 types elided in arrays
    entries = {"b": UnitAttr(), "a": IntegerAttr(1, i32), "x y": StringAttr("s")}
    assert str(DictionaryAttr(entries)) == '{a = 1 : i32, b, "x y" = "s"}'
    assert DictionaryAttr(entries)["a"] is IntegerAttr(1, i32)
    assert str(StringAttr('a"b\\\n\u00e9')) == '"a\\22b\\\\\\0A\\C3\\A9"'
    assert str(SymbolRefAttr("kernel")) == "@kernel"
    assert str(SymbolRefAttr("outer", ["inner"])) == "@outer::@inner"
    assert str(SymbolRefAttr("a b")) == '@"a b"'
    assert str(TypeAttr(tensor(4))) == "tensor<4xf32>"
    assert str(UnitAttr()) == "unit"


class CacheModifierAttr(DialectAttribute):
    dialect = "toy"
    mnemonic = "cache_modifier"
    __slots__ = ("value",)

    def __new__(cls, value):
        return cls._intern(value)

    def print_body(self):
        return f"<{self.value}>"


class OddAttr(DialectAttribute):
    dialect = "toy"
    mnemonic = "odd"
    __slots__ = ()

    def __new__(cls):
        return cls._intern()

    def print_body(self):
        return " 1 2"


def test_dialect_attributes():
    assert str(CacheModifierAttr("none")) == "#toy.cache_modifier<none>"
    assert str(OddAttr()) == "#toy<odd 1 2>"
    assert CacheModifierAttr("ca") is CacheModifierAttr("ca")
    assert dialect_attribute_class("toy", "cache_modifier") is CacheModifierAttr


def test_location_spellings():
    pos = FileLineColLoc("kernel.py", 12, 8)
    assert str(UnknownLoc()) == "loc(unknown)"
    assert str(pos) == 'loc("kernel.py":12:8)'
    assert str(NameLoc("x", pos)) == 'loc("x"("kernel.py":12:8))'
    assert str(NameLoc("x")) == 'loc("x")'
    caller = FileLineColLoc("main.py", 3, 1)
    assert str(CallSiteLoc(pos, caller)) == 'loc(callsite("kernel.py":12:8 at "main.py":3:1))'
    fused = FusedLoc([pos, caller], StringAttr("m"))
    assert str(fused) == 'loc(fused<"m">["kernel.py":12:8, "main.py":3:1])'


def test_fused_locations_normalize_as_mlir_does():
    a, b = FileLineColLoc("a.py", 1, 1), FileLineColLoc("b.py", 2, 2)
    assert FusedLoc([a]) is a
    assert FusedLoc([UnknownLoc()]) is UnknownLoc()
    assert FusedLoc([a, UnknownLoc(), a, b]) is FusedLoc([a, b])
    assert FusedLoc([FusedLoc([a, b]), a]) is FusedLoc([a, b])


def test_file_line_col_looks_through_wrappers():
    pos = FileLineColLoc("k.py", 5, 2)
    assert file_line_col(NameLoc("x", pos)) is pos
    assert file_line_col(CallSiteLoc(NameLoc("f", pos), UnknownLoc())) is pos
    assert file_line_col(FusedLoc([UnknownLoc(), pos])) is pos
    assert file_line_col(UnknownLoc()) is None
