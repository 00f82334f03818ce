"""`linalg` text beyond the golden files (test_linalg_golden.py): the short form upstream
prints for a body of one op, the text of ops built in Python, the parser's errors."""

import pytest
from middle.upstream import assert_upstream_valid

from naiad.dialects import arith, func, linalg
from naiad.ir import FunctionType, MemRefType, ModuleOp, RankedTensorType, f32, verify
from naiad.ir.affine import AffineMap
from naiad.ir.lexer import ParseError
from naiad.ir.parser import parse_attribute, parse_module
from naiad.ir.printer import print_module


def test_the_short_form_reads_as_its_body():
    """`{ arith.addf }` stands for a body applying the op to the block arguments in order (the
    init's first, for a reduction), which is printed in full."""
    text = (
        "func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %acc: tensor<4xf32>) {\n"
        "  %r = linalg.reduce { arith.addf } ins(%x : tensor<4x8xf32>)"
        " outs(%acc : tensor<4xf32>) dimensions = [1]\n"
        "  %m = linalg.map { arith.mulf {fastmath = #arith.fastmath<fast>} }"
        " ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%x : tensor<4x8xf32>)\n"
        "  return\n}\n"
    )
    module = parse_module(text)
    verify(module)
    reduce, mapped = list(module.body.first_op.body.blocks[0])[:2]
    payload = reduce.body.first_op
    assert payload.name == "arith.addf"
    assert payload.operands == (reduce.body.arguments[1], reduce.body.arguments[0])
    payload = mapped.body.first_op
    assert payload.operands == tuple(mapped.body.arguments)
    assert payload.attributes["fastmath"].has("fast")
    printed = print_module(module, locations=False)
    assert "    %reduced = linalg.reduce ins(%arg0 : tensor<4x8xf32>) outs(%arg2 : " in printed
    assert (
        "dimensions = [1] \n      (%in: f32, %init: f32) {\n        %0 = arith.addf %init"
        in printed
    )
    assert "(%in: f32, %in_0: f32) {\n        %0 = arith.mulf %in, %in_0 fastmath<fast>" in printed
    assert_upstream_valid(printed, allow={"linalg.map"})


def test_builders_print_as_upstream():
    t = RankedTensorType([16], f32)
    m = MemRefType([16], f32)
    function = func.FuncOp("k", FunctionType([t, t, m, m], []))
    x, init, source, buffer = function.arguments
    op = linalg.GenericOp([x], [init], [AffineMap.identity(1)] * 2, ["parallel"])
    function.entry_block.append(op)
    total = op.body.append(arith.AddFOp(*op.body.arguments))
    op.body.append(linalg.YieldOp([total.result]))
    function.entry_block.append(linalg.CopyOp([source], [buffer]))
    function.entry_block.append(func.ReturnOp([]))
    module = ModuleOp()
    module.body.append(function)
    verify(module)
    printed = print_module(module, locations=False)
    assert (
        "    %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> "
        '(d0)>], iterator_types = ["parallel"]} ins(%arg0 : tensor<16xf32>) outs(%arg1 : '
        "tensor<16xf32>) {\n    ^bb0(%in: f32, %out: f32):\n      %1 = arith.addf %in, %out : f32\n"
        "      linalg.yield %1 : f32\n    } -> tensor<16xf32>\n"
        "    linalg.copy ins(%arg2 : memref<16xf32>) outs(%arg3 : memref<16xf32>)\n"
    ) in printed
    assert_upstream_valid(printed)


_T = "tensor<4xf32>"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            f"linalg.generic {{indexing_maps = []}} ins(%x : {_T}) outs(%x : {_T}) {{\n}}",
            "expected iterator_types array attribute",
        ),
        (
            f'linalg.generic {{indexing_maps = [], iterator_types = ["window"]}} outs(%x : {_T})'
            " {\n}",
            'unexpected iterator_type ("window")',
        ),
        (f"linalg.reduce ins(%x : {_T}) outs(%x : {_T}) (%a: f32) {{\n}}", "expected 'dimensions'"),
        (
            f"linalg.transpose ins(%x : {_T}) outs(%x : {_T}) permutation = [0, x]",
            "expected integer",
        ),
        (f"linalg.copy ins(%x, %x : {_T}) outs(%x : {_T})", "2 operands but 1 types"),
    ],
)
def test_parse_errors(body, message):
    text = f"func.func @f(%x: tensor<4xf32>) {{\n  {body}\n  return\n}}\n"
    with pytest.raises(ParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_module(text)


def test_iterator_types_read_as_attributes_too():
    text = (
        "func.func @f(%x: tensor<4xf32>) {\n  %0 = linalg.generic {indexing_maps = "
        "[affine_map<(d0) -> (d0)>], iterator_types = [#linalg.iterator_type<parallel>]} "
        "outs(%x : tensor<4xf32>) {\n  ^bb0(%out: f32):\n    linalg.yield %out : f32\n  } -> "
        "tensor<4xf32>\n  return\n}\n"
    )
    module = parse_module(text)
    verify(module)
    assert 'iterator_types = ["parallel"]' in print_module(module, locations=False)
    generic = print_module(module, generic=True, locations=False)
    assert "iterator_types = [#linalg.iterator_type<parallel>]" in generic
    assert "operandSegmentSizes = array<i32: 0, 1>" in generic
    assert parse_attribute("#linalg.iterator_type<reduction>") is linalg.REDUCTION
    assert str(linalg.PARALLEL) == "#linalg.iterator_type<parallel>"
    with pytest.raises(ParseError, match="unknown iterator type 'window'"):
        parse_attribute("#linalg.iterator_type<window>")
