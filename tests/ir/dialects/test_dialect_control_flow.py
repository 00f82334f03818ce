"""`scf`, `cf`, `ub`, `math`, `ttg.barrier` and `llvm.intr.assume`: construction, the
region and branch rules, and kernels shaped as the fixtures' (while loop, early return)."""

import math as pymath

import pytest
from dialect_helpers import arg, args, const, fails, folded, folded_value, tensor

from naiad.dialects import arith, cf, llvm, scf, tt, ub
from naiad.dialects import math as m
from naiad.dialects.ttg import barrier
from naiad.ir import (
    Block,
    Builder,
    FunctionType,
    IntegerAttr,
    Region,
    f32,
    i1,
    i32,
    i64,
    index,
    verify,
)


def _func(inputs, results=()):
    return tt.FuncOp("f", FunctionType(inputs, results))


def test_for_loop_carries_values():
    f = _func([i32, f32])
    n, x = f.arguments
    b = Builder()
    with b.at_end(f.entry_block):
        zero = b.create(arith.ConstantOp, IntegerAttr(0, i32)).result
        one = b.create(arith.ConstantOp, IntegerAttr(1, i32)).result
        loop = b.create(scf.ForOp, zero, n, one, [x])
        with b.at_end(loop.body):
            total = b.create(arith.AddFOp, loop.region_iter_args[0], x).result
            b.create(scf.YieldOp, [total])
        b.create(tt.ReturnOp)
    assert loop.outs[0].type is f32 and loop.induction_var.type is i32
    verify(f)


def test_for_loop_rules():
    lb, ub_, step, x = args(i32, i32, i64, f32)
    fails(scf.ForOp(lb, ub_, step, []), "all of {lowerBound, upperBound, step} have same type")
    lb, ub_, step = args(index, index, index)
    loop = scf.ForOp(lb, ub_, step, [x])
    loop.body.append(scf.YieldOp([arg(i32)]))
    fails(loop, "scf.yield of the body: type #0 'i32' should match 'f32'")
    wrong_iv = scf.ForOp(lb, ub_, step, [], region=Region([Block([i32])]))
    wrong_iv.body.append(scf.YieldOp())
    fails(wrong_iv, "expected induction variable to be same type as bounds and step")
    fewer = scf.ForOp(lb, ub_, step, [x], region=Region([Block([index])]))
    fewer.body.append(scf.YieldOp())
    fails(fewer, "mismatch in number of basic block args and defined values")
    fails(scf.YieldOp([x]), "expects parent op to be one of")


def test_if_with_results_needs_else():
    c, x = args(i1, f32)
    op = scf.IfOp(c, [f32])
    op.then_block.append(scf.YieldOp([x]))
    op.else_block.append(scf.YieldOp([x]))
    verify(op)
    no_else = scf.IfOp(c, [f32], with_else=False)
    no_else.then_block.append(scf.YieldOp([x]))
    fails(no_else, "must have an else block if defining values")
    bare = scf.IfOp(c)
    bare.then_block.append(scf.YieldOp())
    assert bare.else_block is None
    verify(bare)
    mismatched = scf.IfOp(c, [f32])
    mismatched.then_block.append(scf.YieldOp([x]))
    mismatched.else_block.append(scf.YieldOp())
    fails(mismatched, "scf.yield of the else region: 0 values where 1 are expected")
    fails(scf.IfOp(arg(i32)), "operand #0 ('condition') must be 'i1'")


def test_while_loop_as_triton_emits_it():
    """`lang_while_loop`: (acc, i) carried; before tests `i < n`; after updates both."""
    f = _func([i32, tensor([64], f32)])
    n, acc = f.arguments
    b = Builder()
    with b.at_end(f.entry_block):
        i = b.create(arith.ConstantOp, IntegerAttr(1, i32)).result
        loop = b.create(scf.WhileOp, [acc, i])
        before = loop.before.block
        with b.at_end(before):
            cond = b.create(arith.CmpIOp, "slt", before.arguments[1], n).result
            b.create(scf.ConditionOp, cond, before.arguments)
        after = loop.after.block
        with b.at_end(after):
            two = b.create(arith.ConstantOp, IntegerAttr(2, i32)).result
            doubled = b.create(arith.MulIOp, after.arguments[1], two).result
            b.create(scf.YieldOp, [after.arguments[0], doubled])
        b.create(tt.ReturnOp)
    verify(f)
    cond_op = before.last_op
    cond_op.set_operands([cond_op.operands[0], *before.arguments, before.arguments[1]])
    fails(f, "scf.condition's arguments: 3 values where 2 are expected")


def test_while_needs_its_terminators():
    x = arg(f32)
    loop = scf.WhileOp([x])
    loop.before.block.append(scf.YieldOp([x]))
    loop.after.block.append(scf.YieldOp([x]))
    fails(loop, "expects the 'before' region to terminate with 'scf.condition'")
    fails(scf.ConditionOp(arg(i1)), "expects parent op to be one of 'scf.while'")


def test_early_return_with_branches():
    """`lang_early_return`: cf.cond_br to a returning block, cf.br with a block argument."""
    f = _func([i1, i1, tensor([128], f32)])
    c, d, x = f.arguments
    ret, other, join = Block(), Block(), Block([tensor([128], f32)])
    for block in (ret, other, join):
        f.body.add_block(block)
    f.entry_block.append(cf.CondBranchOp(c, ret, other))
    ret.append(tt.ReturnOp())
    other.append(cf.CondBranchOp(d, join, join, [x], [x]))
    join.append(tt.ReturnOp())
    verify(f)
    branch = other.last_op
    branch.erase()
    other.append(cf.BranchOp(join, []))
    fails(f, "branch has 0 operands for successor #0, but target block has 1")
    other.last_op.erase()
    other.append(cf.BranchOp(join, [x]))
    verify(f)
    fails(cf.CondBranchOp(arg(i32), ret, join), "operand #0 ('condition') must be 'i1'")
    f.entry_block.last_op.erase()
    f.entry_block.append(cf.CondBranchOp(c, ret, other, branch_weights=[1, 2, 3]))
    fails(f, "expects number of branch weights to match number of successors")


def test_poison_is_a_constant():
    op = ub.PoisonOp(tensor([64, 64], f32))
    verify(op)
    assert folded(op) is ub.PoisonAttr()
    assert str(ub.PoisonAttr()) == "#ub.poison"
    assert ub._materialize(ub.PoisonAttr(), i32, None).result.type is i32


def test_barrier_and_assume():
    op = barrier.BarrierOp()
    assert op.addrSpace is IntegerAttr(31, i32)
    verify(op)
    verify(barrier.BarrierOp("local|global_read"))
    assume = llvm.AssumeOp(arg(i1))
    assert len(assume.op_bundle_sizes) == 0
    verify(assume)
    fails(llvm.AssumeOp(arg(i32)), "must be 'i1'")


MATH_UNARY = [
    m.AbsFOp, m.CeilOp, m.FloorOp, m.TruncOp, m.RoundOp, m.RoundEvenOp, m.SqrtOp, m.RsqrtOp,
    m.ExpOp, m.Exp2Op, m.ExpM1Op, m.LogOp, m.Log2Op, m.Log10Op, m.Log1pOp, m.SinOp, m.CosOp,
    m.TanOp, m.TanhOp, m.ErfOp, m.ErfcOp, m.AtanOp, m.CbrtOp, m.SinhOp, m.CoshOp, m.AsinOp,
    m.AcosOp, m.AsinhOp, m.AcoshOp, m.AtanhOp,
]  # fmt: skip


@pytest.mark.parametrize("cls", MATH_UNARY, ids=lambda c: c.name)
def test_math_unary_ops(cls):
    x = arg(tensor([128], f32))
    op = cls(x)
    assert op.result.type is x.type
    verify(op)


def test_math_other_ops_and_rules():
    x, y, z = args(f32, f32, f32)
    verify(m.FmaOp(x, y, z))
    verify(m.PowFOp(x, y))
    verify(m.Atan2Op(x, y))
    verify(m.AbsIOp(arg(i32)))
    verify(m.IPowIOp(*args(i32, i32)))
    nan = m.IsNaNOp(arg(tensor([4], f32)))
    assert nan.result.type is tensor([4], i1)
    verify(nan)
    verify(m.IsInfOp(arg(f32)))
    fails(m.ExpOp(arg(i32)), "must be floating-point-like")
    fails(m.FmaOp(x, y, arg(tensor([2], f32))), "non-scalar")


def test_math_folds_only_exact_functions():
    assert folded_value(m.SqrtOp(const(2.0, f32))) == float.fromhex("0x1.6a09e6p+0")
    assert folded_value(m.SqrtOp(const(4.0, f32))) == 2.0
    assert pymath.isnan(folded_value(m.SqrtOp(const(-1.0, f32))))
    assert folded_value(m.FloorOp(const(-1.5, f32))) == -2.0
    assert pymath.copysign(1, folded_value(m.CeilOp(const(-0.5, f32)))) == -1
    assert folded_value(m.RoundEvenOp(const(2.5, f32))) == 2.0
    assert folded_value(m.AbsFOp(const(-0.0, f32))) == 0.0
    assert folded_value(m.AbsIOp(const(-(2**31), i32))) == -(2**31)
    assert folded_value(m.CopySignOp(const(3.0, f32), const(-0.0, f32))) == -3.0
    assert folded_value(m.CountLeadingZerosOp(const(1, i32))) == 31
    assert folded_value(m.CountTrailingZerosOp(const(8, i32))) == 3
    assert folded_value(m.CtPopOp(const(-1, i32))) == 32
    assert folded(m.ExpOp(const(1.0, f32))) is None
    assert folded(m.RoundOp(const(0.5, f32))) is None
