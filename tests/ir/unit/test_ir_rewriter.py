"""The PatternRewriter and the greedy driver: folding, dead code, patterns, fixed points."""

import pytest
from ir_toy import AddOp, BinaryOp, ConstantOp, LoadOp, LoopOp, MulOp, NegOp, PrintOp, YieldOp

from naiad.ir import (
    Block,
    Builder,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    Operation,
    PatternRewriter,
    Pure,
    RewriteListener,
    RewritePattern,
    apply_patterns_greedily,
    constant_value,
    f32,
    i32,
    irdl_op,
    operand,
    result,
    verify,
)


def build(fn):
    """A module whose body `fn(builder)` fills; returns the module."""
    module = ModuleOp()
    builder = Builder()
    with builder.at_end(module.body):
        fn(builder)
    return module


def const(builder, value, type=i32):
    return builder.create(ConstantOp, value=IntegerAttr(value, type), result=type).result


def names(module):
    return [op.name for op in module.body]


class FoldNegNeg(RewritePattern):
    """-(-x) -> x."""

    root = NegOp

    def match_and_rewrite(self, op, rewriter):
        inner = op.input.defining_op
        if not isinstance(inner, NegOp):
            return False
        rewriter.replace_op(op, [inner.input])
        return True


class MulToAdd(RewritePattern):
    """x * 2 -> x + x (the new op is then folded further by the driver)."""

    root = MulOp

    def match_and_rewrite(self, op, rewriter):
        rhs = constant_value(op.rhs)
        if rhs is None or rhs.value != 2:
            return False
        rewriter.replace_op(op, rewriter.create(AddOp, op.lhs, op.lhs))
        return True


def test_constants_fold_to_a_fixed_point():
    def body(b):
        one = const(b, 1)
        total = one
        for _ in range(5):
            total = b.create(AddOp, total, one).result
        b.create(PrintOp, [total])

    module = build(body)
    assert apply_patterns_greedily(module, [])
    assert names(module) == ["test.constant", "test.print"]
    assert module.body.first_op.value is IntegerAttr(6, i32)
    verify(module)


def test_fold_to_an_existing_value():
    def body(b):
        x = b.create(LoadOp, const(b, 0), result=i32).result
        b.create(PrintOp, [b.create(AddOp, x, const(b, 0)).result])

    module = build(body)
    apply_patterns_greedily(module, [])
    printed = module.body.last_op.values[0]
    assert printed.defining_op.name == "test.load"
    assert names(module) == ["test.constant", "test.load", "test.print"]


def test_patterns_and_folds_interleave():
    def body(b):
        x = b.create(LoadOp, const(b, 0), result=i32).result
        twice = b.create(MulOp, b.create(NegOp, b.create(NegOp, x).result).result, const(b, 2))
        b.create(PrintOp, [twice.result])

    module = build(body)
    assert apply_patterns_greedily(module, [FoldNegNeg(), MulToAdd()])
    assert names(module) == ["test.constant", "test.load", "test.add", "test.print"]
    add = module.body.last_op.values[0].defining_op
    assert add.lhs is add.rhs and add.lhs.defining_op.name == "test.load"
    verify(module)


def test_dead_code_is_erased_by_its_effects():
    def body(b):
        zero = const(b, 0)
        b.create(NegOp, zero)  # pure, unused: dead
        b.create(LoadOp, zero, result=i32)  # reads only, unused: dead
        b.create(PrintOp, [])  # writes: kept
        loop = b.create(LoopOp, outs=[])  # recursive effects, pure body: dead
        with b.at_end(loop.body.add_block()):
            b.create(NegOp, zero)
            b.create(YieldOp, [])
        writer = b.create(LoopOp, outs=[])  # a writing body: kept
        with b.at_end(writer.body.add_block()):
            b.create(PrintOp, [zero])
            b.create(YieldOp, [])

    module = build(body)
    apply_patterns_greedily(module, [])
    assert names(module) == ["test.constant", "test.print", "test.loop"]


@irdl_op
class AlwaysThreeOp(Operation):
    """Folds to a constant of a dialect that registered no materializer."""

    name = "nomat.always_three"
    traits = frozenset({Pure})
    input = operand()
    out = result(like="input")

    def fold(self):
        return (IntegerAttr(3, i32),)


@irdl_op
class SortingAddOp(Operation):
    """Folds in place: moves a constant lhs to the right, as canonical forms do."""

    name = "nomat.sorting_add"
    traits = frozenset({Pure})
    lhs = operand()
    rhs = operand()
    out = result(like="lhs")

    def fold(self):
        if constant_value(self.lhs) is None or constant_value(self.rhs) is not None:
            return None
        lhs, rhs = self.lhs, self.rhs
        self.lhs, self.rhs = rhs, lhs
        return self.results


def test_without_a_materializer_a_constant_fold_is_skipped():
    def body(b):
        x = b.create(LoadOp, const(b, 0), result=i32).result
        b.create(PrintOp, [b.create(AlwaysThreeOp, x).out])

    module = build(body)
    assert apply_patterns_greedily(module, [])
    assert names(module) == ["test.constant", "test.load", "nomat.always_three", "test.print"]


def test_in_place_fold_is_revisited_and_terminates():
    def body(b):
        x = b.create(LoadOp, const(b, 0), result=i32).result
        b.create(PrintOp, [b.create(SortingAddOp, const(b, 1), x).out])

    module = build(body)
    add = module.body.last_op.values[0].defining_op
    assert apply_patterns_greedily(module, [])
    assert add.lhs.defining_op.name == "test.load" and constant_value(add.rhs).value == 1


def test_patterns_that_undo_each_other_stop_at_the_budget():
    class Swap(RewritePattern):
        root = BinaryOp  # dispatch reaches the subclasses

        def match_and_rewrite(self, op, rewriter):
            with rewriter.modify_op_in_place(op):
                lhs, rhs = op.lhs, op.rhs
                op.set_operand(0, rhs)
                op.set_operand(1, lhs)
            return True

    def body(b):
        x = b.create(LoadOp, const(b, 0), result=i32).result
        y = b.create(LoadOp, const(b, 1), result=i32).result
        b.create(PrintOp, [b.create(MulOp, x, y).result])

    module = build(body)
    assert not apply_patterns_greedily(module, [Swap()], max_rewrites=50)


def test_benefit_orders_patterns():
    seen = []

    class Low(RewritePattern):
        root = NegOp
        benefit = 1

        def match_and_rewrite(self, op, rewriter):
            seen.append("low")
            return False

    class High(Low):
        benefit = 5

        def match_and_rewrite(self, op, rewriter):
            seen.append("high")
            return False

    def body(b):
        x = b.create(LoadOp, const(b, 0), result=i32).result
        b.create(PrintOp, [b.create(NegOp, x).result])

    apply_patterns_greedily(build(body), [Low(), High()])
    assert seen == ["high", "low"]


def test_rewriter_notifies_its_listener():
    events = []

    class Recorder(RewriteListener):
        def notify_inserted(self, op):
            events.append(("inserted", op.name))

        def notify_modified(self, op):
            events.append(("modified", op.name))

        def notify_erased(self, op):
            events.append(("erased", op.name))

    block = Block()
    rewriter = PatternRewriter(Recorder())
    rewriter.set_insertion_point(block)
    a = rewriter.create(ConstantOp, value=IntegerAttr(1, i32), result=i32)
    b = rewriter.create(ConstantOp, value=IntegerAttr(2, i32), result=i32)
    neg = rewriter.create(NegOp, a.result)
    rewriter.replace_all_uses(a.result, b.result)
    with rewriter.modify_op_in_place(neg):
        neg.attributes["note"] = FloatAttr(1.0, f32)
    rewriter.erase_op(neg)
    assert events == [
        ("inserted", "test.constant"),
        ("inserted", "test.constant"),
        ("inserted", "test.neg"),
        ("modified", "test.neg"),
        ("modified", "test.neg"),
        ("erased", "test.neg"),
    ]
    with pytest.raises(ValueError, match="2 values"):
        rewriter.replace_op(a, [b.result, b.result])
