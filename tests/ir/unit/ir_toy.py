"""A toy dialect for the IR core's tests: enough ops to exercise every declarative feature,
folding, regions, symbols and branches, without depending on a real dialect."""

from __future__ import annotations

from naiad.ir import (
    Commutative,
    ConstantLike,
    HasParent,
    IntegerAttr,
    IntegerLike,
    IsolatedFromAbove,
    MemoryRead,
    MemoryWrite,
    Operation,
    Pure,
    RecursiveMemoryEffects,
    ReturnLike,
    SameOperandsAndResultType,
    StringAttr,
    Symbol,
    Terminator,
    attribute,
    irdl_op,
    operand,
    opt_operand,
    region,
    register_constant_materializer,
    result,
    successor,
    var_operand,
    var_result,
)
from naiad.ir.rewriter import constant_value


@irdl_op
class ConstantOp(Operation):
    """`test.constant`: an integer constant."""

    name = "test.constant"
    traits = frozenset({Pure, ConstantLike})
    value = attribute(IntegerAttr)
    result = result(IntegerLike)

    def fold(self):
        return (self.value,)


class BinaryOp(Operation):
    """A family base: the subclasses share these fields and only name themselves."""

    lhs = operand(IntegerLike)
    rhs = operand(IntegerLike)
    result = result(IntegerLike, like="lhs")


@irdl_op
class AddOp(BinaryOp):
    """`test.add`: folds constants and `x + 0`."""

    name = "test.add"
    traits = frozenset({Pure, Commutative, SameOperandsAndResultType})
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def fold(self):
        lhs, rhs = constant_value(self.lhs), constant_value(self.rhs)
        if lhs is not None and rhs is not None:
            return (IntegerAttr(lhs.value + rhs.value, self.result.type),)
        if rhs is not None and rhs.value == 0:
            return (self.lhs,)
        return None


@irdl_op
class MulOp(BinaryOp):
    name = "test.mul"
    traits = frozenset({Pure, Commutative, SameOperandsAndResultType})


@irdl_op
class NegOp(Operation):
    name = "test.neg"
    traits = frozenset({Pure, SameOperandsAndResultType})
    input = operand(IntegerLike)
    result = result(IntegerLike, like="input")


@irdl_op
class LoadOp(Operation):
    name = "test.load"
    traits = frozenset({MemoryRead})
    address = operand()
    result = result()


@irdl_op
class PrintOp(Operation):
    name = "test.print"
    traits = frozenset({MemoryWrite})
    values = var_operand()


@irdl_op
class SelectOp(Operation):
    """Optional and variadic operands together: sizes kept in `operandSegmentSizes`."""

    name = "test.select"
    traits = frozenset({Pure})
    mask = opt_operand(IntegerLike)
    inputs = var_operand()
    others = var_operand()
    outputs = var_result()


@irdl_op
class PairOp(Operation):
    """A variadic group between fixed operands, no segment attribute needed."""

    name = "test.pair"
    traits = frozenset({Pure})
    first = operand()
    middle = var_operand()
    last = operand()
    out = result(like="first")


@irdl_op
class ForwardOp(Operation):
    """Results typed as the variadic operands, one for one (`like=` a variadic group)."""

    name = "test.forward"
    values = var_operand()
    outs = var_result(like="values")
    assembly_format = "$values attr-dict `:` type($values)"


@irdl_op
class LoopOp(Operation):
    """`test.loop`: a region op in the manner of scf.for, carrying `inits` to `results`."""

    name = "test.loop"
    traits = frozenset({RecursiveMemoryEffects})
    inits = var_operand()
    outs = var_result()
    body = region(single_block=True)


@irdl_op
class YieldOp(Operation):
    name = "test.yield"
    traits = frozenset({Pure, Terminator, ReturnLike, HasParent("test.loop")})
    values = var_operand()


@irdl_op
class FuncOp(Operation):
    name = "test.func"
    traits = frozenset({IsolatedFromAbove, Symbol})
    sym_name = attribute(StringAttr)
    body = region()


@irdl_op
class ReturnOp(Operation):
    name = "test.return"
    traits = frozenset({Terminator, ReturnLike})
    values = var_operand()


@irdl_op
class BranchOp(Operation):
    """`test.br`: every operand goes to the successor's arguments."""

    name = "test.br"
    traits = frozenset({Terminator})
    args = var_operand()
    dest = successor()

    def successor_operands(self, index):
        return self.args


@irdl_op
class CondBranchOp(Operation):
    name = "test.cond_br"
    traits = frozenset({Terminator})
    condition = operand(IntegerLike)
    then_dest = successor()
    else_dest = successor()

    def successor_operands(self, index):
        return ()


def _materialize(value, type, location):
    if isinstance(value, IntegerAttr):
        return ConstantOp(value=value, result=type, location=location)
    return None


register_constant_materializer("test", _materialize)
