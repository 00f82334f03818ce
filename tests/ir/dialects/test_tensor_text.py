"""`tensor` text beyond the golden files (test_linalg_golden.py): the generic form of the
slices' mixed lists, and the parser's errors."""

import re

import pytest

from naiad.ir import verify
from naiad.ir.equality import assert_structurally_equal
from naiad.ir.lexer import ParseError
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module


def test_the_generic_form_holds_the_static_lists():
    text = (
        "func.func @f(%t: tensor<8x16xf32>, %o: index, %n: index) {\n"
        "  %s = tensor.extract_slice %t[0, %o] [4, %n] [1, 1] : tensor<8x16xf32> to "
        "tensor<4x?xf32>\n"
        "  %u = tensor.insert_slice %s into %t[0, %o] [4, %n] [1, 1] : tensor<4x?xf32> into "
        "tensor<8x16xf32>\n  return\n}\n"
    )
    module = parse_module(text)
    verify(module)
    generic = print_module(module, generic=True, locations=False)
    assert "static_offsets = array<i64: 0, -9223372036854775808>" in generic
    assert "operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>" in generic
    assert "operandSegmentSizes = array<i32: 1, 1, 1, 0>" in generic
    assert_structurally_equal(module, parse_module(generic), locations=False)
    printed = print_module(module, locations=False)
    assert "%extracted_slice = tensor.extract_slice %arg0[0, %arg1] [4, %arg2] [1, 1] :" in printed
    assert "%inserted_slice = tensor.insert_slice %extracted_slice into %arg0[0, %arg1]" in printed


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("%0 = tensor.extract_slice %t[0 [4] [1] : tensor<8xf32> to tensor<4xf32>", "expected ']'"),
        (
            "%0 = tensor.extract_slice %t[0] [4] [1] : tensor<8xf32> into tensor<4xf32>",
            "expected 'to'",
        ),
        (
            "%0 = tensor.insert_slice %t into %t[0] [8] : tensor<8xf32> into tensor<8xf32>",
            "expected '['",
        ),
        (
            "%0 = tensor.expand_shape %t [[0, 1]] [2, 4] : tensor<8xf32> into tensor<2x4xf32>",
            "expected 'output_shape'",
        ),
        ("%0 = tensor.concat dim 0 %t : (tensor<8xf32>) -> tensor<8xf32>", "expected '('"),
    ],
)
def test_parse_errors(body, message):
    text = f"func.func @f(%t: tensor<8xf32>) {{\n  {body}\n  return\n}}\n"
    with pytest.raises(ParseError, match=re.escape(message)):
        parse_module(text)
