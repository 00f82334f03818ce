"""IR built with the dialects' Python builders, as the frontend builds it, printed and read back:
structurally equal, locations included wherever the text holds them."""

from text_helpers import round_trip

from naiad.dialects import arith, scf, tt
from naiad.dialects.tt.compute import ReduceOp, ReduceReturnOp
from naiad.dialects.tt.types import PointerType
from naiad.ir import (
    Builder,
    CallSiteLoc,
    DenseElementsAttr,
    FileLineColLoc,
    FunctionType,
    FusedLoc,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    RankedTensorType,
    f32,
    i1,
    i32,
)
from naiad.ir.equality import difference
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module


def loc(line, col=1, name=None):
    at = FileLineColLoc("kernel.py", line, col)
    return at if name is None else NameLoc(name, at)


def build_kernel():
    """A kernel with a loop carrying a tensor, a conditional, a reduction and a call site."""
    module = ModuleOp(location=loc(1))
    ptr = PointerType(f32)
    block_type = RankedTensorType((64,), f32)
    func = tt.FuncOp(
        "kernel",
        FunctionType([ptr, i32], []),
        visibility="public",
        arg_attrs=[{"tt.divisibility": IntegerAttr(16, i32)}, {}],
        location=loc(1),
    )
    module.body.append(func)
    entry = func.body.blocks[0]
    for arg, name in zip(entry.arguments, ("x_ptr", "n")):
        arg.location = NameLoc(name, loc(1))
    x_ptr, n = entry.arguments
    b = Builder()
    with b.at_end(entry):
        with b.at_location(loc(3, 5, "pid")):
            pid = b.create(tt.GetProgramIdOp, 0).result
        with b.at_location(loc(4)):
            zero = b.create(arith.ConstantOp, IntegerAttr(0, i32)).result
            one = b.create(arith.ConstantOp, IntegerAttr(1, i32)).result
            acc0 = b.create(arith.ConstantOp, _zeros(block_type)).result
        with b.at_location(loc(5, 3, "acc")):
            loop = b.create(scf.ForOp, zero, n, one, [acc0])
        loop.body.arguments[0].location = loc(5, 9, "i")
        loop.body.arguments[1].location = loc(5, 3, "acc")
        with b.at_end(loop.body):
            with b.at_location(CallSiteLoc(loc(20, 2), loc(6, 9, "acc"))):
                offs = b.create(tt.MakeRangeOp, 0, 64).result
                ptrs = b.create(tt.SplatOp, x_ptr, result=RankedTensorType((64,), ptr)).result
                ptrs = b.create(tt.AddPtrOp, ptrs, offs).result
                value = b.create(tt.LoadOp, ptrs).result
            with b.at_location(FusedLoc([loc(7), loc(8)])):
                total = b.create(arith.AddFOp, loop.body.arguments[1], value).result
            b.create(scf.YieldOp, [total], location=loc(9))
        with b.at_location(loc(10, 3, "positive")):
            cond = b.create(arith.CmpIOp, "sgt", pid, zero).result
            branch = b.create(scf.IfOp, cond)
        with b.at_end(branch.then_block):
            b.create(scf.YieldOp, [], location=loc(11))
        with b.at_location(loc(12, 3, "s")):
            reduce = b.create(ReduceOp, [loop.results[0]], 0)
        combine = reduce.regions[0].blocks[0]
        for arg in combine.arguments:
            arg.location = loc(12, 20, "a")
        with b.at_end(combine):
            s = b.create(arith.AddFOp, *combine.arguments, location=loc(13)).result
            b.create(ReduceReturnOp, [s], location=loc(12))
        b.create(tt.ReturnOp, location=loc(14))
    assert cond.type is i1
    return module


def _zeros(t):
    return DenseElementsAttr(t, 0.0)


def test_built_kernel_round_trips():
    module = build_kernel()
    text, _ = round_trip(module)
    assert "tt.func public @kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}" in text
    assert "%acc = scf.for %i = %c0_i32 to %n step %c1_i32 iter_args(%acc_0 = %cst)" in text
    round_trip(module, generic=True)
    round_trip(module, locations=False)


def test_what_the_text_cannot_hold():
    # The loop's induction variable and carried value are printed without their locations,
    # and the then-branch's empty yield not at all: read back, they hold positions in the
    # text instead. The printer's record says which locations were printed.
    module = build_kernel()
    printed = set()
    text = print_module(module, record=printed)
    loop = next(op for op in module.walk() if op.name == "scf.for")
    assert not printed.intersection(loop.regions[0].blocks[0].arguments)
    parsed = parse_module(text, "k.mlir")
    found = difference(module, parsed, locations=True)
    assert found is not None and "location" in found
    assert difference(module, parsed, locations=printed.__contains__) is None


def test_equality_reports_the_first_difference():
    a, b = build_kernel(), build_kernel()
    assert difference(a, b) is None
    op = next(op for op in b.walk() if op.name == "tt.make_range")
    op.attributes["end"] = IntegerAttr(32, i32)
    found = difference(a, b)
    assert "attribute 'end': 64 : i32 vs 32 : i32" in found
