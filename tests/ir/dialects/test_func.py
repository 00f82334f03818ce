"""`func.func`, `func.return`, `func.call`: construction, upstream's text (the body's ops
without the `func.` prefix), round trips, xDSL's reading, and one invalid case per rule."""

import pytest
from dialect_helpers import arg, fails
from middle.upstream import assert_round_trip, assert_upstream_valid

from naiad.dialects import arith, func, tt
from naiad.ir import (
    Builder,
    FunctionType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnrankedMemRefType,
    f32,
    i32,
    index,
    verify,
)
from naiad.ir.lexer import ParseError
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module


def _module_with_call():
    """@add(%a, %b) -> i32 and @main calling it, with a declaration of @ext."""
    add = func.FuncOp("add", FunctionType([i32, i32], [i32]))
    ext = func.FuncOp(
        "ext",
        FunctionType([UnrankedMemRefType(f32)], []),
        visibility="private",
        declaration=True,
    )
    main = func.FuncOp("main", FunctionType([i32], [i32, i32]))
    b = Builder()
    with b.at_end(add.entry_block):
        total = b.create(arith.AddIOp, *add.arguments).result
        b.create(func.ReturnOp, [total])
    with b.at_end(main.entry_block):
        seven = b.create(arith.ConstantOp, IntegerAttr(7, i32)).result
        call = b.create(func.CallOp, add, [main.arguments[0], seven])
        b.create(func.ReturnOp, [call.outs[0], seven])
    module = ModuleOp([add, ext, main])
    verify(module)
    return module


EXPECTED = """\
module {
  func.func @add(%arg0: i32, %arg1: i32) -> i32 {
    %0 = arith.addi %arg0, %arg1 : i32
    return %0 : i32
  }
  func.func private @ext(memref<*xf32>)
  func.func @main(%arg0: i32) -> (i32, i32) {
    %c7_i32 = arith.constant 7 : i32
    %0 = call @add(%arg0, %c7_i32) : (i32, i32) -> i32
    return %0, %c7_i32 : i32, i32
  }
}
"""


def test_functions_print_as_upstream_and_round_trip():
    module = _module_with_call()
    assert assert_round_trip(module) == EXPECTED
    assert_upstream_valid(EXPECTED)


def test_prefixed_and_generic_spellings_parse():
    text = """
    func.func @f(%x: i32) -> i32 {
      %r = func.call @f(%x) : (i32) -> i32
      func.return %r : i32
    }
    """
    module = parse_module(text)
    verify(module)
    f = module.body.first_op
    assert [op.name for op in f.entry_block] == ["func.call", "func.return"]
    generic = print_module(module, generic=True, locations=False)
    assert '"func.return"(%0) : (i32) -> ()' in generic
    assert print_module(parse_module(generic), locations=False) == print_module(
        module, locations=False
    )


def test_return_without_prefix_is_func_return_only_in_func_func():
    # `return` resolves against the enclosing op's default dialect: none in a tt.func.
    with pytest.raises(ParseError, match="custom op 'return' is unknown"):
        parse_module("tt.func @k() {\n  return\n}")
    tt_text = print_module(parse_module("tt.func @k() {\n  tt.return\n}"), locations=False)
    assert "tt.return" in tt_text


def test_attributes_of_functions_and_calls():
    signature = FunctionType([MemRefType([4], f32), index], [f32])
    f = func.FuncOp(
        "load",
        signature,
        arg_attrs=[{"llvm.noalias": IntegerAttr(1, i32)}, {}],
        res_attrs=[{"naiad.result": IntegerAttr(2, i32)}],
        attributes={"naiad.kernel": IntegerAttr(1, i32)},
    )
    b = Builder()
    with b.at_end(f.entry_block):
        call = b.create(func.CallOp, f, list(f.arguments), no_inline=True)
        b.create(func.ReturnOp, [call.outs[0]])
    text = assert_round_trip(ModuleOp([f]))
    assert (
        "func.func @load(%arg0: memref<4xf32> {llvm.noalias = 1 : i32}, %arg1: index) -> "
        "(f32 {naiad.result = 2 : i32}) attributes {naiad.kernel = 1 : i32} {"
    ) in text
    assert "%0 = call @load(%arg0, %arg1) {no_inline} : (memref<4xf32>, index) -> f32" in text
    assert_upstream_valid(text)


def _in_module(*ops):
    module = ModuleOp(ops)
    return module


def test_return_rules():
    f = func.FuncOp("f", FunctionType([i32], [i32]))
    f.entry_block.append(func.ReturnOp())
    fails(f, "has 0 operands, but enclosing function (@f) returns 1")
    g = func.FuncOp("g", FunctionType([i32, f32], [f32]))
    g.entry_block.append(func.ReturnOp([g.arguments[0]]))
    fails(g, "type of return operand 0 (i32) doesn't match function result type (f32)")
    fails(func.ReturnOp([arg(i32)]), "expects parent op to be one of 'func.func'")
    k = tt.FuncOp("k", FunctionType([], []))
    k.entry_block.append(func.ReturnOp())
    fails(k, "expects parent op to be one of 'func.func'")


def test_function_rules():
    f = func.FuncOp("f", FunctionType([i32], []), arg_attrs=[{}, {}])
    f.entry_block.append(func.ReturnOp())
    fails(f, "expects argument attribute array to have the same number of elements")
    g = func.FuncOp("g", FunctionType([i32], []))
    g.entry_block.insert_argument(1, f32)
    g.entry_block.append(func.ReturnOp())
    fails(g, "entry block must have 1 arguments to match function signature")


def _caller(callee_name, args, result_types):
    caller = func.FuncOp("caller", FunctionType([a.type for a in args], []))
    values = caller.arguments
    b = Builder()
    with b.at_end(caller.entry_block):
        b.create(func.CallOp, callee_name, list(values), result_types)
        b.create(func.ReturnOp)
    return caller


@pytest.mark.parametrize(
    ("callee", "arg_types", "result_types", "message"),
    [
        ("missing", [i32], [], "'missing' does not reference a valid function"),
        ("tt_kernel", [i32], [], "'tt_kernel' does not reference a valid function"),
        ("target", [i32, i32], [f32], "incorrect number of operands for callee"),
        ("target", [f32], [f32], "operand type mismatch: expected operand type i32"),
        ("target", [i32], [], "incorrect number of results for callee"),
        ("target", [i32], [i32], "result type mismatch at index 0"),
    ],
)
def test_call_rules(callee, arg_types, result_types, message):
    target = func.FuncOp("target", FunctionType([i32], [f32]), declaration=True)
    kernel = tt.FuncOp("tt_kernel", FunctionType([i32], []), declaration=True)
    caller = _caller(callee, [arg(t) for t in arg_types], result_types)
    module = _in_module(target, kernel, caller)
    fails(module, message)
