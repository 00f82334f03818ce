"""The traits rewrites ask about: what is Pure (dead when unused), Elementwise, a terminator,
and what the greedy driver therefore erases, keeps and folds in a TTIR kernel."""

import pytest
from dialect_helpers import tensor

import naiad.dialects
import naiad.ir
from naiad.dialects import arith, math, scf, tt
from naiad.ir import (
    Builder,
    ConstantLike,
    DenseElementsAttr,
    Elementwise,
    FunctionType,
    IntegerAttr,
    IsolatedFromAbove,
    MemoryRead,
    MemoryWrite,
    ModuleOp,
    Pure,
    ReturnLike,
    Symbol,
    Terminator,
    apply_patterns_greedily,
    f32,
    i32,
    is_trivially_dead,
    op_class,
    registered_ops,
    verify,
)

PURE = [
    "arith.addi", "arith.divsi", "arith.cmpf", "arith.select", "arith.extsi", "arith.constant",
    "math.exp", "math.fma", "tt.addptr", "tt.splat", "tt.broadcast", "tt.expand_dims",
    "tt.make_range", "tt.get_program_id", "tt.dot", "tt.reduce", "tt.trans", "tt.reshape",
    "tt.bitcast", "tt.fp_to_fp", "tt.clampf", "tt.mulhiui", "tt.gather", "ub.poison",
    "scf.yield", "tt.return", "tt.reduce.return", "cf.br",
]  # fmt: skip
EFFECTS = [
    "tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.print", "tt.assert", "tt.descriptor_store",
    "ttg.barrier",
]  # fmt: skip
ELEMENTWISE = [
    "arith.addf", "arith.cmpi", "arith.select", "arith.sitofp", "math.exp2", "math.fma",
    "tt.addptr", "tt.bitcast", "tt.fp_to_fp", "tt.clampf", "tt.precise_divf", "tt.mulhiui",
    "tt.int_to_ptr", "tt.extern_elementwise",
]  # fmt: skip
NOT_ELEMENTWISE = ["tt.splat", "tt.broadcast", "tt.dot", "tt.load", "tt.reduce", "tt.make_range"]


@pytest.mark.parametrize("name", PURE)
def test_pure(name):
    assert Pure in op_class(name).traits


@pytest.mark.parametrize("name", EFFECTS)
def test_has_memory_effects(name):
    traits = op_class(name).traits
    assert Pure not in traits and MemoryWrite in traits


def test_reads_only():
    for name in ("tt.load", "tt.descriptor_load"):
        traits = op_class(name).traits
        assert MemoryRead in traits and MemoryWrite not in traits and Pure not in traits


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise(name):
    assert Elementwise in op_class(name).traits


@pytest.mark.parametrize("name", NOT_ELEMENTWISE)
def test_not_elementwise(name):
    assert Elementwise not in op_class(name).traits


def test_terminators_and_functions():
    for name in ("tt.return", "scf.yield", "tt.reduce.return", "tt.scan.return", "cf.br"):
        assert Terminator in op_class(name).traits
    for name in ("tt.return", "scf.yield", "tt.reduce.return"):
        assert ReturnLike in op_class(name).traits
    assert {IsolatedFromAbove, Symbol} <= tt.FuncOp.traits
    assert ConstantLike in arith.ConstantOp.traits


def test_calls_have_unknown_effects():
    assert not tt.CallOp.traits & {Pure, MemoryRead, MemoryWrite}


def test_every_arith_and_math_op_is_pure_and_elementwise():
    for op in registered_ops():
        if op.name.split(".")[0] in ("arith", "math") and op.name != "arith.constant":
            assert {Pure, Elementwise} <= op.traits, op.name


def _vector_add():
    """Tutorial 01's kernel, plus an unused load and a foldable constant chain."""
    p = tt.ptr(f32)
    func = tt.FuncOp("add_kernel", FunctionType([p, p, p, i32], []), visibility="public")
    x_ptr, y_ptr, out_ptr, n = func.arguments
    b = Builder()
    with b.at_end(func.entry_block):
        pid = b.create(tt.GetProgramIdOp, "x").result
        c512 = b.create(arith.ConstantOp, IntegerAttr(512, i32)).result
        two = b.create(arith.ConstantOp, IntegerAttr(2, i32)).result
        block = b.create(arith.MulIOp, c512, two).result  # folds to 1024
        start = b.create(arith.MulIOp, pid, block).result
        offsets = b.create(
            arith.AddIOp,
            b.create(tt.SplatOp, start, shape=[1024]).result,
            b.create(tt.MakeRangeOp, 0, 1024).result,
        ).result
        mask = b.create(
            arith.CmpIOp, "slt", offsets, b.create(tt.SplatOp, n, shape=[1024]).result
        ).result

        def ptrs(base):
            return b.create(
                tt.AddPtrOp, b.create(tt.SplatOp, base, shape=[1024]).result, offsets
            ).result

        x = b.create(tt.LoadOp, ptrs(x_ptr), mask).result
        y = b.create(tt.LoadOp, ptrs(y_ptr), mask).result
        b.create(tt.LoadOp, ptrs(y_ptr), mask)  # unused: dead, as it only reads
        b.create(math.ExpOp, x)  # unused and pure: dead
        b.create(tt.StoreOp, ptrs(out_ptr), b.create(arith.AddFOp, x, y).result, mask)
        b.create(tt.ReturnOp)
    return ModuleOp([func]), func


def test_the_greedy_driver_folds_and_erases_by_traits():
    module, func = _vector_add()
    verify(module)
    assert apply_patterns_greedily(module, [])
    verify(module)
    names = [op.name for op in func.entry_block]
    assert names.count("tt.load") == 2 and "math.exp" not in names
    assert names.count("tt.store") == 1
    constants = [op.value for op in func.entry_block if op.name == "arith.constant"]
    assert IntegerAttr(1024, i32) in constants


def test_trivially_dead_follows_the_traits():
    _, func = _vector_add()
    ops = list(func.entry_block)
    loads = [op for op in ops if op.name == "tt.load"]
    assert [is_trivially_dead(op) for op in loads] == [False, False, True]
    by_name = {op.name: op for op in ops}
    assert is_trivially_dead(by_name["math.exp"])
    assert not is_trivially_dead(by_name["tt.store"])
    assert not is_trivially_dead(by_name["tt.return"])


def test_splat_of_a_constant_folds_through_the_tt_materializer():
    func = tt.FuncOp("f", FunctionType([], [tensor([4], f32)]))
    b = Builder()
    with b.at_end(func.entry_block):
        c = b.create(arith.ConstantOp, naiad.ir.FloatAttr(2.0, f32)).result
        s = b.create(tt.SplatOp, c, shape=[4]).result
        b.create(tt.ReturnOp, [s])
    module = ModuleOp([func])
    apply_patterns_greedily(module, [])
    first = func.entry_block.first_op
    assert first.name == "arith.constant"
    assert first.value is DenseElementsAttr(tensor([4], f32), 2.0)


def test_loops_without_used_results_and_effects_are_dead():
    func = tt.FuncOp("f", FunctionType([i32], []))
    (n,) = func.arguments
    b = Builder()
    with b.at_end(func.entry_block):
        zero = b.create(arith.ConstantOp, IntegerAttr(0, i32)).result
        loop = b.create(scf.ForOp, zero, n, n, [zero])
        with b.at_end(loop.body):
            b.create(scf.YieldOp, [b.create(arith.AddIOp, loop.region_iter_args[0], n).result])
        b.create(tt.ReturnOp)
    module = ModuleOp([func])
    apply_patterns_greedily(module, [])
    assert [op.name for op in func.entry_block] == ["tt.return"]
