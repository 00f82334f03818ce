"""A 10,000-op module is built, walked, verified, folded and erased (no timing asserted:
the point is that nothing is quadratic enough to stall, nor recursive enough to overflow)."""

from ir_toy import AddOp, ConstantOp, PrintOp

from naiad.ir import Builder, IntegerAttr, ModuleOp, apply_patterns_greedily, i32, verify

N = 10_000


def chain():
    module = ModuleOp()
    b = Builder()
    with b.at_end(module.body):
        value = b.create(ConstantOp, value=IntegerAttr(1, i32), result=i32).result
        for _ in range(N):
            value = b.create(AddOp, value, value).result
        b.create(PrintOp, [value])
    return module


def test_build_walk_verify_erase():
    module = chain()
    assert sum(1 for _ in module.walk()) == N + 3
    verify(module)
    for op in reversed(module.body):
        op.erase()
    assert module.body.is_empty


def test_replace_and_erase_a_long_chain():
    module = chain()
    first = module.body.first_op
    for op in list(module.body)[1:-1]:
        op.result.replace_all_uses_with(first.result)
        op.erase()
    assert len(module.body) == 2 and first.result.has_one_use


def test_fold_a_long_chain():
    module = chain()
    assert apply_patterns_greedily(module, [])
    assert len(module.body) == 2
    assert module.body.first_op.value is IntegerAttr(2**N, i32)  # wrapped to i32: 0
