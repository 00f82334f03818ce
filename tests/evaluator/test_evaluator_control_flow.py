"""Control flow in the reference evaluator: loops with carried values, ifs with results, while
loops, branches between blocks with block arguments (Triton's early return), and calls."""

import numpy as np
from evaluator_helpers import Kernel, tensor

from naiad.dialects import arith, cf, scf, tt
from naiad.ir import Block, IndexType, UnitAttr, f32, i1, i32, i64
from naiad.runtime.evaluator import evaluate

RNG = np.random.default_rng(11)
T8 = tensor([8], f32)


def test_for_loop_carries_values():
    """acc = 0; for i in range(lo, hi, 3): acc = acc * 2 + x[i % 8]; count += 1."""
    k = Kernel("k", [tt.ptr(f32), i32, i32], [T8, i32])
    x, lo, hi = k.args
    acc0, zero = k.const(0.0, T8), k.const(0, i32)
    loop = k.create(scf.ForOp, lo, hi, k.const(3, i32), [acc0, zero])
    iv, acc, count = loop.body.arguments
    with k.at_end(loop.body):
        offs = k.op(tt.MakeRangeOp, 0, 8)
        shifted = k.op(arith.AddIOp, offs, k.splat(iv, [8]))
        index = k.op(arith.RemSIOp, shifted, k.const(8, tensor([8], i32)))
        doubled = k.op(arith.MulFOp, acc, k.const(2.0, T8))
        new = k.op(arith.AddFOp, doubled, k.load(x, index))
        k.op(scf.YieldOp, [new, k.op(arith.AddIOp, count, k.const(1, i32))])
    module = k.ret(*loop.results)
    x = RNG.standard_normal(8, np.float32)
    [(acc, count)] = evaluate(module, "k", [x, 1, 14])
    expected = np.zeros(8, np.float32)
    for i in range(1, 14, 3):
        expected = expected * np.float32(2) + x[(np.arange(8) + i) % 8]
    np.testing.assert_array_equal(acc, expected)
    assert count == len(range(1, 14, 3))


def test_for_loop_over_index_and_unsigned_bounds():
    """With `unsignedCmp` the bounds compare unsigned: -4 is then above 2 and the loop is empty."""
    k = Kernel("k", [i64, i64], [i64, i64, i32])
    lower, upper = k.args
    counts = []
    for unsigned in (False, True):
        zero = k.const(0, i64)
        extra = {"unsignedCmp": UnitAttr()} if unsigned else {}
        loop = k.create(scf.ForOp, lower, upper, k.const(1, i64), [zero], **extra)
        with k.at_end(loop.body):
            k.op(scf.YieldOp, [k.op(arith.AddIOp, loop.body.arguments[1], k.const(1, i64))])
        counts.append(loop.results[0])
    index = IndexType()
    bounds = [k.const(v, index) for v in (0, 4, 1)]
    loop = k.create(scf.ForOp, *bounds, [k.const(0, i32)])
    with k.at_end(loop.body):
        k.op(scf.YieldOp, [k.op(arith.AddIOp, loop.body.arguments[1], k.const(5, i32))])
    module = k.ret(*counts, loop.results[0])
    assert evaluate(module, "k", [-4, 2]) == [(6, 0, 20)]
    assert evaluate(module, "k", [1, 3]) == [(2, 2, 20)]


def test_if_with_results():
    k = Kernel("k", [i32, f32], [f32, i32])
    n, v = k.args
    cond = k.op(arith.CmpIOp, "sgt", n, k.const(0, i32))
    branch = k.create(scf.IfOp, cond, [f32, i32])
    with k.at_end(branch.then_block):
        k.op(scf.YieldOp, [k.op(arith.MulFOp, v, v), n])
    with k.at_end(branch.else_block):
        k.op(scf.YieldOp, [k.op(arith.NegFOp, v), k.const(-1, i32)])
    module = k.ret(*branch.results)
    assert evaluate(module, "k", [3, 1.5]) == [(np.float32(2.25), 3)]
    assert evaluate(module, "k", [0, 1.5]) == [(np.float32(-1.5), -1)]


def test_while_loop():
    """while x < limit: x = x * 3 (Collatz-free growth), counting the steps."""
    k = Kernel("k", [i32, i32], [i32, i32])
    x0, limit = k.args
    loop = k.create(scf.WhileOp, [x0, k.const(0, i32)])
    x, steps = loop.before.block.arguments
    with k.at_end(loop.before.block):
        k.op(scf.ConditionOp, k.op(arith.CmpIOp, "slt", x, limit), [x, steps])
    x, steps = loop.after.block.arguments
    with k.at_end(loop.after.block):
        tripled = k.op(arith.MulIOp, x, k.const(3, i32))
        k.op(scf.YieldOp, [tripled, k.op(arith.AddIOp, steps, k.const(1, i32))])
    module = k.ret(*loop.results)
    assert evaluate(module, "k", [1, 100]) == [(243, 5)]
    assert evaluate(module, "k", [500, 100]) == [(500, 0)]


def test_branches_with_block_arguments_and_early_return():
    """Triton's early return: `if pid * 8 >= n: return`, then a value chosen by a branch."""
    k = Kernel("k", [tt.ptr(f32), i32, f32])
    out, n, limit = k.args
    pid = k.op(tt.GetProgramIdOp, 0)
    start = k.op(arith.MulIOp, pid, k.const(8, i32))
    region = k.func.body
    exit_block, body, clamp, join = Block(), Block(), Block(), Block([T8])
    for block in (exit_block, body, clamp, join):
        region.add_block(block)
    k.op(cf.CondBranchOp, k.op(arith.CmpIOp, "sge", start, n), exit_block, body)
    with k.at_end(exit_block):
        k.op(tt.ReturnOp)
    with k.at_end(body):
        offs = k.op(arith.AddIOp, k.splat(start, [8]), k.op(tt.MakeRangeOp, 0, 8))
        values = k.op(arith.SIToFPOp, offs, out=T8)
        negative = k.op(arith.CmpFOp, "olt", limit, k.const(0.0, f32))
        k.op(cf.CondBranchOp, negative, join, clamp, [values], [])
    with k.at_end(clamp):
        k.op(cf.BranchOp, join, [k.op(arith.MinNumFOp, values, k.splat(limit, [8]))])
    with k.at_end(join):
        k.store(out, offs, join.arguments[0])
        k.op(tt.ReturnOp)
    module = k.module
    out = np.full(32, -1.0, np.float32)
    evaluate(module, "k", [out, 20, 10.0], grid=(4,))
    expected = np.minimum(np.arange(32), 10).astype(np.float32)
    expected[24:] = -1.0  # program 3 returned early
    np.testing.assert_array_equal(out, expected)
    evaluate(module, "k", [out, 32, -1.0], grid=(4,))
    np.testing.assert_array_equal(out, np.arange(32, dtype=np.float32))


def test_calls_into_other_functions():
    """A private helper returning two values, called from the kernel (before inlining)."""
    helper = Kernel("helper", [T8, f32], [T8, f32])
    x, s = helper.args
    scaled = helper.op(arith.MulFOp, x, helper.splat(s, [8]))
    helper.ret(scaled, helper.op(arith.AddFOp, s, s))
    k = Kernel("k", [tt.ptr(f32), f32], module=helper.module)
    out, s = k.args
    offs = k.op(tt.MakeRangeOp, 0, 8)
    call = k.create(tt.CallOp, helper.func, [k.load(out, offs), s])
    k.store(out, offs, k.op(arith.AddFOp, call.results[0], k.splat(call.results[1], [8])))
    module = k.ret()
    x = RNG.standard_normal(8, np.float32)
    out = x.copy()
    evaluate(module, "k", [out, 1.25])
    np.testing.assert_array_equal(out, x * np.float32(1.25) + np.float32(2.5))
    # A function with results can be evaluated on its own, with tensors as arguments.
    [(scaled, doubled)] = evaluate(module, "helper", [x, 2.0])
    np.testing.assert_array_equal(scaled, x * 2)
    assert doubled == 4.0


def test_select_on_a_scalar_condition_and_pointers():
    k = Kernel("k", [tt.ptr(f32), tt.ptr(f32), i1])
    a, b, flag = k.args
    offs = k.op(tt.MakeRangeOp, 0, 8)
    chosen = k.op(arith.SelectOp, flag, a, b)
    values = k.load(chosen, offs)
    k.store(a, offs, k.op(arith.SelectOp, flag, values, k.op(arith.NegFOp, values)))
    module = k.ret()
    a, b = RNG.standard_normal(8, np.float32), RNG.standard_normal(8, np.float32)
    a_before = a.copy()
    evaluate(module, "k", [a, b, True])
    np.testing.assert_array_equal(a, a_before)
    evaluate(module, "k", [a, b, False])
    np.testing.assert_array_equal(a, -b)
