"""The verifier: declarations, traits, terminators, SSA dominance, isolation, successors."""

import pytest
from ir_toy import (
    AddOp,
    BranchOp,
    CondBranchOp,
    ConstantOp,
    FuncOp,
    LoopOp,
    NegOp,
    PrintOp,
    ReturnOp,
    YieldOp,
)

from naiad.ir import (
    Block,
    Elementwise,
    FileLineColLoc,
    IntegerAttr,
    ModuleOp,
    Operation,
    Pure,
    RankedTensorType,
    Region,
    SameOperandsAndResultEncoding,
    SameOperandsShape,
    StringAttr,
    VerificationError,
    create_operation,
    f32,
    i32,
    i64,
    irdl_op,
    result,
    var_operand,
    verify,
)


def const(value=1, type=i32):
    return ConstantOp(value=IntegerAttr(value, type), result=type)


def func(*ops, name="f"):
    """A test.func holding `ops` in one block, terminated by a return."""
    f = FuncOp(sym_name=StringAttr(name))
    body = f.body.add_block()
    for op in ops:
        body.append(op)
    body.append(ReturnOp([]))
    return f


def fails(module, message):
    with pytest.raises(VerificationError) as caught:
        verify(module)
    assert message in str(caught.value), str(caught.value)
    return caught.value


def test_a_valid_module_verifies():
    a = const()
    loop = LoopOp([a.result], outs=[i32])
    body = loop.body.add_block(Block([i32]))
    total = body.append(AddOp(body.arguments[0], a.result))
    body.append(YieldOp([total.result]))
    verify(ModuleOp([func(a, loop, PrintOp([loop.outs[0]]))]))


def test_errors_name_the_op_and_its_location():
    a = const()
    bad = create_operation("test.add", [a.result], [i32], location=FileLineColLoc("k.py", 3, 9))
    error = fails(ModuleOp([func(a, bad)]), "expected 2 operands, but found 1")
    assert str(error) == "k.py:3:9: error: 'test.add' op expected 2 operands, but found 1"
    assert error.op is bad and error.message == "expected 2 operands, but found 1"


def test_wrong_operand_type():
    x = const()
    fl = create_operation("foo.make_float", [], [f32])
    add = create_operation("test.add", [fl.results[0], x.result], [f32])
    fails(
        ModuleOp([func(x, fl, add)]),
        "operand #0 ('lhs') must be signless-integer-like, but got 'f32'",
    )


def test_wrong_result_count():
    a = const()
    add = create_operation("test.add", [a.result, a.result], [])
    fails(ModuleOp([func(a, add)]), "expected 1 results, but found 0")


def test_missing_and_mistyped_attributes():
    missing = create_operation("test.constant", [], [i32])
    fails(ModuleOp([func(missing)]), "requires attribute 'value'")
    wrong = create_operation("test.constant", [], [i32], {"value": StringAttr("1")})
    fails(ModuleOp([func(wrong)]), "attribute 'value' failed to satisfy constraint: IntegerAttr")


def test_trait_rules():
    a, b = const(1, i32), const(2, i64)
    mixed = create_operation("test.add", [a.result, b.result], [i32])
    fails(ModuleOp([func(a, b, mixed)]), "requires the same type for all operands and results")
    stray_yield = YieldOp([])
    fails(ModuleOp([func(stray_yield)]), "expects parent op to be one of 'test.loop'")
    fails(ModuleOp([func(name="f"), func(name="f")]), "redefinition of symbol named 'f'")


def test_use_before_definition_in_a_block():
    a = const()
    neg = NegOp(a.result)
    fails(ModuleOp([func(neg, a)]), "operand #0 does not dominate this use")


def test_use_of_a_value_from_a_sibling_region():
    a = const()
    first = LoopOp(outs=[])
    inner = first.body.add_block().append(NegOp(a.result))
    first.body.block.append(YieldOp([]))
    second = LoopOp(outs=[])
    second.body.add_block().append(NegOp(inner.result))
    second.body.block.append(YieldOp([]))
    fails(ModuleOp([func(a, first, second)]), "'test.neg' op operand #0 does not dominate")


def test_a_result_used_inside_its_own_region():
    loop = LoopOp(outs=[i32])
    body = loop.body.add_block()
    body.append(NegOp(loop.outs[0]))
    body.append(YieldOp([]))
    fails(ModuleOp([func(loop)]), "does not dominate this use")


def test_isolated_from_above():
    a = const()
    outer = func(a, name="outer")
    nested = func(NegOp(a.result), name="nested")
    outer.body.block.insert_before(nested, outer.body.block.last_op)
    fails(ModuleOp([outer]), "defined outside the region of 'test.func'")


def test_missing_terminator_and_empty_block():
    f = FuncOp(sym_name=StringAttr("f"))
    f.body.add_block().append(const())
    fails(ModuleOp([f]), "block #0 in region #0 must end with a terminator, found 'test.constant'")
    empty = FuncOp(sym_name=StringAttr("g"))
    empty.body.add_block()
    fails(ModuleOp([empty]), "empty block #0 in region #0: expects a terminator")


def test_terminator_must_be_last():
    f = func(const())
    f.body.block.prepend(ReturnOp([]))
    fails(ModuleOp([f]), "'test.return' op must be the last operation in its block")


def test_successor_arguments():
    f = FuncOp(sym_name=StringAttr("f"))
    entry = f.body.add_block()
    target = f.body.add_block(Block([i32]))
    target.append(ReturnOp([]))
    a = entry.append(const(1, i64))
    entry.append(BranchOp([a.result], dest=target))
    fails(ModuleOp([f]), "type mismatch for successor #0 operand #0")
    entry.last_op.erase()
    entry.append(BranchOp([], dest=target))
    fails(ModuleOp([f.detach()]), "branch has 0 operands for successor #0, but target block has 1")


def test_dominance_across_blocks():
    """entry -> (left | right) -> join: a value of `left` does not dominate `join`."""
    f = FuncOp(sym_name=StringAttr("f"))
    entry, left, right, join = (f.body.add_block() for _ in range(4))
    flag = entry.append(const(1))
    entry.append(CondBranchOp(flag.result, then_dest=left, else_dest=right))
    from_left = left.append(const(2))
    left.append(BranchOp([], dest=join))
    right.append(BranchOp([], dest=join))
    join.append(NegOp(flag.result))  # the entry dominates the join: fine
    join.append(ReturnOp([]))
    verify(ModuleOp([f]))
    join.prepend(NegOp(from_left.result))
    fails(ModuleOp([f.detach()]), "does not dominate this use")


def test_verifying_a_nested_op_accepts_values_from_above():
    a = const()
    loop = LoopOp(outs=[])
    loop.body.add_block().append(NegOp(a.result))
    loop.body.block.append(YieldOp([]))
    ModuleOp([func(a, loop)])
    verify(loop)


def test_unregistered_ops_are_accepted():
    a = const()
    unknown = create_operation("foo.anything", [a.result], [f32])
    f = FuncOp(sym_name=StringAttr("f"))
    f.body.add_block().append(a)
    f.body.block.append(unknown)  # it may be a terminator: given the benefit of the doubt
    verify(ModuleOp([f]))


@irdl_op
class ElementwiseOp(Operation):
    """Elementwise, same encoding: the rules Triton's tensor ops declare."""

    name = "vtest.elementwise"
    traits = frozenset({Pure, Elementwise, SameOperandsAndResultEncoding, SameOperandsShape})
    inputs = var_operand()
    out = result()


def test_shape_and_encoding_traits():
    blocked, sliced = StringAttr("blocked"), StringAttr("sliced")
    source_types = [RankedTensorType([4], i32, blocked), RankedTensorType([8], i32), i32]

    def check(picks, out, message):
        source = create_operation("foo.make", [], source_types)
        op = ElementwiseOp([source.results[i] for i in picks], out=out)
        module = ModuleOp([func(source, op)])
        if message is None:
            verify(module)
        else:
            fails(module, message)

    check([0, 0], RankedTensorType([4], i32, blocked), None)
    check([0], RankedTensorType([4], i32), None)  # no encoding on one side: not compared
    check([0], RankedTensorType([4], i32, sliced), "requires the same encoding")
    check([0, 1], RankedTensorType([4], i32), "all non-scalar operands/results must have the same")
    check([2], RankedTensorType([4], i32), "if a result is non-scalar")


def test_an_unregistered_op_may_hold_blocks_without_terminators():
    a = const()
    holder = create_operation("foo.holder", regions=[Region([Block()])])
    holder.regions[0].block.append(NegOp(a.result))
    verify(ModuleOp([func(a, holder)]))
