"""`tt.dot`, reductions and scans with their combine regions, extern calls, functions, calls
and the debug ops."""

from dialect_helpers import arg, args, fails, tensor

from naiad.dialects import arith, tt
from naiad.ir import (
    Block,
    Elementwise,
    FunctionType,
    IntegerAttr,
    MemoryWrite,
    ModuleOp,
    Pure,
    Region,
    StringAttr,
    SymbolRefAttr,
    bf16,
    f16,
    f32,
    i1,
    i8,
    i32,
    verify,
)


def test_dot():
    a, b, c = args(tensor([128, 64], f16), tensor([64, 32], f16), tensor([128, 32], f32))
    op = tt.DotOp(a, b, c, inputPrecision="tf32", maxNumImpreciseAcc=0)
    assert op.d.type is c.type
    assert op.inputPrecision is tt.InputPrecision.get("tf32")
    assert "maxNumImpreciseAcc" not in op.attributes  # the default
    verify(op)
    assert "inputPrecision" not in tt.DotOp(a, b, c, inputPrecision="ieee").attributes
    batched = args(tensor([2, 16, 16], f16), tensor([2, 16, 16], f16), tensor([2, 16, 16], f32))
    verify(tt.DotOp(*batched))


def test_dot_rules():
    a, b, c = args(tensor([128, 64], f16), tensor([64, 32], f16), tensor([128, 32], f32))
    fails(tt.DotOp(a, arg(tensor([32, 32], f16)), c), "second-to-last dimension")
    fails(tt.DotOp(a, b, arg(tensor([64, 32], f32))), "output shape")
    fails(tt.DotOp(a, arg(tensor([2, 64, 32], f16)), c), "same rank")
    fails(tt.DotOp(*args(*[tensor([4, 4, 4, 4], f16)] * 3)), "2d or 3d")
    fails(tt.DotOp(a, b, arg(tensor([2, 128, 32], f32))), "accumulator to have the same rank")
    fails(tt.DotOp(a, arg(tensor([64, 32], f32)), c), "same bit width")
    fails(tt.DotOp(a, b, c, d=tensor([128, 32], f16)), "result's type matches accumulator")
    x, y, z = args(tensor([2, 4, 4], f16), tensor([4, 4, 4], f16), tensor([2, 4, 4], f32))
    fails(tt.DotOp(x, y, z), "first dimension")


def test_dot_scaled():
    a, b, c = args(tensor([32, 64], i8), tensor([64, 32], i8), tensor([32, 32], f32))
    e2m1 = tt.ScaleDotElemType.get("e2m1")
    op = tt.DotScaledOp(a, b, c, a_elem_type=e2m1, b_elem_type=e2m1, fastMath=IntegerAttr(0, i1))
    verify(op)


def _sum_reduce(x, axis):
    red = tt.ReduceOp([x], axis)
    lhs, rhs = red.combineOp.block.arguments
    add = red.combineOp.block.append(arith.AddFOp(lhs, rhs))
    red.combineOp.block.append(tt.ReduceReturnOp([add.result]))
    return red


def test_reduce():
    x = arg(tensor([32, 64], f32))
    red = _sum_reduce(x, 1)
    assert red.result[0].type is tensor([32], f32)
    verify(red)
    assert _sum_reduce(arg(tensor([64], f32)), 0).result[0].type is f32
    two = tt.ReduceOp(args(tensor([8, 4], f32), tensor([8, 4], i32)), 0)
    assert len(two.combineOp.block.arguments) == 4
    assert [r.type for r in two.result] == [tensor([4], f32), tensor([4], i32)]


def test_reduce_rules():
    x = arg(tensor([32, 64], f32))
    fails(_sum_reduce(x, 2), "axis 2 is out of range")
    wrong = tt.ReduceOp([x], 1, result=[tensor([64], f32)])
    lhs, _ = wrong.combineOp.block.arguments
    wrong.combineOp.block.append(tt.ReduceReturnOp([lhs]))
    fails(wrong, "inferred type(s) 'tensor<32xf32>'")
    bad_args = tt.ReduceOp([x], 1, combineOp=Region([Block([f32])]))
    fails(bad_args, "nested block must take 2 arguments")
    typed = tt.ReduceOp([x], 1, combineOp=Region([Block([f32, f16])]))
    fails(typed, "Expected argument 1 to have type f32 but got f16")
    unterminated = tt.ReduceOp([x], 1)
    fails(unterminated, "combine operation must be terminated with a tt.reduce.return")
    returns_two = tt.ReduceOp([x], 1)
    a, b = returns_two.combineOp.block.arguments
    returns_two.combineOp.block.append(tt.ReduceReturnOp([a, b]))
    fails(returns_two, "expected combine operation to return 1 values but got 2")
    fails(tt.ReduceReturnOp([x]), "expects parent op to be one of 'tt.reduce'")


def test_scan():
    x = arg(tensor([128], f32))
    scan = tt.ScanOp([x], 0, reverse=True)
    lhs, rhs = scan.combineOp.block.arguments
    mul = scan.combineOp.block.append(arith.MulFOp(lhs, rhs))
    scan.combineOp.block.append(tt.ScanReturnOp([mul.result]))
    assert scan.result[0].type is x.type and scan.reverse.value is True
    verify(scan)
    other = tt.ScanOp([x], 0)
    a, _ = other.combineOp.block.arguments
    other.combineOp.block.append(tt.ReduceReturnOp([a]))
    fails(other, "terminated with a tt.scan.return")


def test_map_elementwise():
    x = arg(tensor([16], f32))
    op = tt.MapElementwiseOp(
        [x], pack=IntegerAttr(2, i32), result=[x.type], scalarOp=Region([Block([f32, f32])])
    )
    block = op.scalarOp.block
    block.append(tt.MapElementwiseReturnOp([block.arguments[0], block.arguments[1]]))
    verify(op)
    bad = tt.MapElementwiseOp(
        [x], pack=IntegerAttr(2, i32), result=[x.type], scalarOp=Region([Block([f32])])
    )
    bad.scalarOp.block.append(tt.MapElementwiseReturnOp([]))
    fails(bad, "region must take 2 arguments")


def test_extern_elementwise_purity_follows_its_attribute():
    x = arg(tensor([8], f32))
    pure = tt.ExternElementwiseOp([x], "__nv_expf", libname="libdevice", result=x.type)
    impure = tt.ExternElementwiseOp([x], "__nv_expf", pure=False, result=x.type)
    verify(pure)
    assert Pure in pure.traits and Elementwise in pure.traits
    assert Pure not in impure.traits and MemoryWrite in impure.traits
    assert Pure not in tt.ExternElementwiseOp.traits


def test_inline_asm():
    x = arg(tensor([8], i32))
    attrs = {
        "asm_string": StringAttr("mov.b32 $0, $1;"),
        "constraints": StringAttr("=r,r"),
        "pure": IntegerAttr(1, i1),
        "packed_element": IntegerAttr(4, i32),
    }
    op = tt.ElementwiseInlineAsmOp(args=[x], result=[x.type], **attrs)
    verify(op)
    assert Pure in op.traits
    attrs["packed_element"] = IntegerAttr(3, i32)
    fails(
        tt.ElementwiseInlineAsmOp(args=[x], result=[x.type], **attrs),
        "multiple of the op's packed_element",
    )


def _module_with(*funcs):
    return ModuleOp(funcs)


def test_func_return_call():
    sig = FunctionType([f32, i32], [f32])
    callee = tt.FuncOp(
        "helper",
        sig,
        visibility="private",
        arg_attrs=[{}, {"tt.divisibility": IntegerAttr(16, i32)}],
    )
    x, _ = callee.arguments
    callee.entry_block.append(tt.ReturnOp([x]))
    assert callee.arg_attr(1, "tt.divisibility") is IntegerAttr(16, i32)
    kernel = tt.FuncOp("kernel", FunctionType([f32, i32], []), visibility="public")
    a, b = kernel.arguments
    call = kernel.entry_block.append(tt.CallOp(callee, [a, b]))
    kernel.entry_block.append(tt.ReturnOp())
    assert call.outs[0].type is f32 and call.callee is SymbolRefAttr("helper")
    verify(_module_with(callee, kernel))


def test_func_rules():
    sig = FunctionType([f32], [f32])
    wrong_block = tt.FuncOp("f", sig, body=Region([Block([i32])]))
    wrong_block.body.block.append(tt.ReturnOp([wrong_block.arguments[0]]))
    fails(wrong_block, "type of entry block argument #0('i32') must match")
    fails(tt.FuncOp("g", sig, arg_attrs=[{}, {}], declaration=True), "argument attribute array")
    verify(tt.FuncOp("decl", sig, declaration=True))
    short = tt.FuncOp("h", sig, body=Region([Block()]))
    short.body.block.append(tt.ReturnOp())
    fails(short, "entry block must have 1 arguments")


def test_return_rules():
    f = tt.FuncOp("f", FunctionType([f32, i32], [f32]))
    x, n = f.arguments
    ret = f.entry_block.append(tt.ReturnOp([x, x]))
    fails(f, "has 2 operands, but enclosing function (@f) returns 1")
    ret.erase()
    f.entry_block.append(tt.ReturnOp([n]))
    fails(f, "type of return operand 0 (i32) doesn't match function result type (f32)")


def test_call_rules():
    callee = tt.FuncOp("callee", FunctionType([f32], [f32]), declaration=True)
    caller = tt.FuncOp("caller", FunctionType([f32, i32], []))
    x, n = caller.arguments
    body = caller.entry_block
    call = body.append(tt.CallOp("missing", [x], [f32]))
    body.append(tt.ReturnOp())
    module = _module_with(callee, caller)
    fails(module, "'missing' does not reference a valid function")
    call.callee = SymbolRefAttr("callee")
    call.set_operands([n])
    fails(module, "operand type mismatch: expected operand type f32, but provided i32")
    call.set_operands([x, x])
    fails(module, "incorrect number of operands for callee")
    call.set_operands([x])
    verify(module)
    bad = tt.CallOp("callee", [x], [bf16])
    body.insert_before(bad, body.last_op)
    fails(module, "result type mismatch at index 0")


def test_print_and_assert():
    pid, x = args(i32, tensor([128], f32))
    op = tt.PrintOp(" x: ", [pid, x], isSigned=[1, 0])
    verify(op)
    assert MemoryWrite in op.traits and op.hex.value is False
    verify(tt.PrintOp("hello"))
    verify(tt.AssertOp(arg(tensor([128], i1)), "x must be positive"))
    verify(tt.AssertOp(arg(i1), "int32 overflow"))
    fails(tt.AssertOp(arg(i8), "no"), "must be 1-bit signless integer")


def test_print_marks_integers_signed_by_default():
    pid, x = args(i32, tensor([128], f32))
    assert list(tt.PrintOp(" ", [pid, x]).isSigned) == [1, 0]
