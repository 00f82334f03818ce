"""The declarative assembly-format interpreter on formats written for these tests: spacing
(OpFormatGen's rules), optional groups with and without `else`, unit anchors, `oilist`, enums
by keyword, stripped and qualified dialect types, variadic and attribute-sized operands,
successors, defaults left out, and result types inferred."""

from textwrap import dedent
from typing import ClassVar

import pytest
from text_helpers import round_trip

from naiad.dialects.base import I32, EnumAttr, TypeClass, UnitAttrC
from naiad.dialects.tt.types import PointerType
from naiad.ir import (
    IntegerAttr,
    Operation,
    SameOperandsAndResultType,
    Terminator,
    attribute,
    i32,
    irdl_op,
    operand,
    opt_attribute,
    opt_operand,
    result,
    successor,
    var_operand,
    var_result,
)
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module

Color = EnumAttr("Color", {"red": 1, "green": 2, "blue": 3})


@irdl_op
class PaintOp(Operation):
    name = "fmt.paint"
    ptr = operand(TypeClass(PointerType, "ptr"))
    mask = opt_operand()
    color = attribute(Color)
    shade = opt_attribute(Color)
    fast = opt_attribute(UnitAttrC)
    out = result()
    assembly_format = (
        "$color `,` $ptr (`,` $mask^)? (`shade` `=` $shade^)? (`fast` $fast^)? attr-dict"
        " `:` type($ptr) `->` type($out)"
    )
    attribute_defaults: ClassVar[dict] = {"shade": Color.get("red")}


@irdl_op
class MixOp(Operation):
    name = "fmt.mix"
    traits = frozenset({SameOperandsAndResultType})
    lhs = operand()
    rhs = operand()
    out = result()
    assembly_format = (
        "$lhs`,` $rhs oilist(`alpha` `=` $alpha | `beta` `=` $beta) attr-dict `:` type($out)"
    )
    alpha = opt_attribute(Color)
    beta = opt_attribute(Color)


@irdl_op
class GatherOp(Operation):
    name = "fmt.gather"
    base = operand()
    indices = var_operand(I32)
    extra = var_operand()
    outs = var_result()
    assembly_format = (
        "$base `[` $indices `]` (`extra` `(` $extra^ `:` type($extra) `)`) : (`none`)? attr-dict"
        " `:` qualified(type($base)) `->` functional-type(operands, results)"
    )


@irdl_op
class JumpOp(Operation):
    name = "fmt.jump"
    traits = frozenset({Terminator})
    args = var_operand()
    dest = successor()
    assembly_format = "$dest (`(` $args^ `:` type($args) `)`)? attr-dict"


TEXT = """\
module {
  "u.region"() ({
  ^bb0(%p: !tt.ptr<f32>, %m: i1, %i: i32, %f: f32):
    %0 = fmt.paint green, %p, %m shade = blue fast : <f32> -> f32
    %1 = fmt.paint red, %p : <f32> -> f32
    %2 = fmt.mix %0, %1 beta = red alpha = green : f32
    %3 = fmt.mix %0, %1 : f32
    %4:2 = fmt.gather %p[%i, %i] extra(%f : f32) : !tt.ptr<f32> -> (!tt.ptr<f32>, i32, i32, f32) -> (f32, i32)
    %5 = fmt.gather %p[] none : !tt.ptr<f32> -> (!tt.ptr<f32>) -> f32
    fmt.jump ^bb1(%0, %i : f32, i32)
  ^bb1(%a: f32, %b: i32):
    fmt.jump ^bb1(%a, %b : f32, i32) {tag}
  }) : () -> ()
}
"""  # noqa: E501


def test_formats_parse_and_print_back():
    module = parse_module(TEXT)
    printed = print_module(module, locations=False)
    assert printed == dedent("""\
        module {
          "u.region"() ({
          ^bb0(%arg0: !tt.ptr<f32>, %arg1: i1, %arg2: i32, %arg3: f32):
            %0 = fmt.paint green, %arg0, %arg1 shade = blue fast : <f32> -> f32
            %1 = fmt.paint red, %arg0 : <f32> -> f32
            %2 = fmt.mix %0, %1 alpha = green beta = red : f32
            %3 = fmt.mix %0, %1 : f32
            %4:2 = fmt.gather %arg0[%arg2, %arg2] extra(%arg3 : f32) : !tt.ptr<f32> -> (!tt.ptr<f32>, i32, i32, f32) -> (f32, i32)
            %5 = fmt.gather %arg0[] none : !tt.ptr<f32> -> (!tt.ptr<f32>) -> f32
            fmt.jump ^bb1(%0, %arg2 : f32, i32)
          ^bb1(%6: f32, %7: i32):  // 2 preds: ^bb0, ^bb1
            fmt.jump ^bb1(%6, %7 : f32, i32) {tag}
          }) : () -> ()
        }
        """)  # noqa: E501
    round_trip(module)
    round_trip(module, generic=True)


def test_what_the_parser_builds():
    ops = list(parse_module(TEXT).walk())
    paint = next(op for op in ops if op.name == "fmt.paint")
    assert paint.attributes["color"] is IntegerAttr(2, i32)
    assert str(paint.attributes["fast"]) == "unit"
    gather = next(op for op in ops if op.name == "fmt.gather")
    sizes = gather.attributes["operandSegmentSizes"]
    assert list(sizes) == [1, 2, 1]
    assert [str(r.type) for r in gather.results] == ["f32", "i32"]


def test_defaults_are_left_out():
    module = parse_module(TEXT)
    paint = next(op for op in module.walk() if op.name == "fmt.paint")
    paint.attributes["shade"] = Color.get("red")  # the declared default
    assert "shade" not in print_module(module).split("\n")[3]


def test_result_type_from_traits():
    mix = next(op for op in parse_module(TEXT).walk() if op.name == "fmt.mix")
    assert str(mix.results[0].type) == "f32"


@pytest.mark.parametrize(
    "line, message",
    [
        ("%0 = fmt.paint purple, %p : <f32> -> f32", "unknown Color keyword 'purple'"),
        ("%0 = fmt.paint red %p : <f32> -> f32", "expected ','"),
        ("%0 = fmt.mix %f, %f alpha = red alpha = red : f32", "expected ':'"),
    ],
)
def test_format_errors(line, message):
    header = 'module {\n  "u.r"() ({\n  ^bb0(%p: !tt.ptr<f32>, %f: f32):\n'
    text = header + f"    {line}\n  }}) : () -> ()\n}}"
    with pytest.raises(Exception, match=message):
        parse_module(text)


def test_every_dialect_op_has_a_syntax():
    # Each declared op either has a format the interpreter reads, a registered hand-written
    # syntax (`custom_syntax = True`), or neither (printed generically, as upstream does).
    from naiad.ir import registered_ops
    from naiad.ir.asm_syntax import syntax_for
    from naiad.ir.format import compiled_format

    for cls in registered_ops():
        if getattr(cls, "custom_syntax", False):
            assert syntax_for(cls.name) is not None, cls.name
        elif cls.assembly_format is not None:
            assert compiled_format(cls), cls.name
