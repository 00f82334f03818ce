"""Declarative op definitions: accessors, the keyword constructor, registry and checks."""

import pytest
from ir_toy import AddOp, BinaryOp, ConstantOp, ForwardOp, LoopOp, MulOp, PairOp, SelectOp

from naiad.ir import (
    Block,
    DenseArrayAttr,
    IntegerAttr,
    IntegerLike,
    Operation,
    Pure,
    Region,
    UnregisteredOp,
    create_operation,
    i32,
    i64,
    irdl_op,
    op_class,
    operand,
    opt_attribute,
    registered_ops,
    result,
)
from naiad.ir.opfields import OPERAND_SEGMENTS
from naiad.ir.parser import parse_module


def const(value=1, type=i32):
    return ConstantOp(value=IntegerAttr(value, type), result=type)


def test_single_operand_and_result_accessors():
    a, b = const(1), const(2)
    add = AddOp(a.result, rhs=b.result)
    assert add.lhs is a.result and add.rhs is b.result
    assert add.result is add.results[0] and add.result.type is i32  # type taken from lhs
    assert AddOp(a.result, b.result, result=i64).result.type is i64


def test_family_base_shares_fields():
    a = const()
    mul = MulOp(a.result, a.result)
    assert isinstance(mul, BinaryOp) and mul.lhs is a.result and mul.name == "test.mul"


def test_optional_and_variadic_groups_use_segment_sizes():
    a, b, c = const(1), const(2), const(3)
    op = SelectOp(mask=a.result, inputs=[b.result], others=[c.result, b.result], outputs=[i32])
    assert op.attributes[OPERAND_SEGMENTS] is DenseArrayAttr(i32, [1, 1, 2])
    assert op.mask is a.result and op.inputs == (b.result,) and op.others == (c.result, b.result)
    no_mask = SelectOp(inputs=[], others=[c.result], outputs=[])
    assert no_mask.mask is None and no_mask.inputs == () and no_mask.others == (c.result,)
    assert no_mask.outputs == ()


def test_one_variadic_group_needs_no_segment_sizes():
    a, b, c = const(1), const(2), const(3)
    pair = PairOp(a.result, [b.result, b.result], c.result)
    assert OPERAND_SEGMENTS not in pair.attributes
    assert pair.first is a.result and pair.middle == (b.result, b.result) and pair.last is c.result
    pair.last = a.result
    assert pair.operands[-1] is a.result


def test_variadic_results_like_variadic_operands():
    """`var_result(like="values")`: one result per operand, of its type, built and parsed."""
    a, b = const(1), const(2, i64)
    forward = ForwardOp([a.result, b.result])
    assert [v.type for v in forward.outs] == [i32, i64]
    module = parse_module(
        "module {\n"
        '  %a = "test.constant"() {value = 1 : i32} : () -> i32\n'
        '  %b = "test.constant"() {value = 2 : i64} : () -> i64\n'
        "  %0:2 = test.forward %a, %b : i32, i64\n}\n"
    )
    (parsed,) = (op for op in module.walk() if op.name == "test.forward")
    assert [v.type for v in parsed.outs] == [i32, i64]


def test_attribute_and_region_accessors():
    c = const(5)
    assert c.value is IntegerAttr(5, i32)
    c.value = IntegerAttr(6, i32)
    assert c.attributes["value"] is IntegerAttr(6, i32)
    loop = LoopOp(outs=[])
    assert isinstance(loop.body, Region) and loop.body.parent is loop
    given = Region([Block()])
    assert LoopOp(outs=[], body=given).body is given


def test_constructor_errors():
    a = const()
    with pytest.raises(TypeError, match="missing operand 'rhs'"):
        AddOp(a.result)
    with pytest.raises(TypeError, match="missing attribute 'value'"):
        ConstantOp(result=i32)
    with pytest.raises(TypeError, match="missing the type of result 'result'"):
        ConstantOp(value=IntegerAttr(1, i32))
    with pytest.raises(TypeError, match="unexpected arguments"):
        AddOp(a.result, a.result, bogus=1)
    with pytest.raises(TypeError, match="takes 2 operands"):
        AddOp(a.result, a.result, a.result)


def test_extra_attributes_are_kept():
    a = const()
    add = AddOp(a.result, a.result, attributes={"tag": IntegerAttr(1, i64)})
    assert add.attributes["tag"] is IntegerAttr(1, i64)


def test_ops_have_slots_only():
    a = const()
    add = AddOp(a.result, a.result)
    assert not hasattr(add, "__dict__")
    with pytest.raises(AttributeError):
        add.scratch = 1


def test_declaration_data():
    assert op_class("test.add") is AddOp and op_class("nope.op") is None
    assert AddOp in registered_ops()
    assert isinstance(AddOp.traits, frozenset) and Pure in AddOp.traits
    assert AddOp.assembly_format == "$lhs `,` $rhs attr-dict `:` type($result)"
    assert [d.name for d in AddOp._op_def.operands] == ["lhs", "rhs"]
    assert SelectOp._op_def.inherent_attributes == {OPERAND_SEGMENTS}
    assert ConstantOp._op_def.inherent_attributes == {"value"}


def test_create_operation_builds_registered_or_unregistered_ops():
    a = const()
    add = create_operation("test.add", [a.result, a.result], [i32])
    assert type(add) is AddOp and add.result.type is i32 and a.result.use_count == 2
    unknown = create_operation("foo.bar", [a.result], [i64, i64], {"k": IntegerAttr(1, i64)})
    assert isinstance(unknown, UnregisteredOp) and unknown.name == "foo.bar"
    assert unknown.dialect == "foo" and len(unknown.results) == 2
    copy = unknown.clone()
    assert copy.name == "foo.bar" and copy.attributes == unknown.attributes


def test_declaration_errors():
    with pytest.raises(TypeError, match=r"must be .dialect\.op."):

        @irdl_op
        class NoDialect(Operation):
            name = "nodot"

    with pytest.raises(TypeError, match="reserved"):

        @irdl_op
        class Shadowing(Operation):
            name = "test.shadowing"
            operands = operand()

    with pytest.raises(TypeError, match="not a single operand"):

        @irdl_op
        class BadLike(Operation):
            name = "test.bad_like"
            out = result(like="missing")

    with pytest.raises(TypeError, match="non-traits"):

        @irdl_op
        class BadTraits(Operation):
            name = "test.bad_traits"
            traits = frozenset({"Pure"})

    with pytest.raises(ValueError, match="already registered"):

        @irdl_op
        class Again(Operation):
            name = "test.add"
            lhs = operand(IntegerLike)


def test_undeclared_subclass_cannot_use_the_field_constructor():
    class Plain(Operation):
        name = "test.plain"

    with pytest.raises(TypeError, match="not declared"):
        Plain()


def test_a_declared_op_can_be_specialized():
    @irdl_op
    class CheckedAdd(AddOp):
        name = "test.checked_add"
        flag = opt_attribute(IntegerAttr)

    a = const()
    op = CheckedAdd(a.result, a.result, flag=IntegerAttr(1, i32))
    assert [f for f in CheckedAdd._op_def.fields] == ["lhs", "rhs", "result", "flag"]
    assert op.lhs is a.result and op.flag is IntegerAttr(1, i32) and op.name == "test.checked_add"
