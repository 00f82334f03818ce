"""Types, attributes and locations: every spelling `str()` gives parses back to the same
(interned) object, and bad input is reported at its line and column."""

import math

import pytest

from naiad.dialects.arith.attributes import FastMathFlagsAttr
from naiad.dialects.tt.types import PointerType, TensorDescType
from naiad.dialects.ub import PoisonAttr
from naiad.ir import (
    ArrayAttr,
    BoolAttr,
    CallSiteLoc,
    DenseArrayAttr,
    DenseElementsAttr,
    DictionaryAttr,
    FileLineColLoc,
    FloatAttr,
    FloatType,
    FunctionType,
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
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
    index,
)
from naiad.ir.lexer import ParseError
from naiad.ir.parser import Parser, parse_attribute, parse_module

TYPES = [
    i1,
    i32,
    f16,
    bf16,
    FloatType("f8E4M3FN"),
    index,
    RankedTensorType((128, 64), f32),
    RankedTensorType((), f32),
    RankedTensorType((1024,), PointerType(f32)),
    PointerType(f16, 3),
    PointerType(RankedTensorType((64, 64), f16)),
    TensorDescType(RankedTensorType((64, 64), f16)),
    FunctionType([i32, f32], [f32]),
    FunctionType([], []),
    FunctionType([i32], [i32, i64]),
    FunctionType([i32], [FunctionType([i32], [i32])]),
]


@pytest.mark.parametrize("t", TYPES, ids=str)
def test_types_parse_back(t):
    parser = Parser(str(t))
    assert parser.parse_type() is t
    assert parser.lex.at_end()


ATTRIBUTES = [
    IntegerAttr(42, i32),
    IntegerAttr(-1, i8),
    IntegerAttr(7, i64),
    IntegerAttr(3, index),
    BoolAttr(True),
    FloatAttr(1.0, f32),
    FloatAttr(0.7, f32),
    FloatAttr(1e-5, f32),
    FloatAttr(math.inf, f32),
    FloatAttr(-math.inf, f16),
    FloatAttr(math.nan, f32),
    FloatAttr(-0.0, f64),
    FloatAttr(2.5, bf16),
    StringAttr('with "quotes", \\ and \n newline'),
    UnitAttr(),
    TypeAttr(RankedTensorType((4,), i32)),
    ArrayAttr([IntegerAttr(1, i64), IntegerAttr(2, i32), StringAttr("x")]),
    DictionaryAttr({"a": IntegerAttr(1, i32), "flag": UnitAttr(), "ttg.num-warps": BoolAttr(0)}),
    SymbolRefAttr("kernel"),
    SymbolRefAttr("outer", ["inner"]),
    SymbolRefAttr("triton.language.standard.sum__fp32S128S"),
    SymbolRefAttr("name with <spaces>"),
    DenseArrayAttr(i32, [1, 0, 2]),
    DenseArrayAttr(i32, []),
    DenseElementsAttr(RankedTensorType((128,), f32), 0.0),
    DenseElementsAttr(RankedTensorType((4,), i32), [1, -2, 3, 4]),
    DenseElementsAttr(RankedTensorType((2, 2), i1), [True, False, False, True]),
    DenseElementsAttr(RankedTensorType((2, 3), f32), [0.5, 1.0, -2.0, 3.0, 0.1, math.inf]),
    DenseElementsAttr(RankedTensorType((1024,), i64), -2147483648),
    DenseElementsAttr(RankedTensorType((200,), i32), list(range(200))),
    DenseElementsAttr(RankedTensorType((128,), f16), [i / 7 for i in range(128)]),
    FastMathFlagsAttr("fast"),
    PoisonAttr(),
    FileLineColLoc("kernel.py", 3, 5),
    NameLoc("x", FileLineColLoc("k.py", 1, 2)),
    NameLoc("only a name"),
    CallSiteLoc(FileLineColLoc("a.py", 1, 1), NameLoc("n", FileLineColLoc("b.py", 2, 2))),
    FusedLoc([FileLineColLoc("a.py", 1, 1), FileLineColLoc("b.py", 2, 2)]),
    FusedLoc([FileLineColLoc("a.py", 1, 1), UnknownLoc()], StringAttr("cse")),
    UnknownLoc(),
]


@pytest.mark.parametrize("attr", ATTRIBUTES, ids=lambda a: str(a)[:40])
def test_attributes_parse_back(attr):
    assert parse_attribute(str(attr)) is attr


def test_large_dense_constants_print_as_hex_and_parse_back():
    attr = DenseElementsAttr(RankedTensorType((200,), i32), list(range(200)))
    assert str(attr).startswith('dense<"0x00000000010000000200')
    assert parse_attribute(str(attr)) is attr


def test_literal_defaults_and_spellings():
    assert parse_attribute("5") is IntegerAttr(5, i64)
    assert parse_attribute("2.5") is FloatAttr(2.5, f64)
    assert parse_attribute("0x7F800000 : f32") is FloatAttr(math.inf, f32)
    assert parse_attribute("dense<0xFF800000> : tensor<4xf32>") is DenseElementsAttr(
        RankedTensorType((4,), f32), -math.inf
    )
    assert parse_attribute("[1, 2 : i32]") is ArrayAttr([IntegerAttr(1, i64), IntegerAttr(2, i32)])
    assert parse_attribute("{b, a = 1 : i32}") is DictionaryAttr(
        {"a": IntegerAttr(1, i32), "b": UnitAttr()}
    )


@pytest.mark.parametrize(
    "text, line, col, message",
    [
        ("module {\n  %0 = arith.addi %a, : i32\n}", 2, 23, "expected SSA operand"),
        ("module {\n  %0 = foo.bar %a : i32\n}", 2, 8, "custom op 'foo.bar' is unknown"),
        ('module {\n  "x.y"() : () -> tensor<4xq32>\n}', 2, 28, "unknown type 'q32'"),
        (
            "module {\n  %0 = arith.constant 1 : i32\n  %0 = arith.constant 2 : i32\n}",
            3,
            3,
            "redefinition",
        ),
        ('module {\n  "x.y"(%v) : (i32) -> ()\n}', 2, 9, "use of undeclared SSA value name '%v'"),
        ('module {\n  "x.y"() : () -> () loc(#nope)\n}', 2, 26, "undefined location alias"),
        ('module {\n  "x.y"()[^bb9] : () -> ()\n}', 2, 11, "undefined block"),
        ("module {\n  %0 = arith.cmpi slx, %a, %a : i32\n}", 2, 19, "unknown CmpIPredicate"),
        ('module {\n  "x.y"() {a = } : () -> ()\n}', 2, 16, "expected attribute value"),
    ],
)
def test_errors_carry_line_and_column(text, line, col, message):
    with pytest.raises(ParseError) as info:
        parse_module(text, "in.mlir")
    error = info.value
    assert (error.filename, error.line, error.col) == ("in.mlir", line, col)
    assert message in error.message
    assert str(error).startswith(f"in.mlir:{line}:{col}: error: ")
    assert "\n" not in str(error)


def test_damaged_text_raises_only_parse_errors():
    # Characters deleted, doubled or replaced at random in a Triton dump: the parser either
    # reads the result or reports a ParseError, never another exception.
    import os
    import random

    path = os.path.join(os.path.dirname(__file__), "..", "fixtures", "lang_elementwise.ttir")
    with open(path) as f:
        text = f.read()
    rng = random.Random(2026)
    for _ in range(300):
        i = rng.randrange(len(text))
        kind = rng.choice(("delete", "double", "replace"))
        if kind == "delete":
            damaged = text[:i] + text[i + rng.choice((1, 2, 5)) :]
        elif kind == "double":
            damaged = text[:i] + text[i : i + 3] + text[i:]
        else:
            damaged = text[:i] + rng.choice(' ,:%#()<>{}[]"x0=') + text[i + 1 :]
        try:
            parse_module(damaged, "damaged.ttir")
        except ParseError as error:
            assert str(error).startswith("damaged.ttir:")
