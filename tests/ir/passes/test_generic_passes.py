"""canonicalize, cse, dce and symbol-dce on a small dialect defined here: these passes know no
dialect, only traits, folds and patterns."""

import naiad.passes  # noqa: F401  (registers the passes)
from naiad.ir import (
    Block,
    IntegerAttr,
    IntegerLike,
    IsolatedFromAbove,
    MemoryWrite,
    ModuleOp,
    Operation,
    Pure,
    Region,
    StringAttr,
    Symbol,
    SymbolRefAttr,
    Terminator,
    attribute,
    i32,
    irdl_op,
    operand,
    opt_attribute,
    region,
    register_constant_materializer,
    result,
    var_operand,
)
from naiad.ir.passes import PassManager


@irdl_op
class Const(Operation):
    name = "pt.const"
    traits = frozenset({Pure})
    value = attribute(IntegerAttr)
    result = result(IntegerLike)


@irdl_op
class Add(Operation):
    name = "pt.add"
    traits = frozenset({Pure})
    lhs = operand(IntegerLike)
    rhs = operand(IntegerLike)
    result = result(IntegerLike, like="lhs")

    def fold(self):
        """`x + 0 -> x`, and the sum of two constants."""
        lhs, rhs = (v.defining_op for v in self.operands)
        if isinstance(rhs, Const) and rhs.value.value == 0:
            return (self.lhs,)
        if isinstance(lhs, Const) and isinstance(rhs, Const):
            return (IntegerAttr(lhs.value.value + rhs.value.value, i32),)
        return None


register_constant_materializer(
    "pt", lambda value, type, location: Const(value=value, result=type, location=location)
)


@irdl_op
class Sink(Operation):
    name = "pt.sink"
    traits = frozenset({MemoryWrite})
    values = var_operand(IntegerLike)


@irdl_op
class Wrap(Operation):
    """An op with a region whose body may use values from outside."""

    name = "pt.wrap"
    traits = frozenset({MemoryWrite})
    body = region()


@irdl_op
class End(Operation):
    name = "pt.end"
    traits = frozenset({Terminator})


@irdl_op
class Func(Operation):
    name = "pt.func"
    traits = frozenset({Symbol, IsolatedFromAbove})
    sym_name = attribute(StringAttr)
    sym_visibility = opt_attribute(StringAttr)
    callee = opt_attribute(SymbolRefAttr)
    body = region()


def _module_with_body():
    module = ModuleOp()
    func = Func(sym_name=StringAttr("k"), body=Region([Block()]))
    module.body.append(func)
    return module, func.body.block


def _const(block, value):
    return block.append(Const(value=IntegerAttr(value, i32), result=i32)).result


def test_cse_merges_equal_pure_ops_and_keeps_different_ones():
    module, block = _module_with_body()
    a, b = _const(block, 1), _const(block, 1)
    c = _const(block, 2)
    s1 = block.append(Add(a, c)).result
    s2 = block.append(Add(b, c)).result
    sink = block.append(Sink([s1, s2]))
    block.append(End())
    PassManager(["cse"], verify_each=True).run(module)
    names = [op.name for op in block]
    assert names == ["pt.const", "pt.const", "pt.add", "pt.sink", "pt.end"]
    assert sink.operands[0] is sink.operands[1]


def test_cse_reuses_enclosing_values_in_nested_regions_but_not_the_reverse():
    module, block = _module_with_body()
    outer = _const(block, 7)
    wrap = block.append(Wrap(body=Region([Block()])))
    inner_block = wrap.body.block
    inner = _const(inner_block, 7)
    inner_only = _const(inner_block, 9)
    inner_block.append(Sink([inner, inner_only]))
    inner_block.append(End())
    after = _const(block, 9)  # must not reuse the nested 9: it does not dominate
    sink = block.append(Sink([outer, after]))
    block.append(End())
    PassManager(["cse"], verify_each=True).run(module)
    assert inner_block.first_op.name == "pt.const"  # the 9 stays; the inner 7 is gone
    assert len([op for op in inner_block if op.name == "pt.const"]) == 1
    assert sink.operands[1] is after


def test_dce_erases_dead_chains_and_keeps_effects():
    module, block = _module_with_body()
    a = _const(block, 1)
    b = _const(block, 2)
    dead = block.append(Add(a, b)).result
    block.append(Add(dead, dead))
    block.append(Sink([a]))
    block.append(End())
    PassManager(["dce"], verify_each=True).run(module)
    assert [op.name for op in block] == ["pt.const", "pt.sink", "pt.end"]


def test_symbol_dce_erases_unreferenced_private_functions_only():
    module = ModuleOp()
    kernel = Func(
        sym_name=StringAttr("kernel"), callee=SymbolRefAttr("used"), body=Region([Block()])
    )
    used = Func(
        sym_name=StringAttr("used"), sym_visibility=StringAttr("private"), body=Region([Block()])
    )
    unused = Func(
        sym_name=StringAttr("unused"), sym_visibility=StringAttr("private"), body=Region([Block()])
    )
    for op in (kernel, used, unused):
        op.body.block.append(End())
        module.body.append(op)
    PassManager(["symbol-dce"]).run(module)
    assert [op.attributes["sym_name"].value for op in module.body] == ["kernel", "used"]


def test_canonicalize_folds_to_a_fixed_point():
    module, block = _module_with_body()
    x = _const(block, 5)
    zero = _const(block, 0)
    y = block.append(Add(x, zero)).result  # -> x
    z = block.append(Add(y, x)).result  # -> 10
    sink = block.append(Sink([z]))
    block.append(End())
    PassManager(["canonicalize"], verify_each=True).run(module)
    folded = sink.operands[0].defining_op
    assert isinstance(folded, Const) and folded.value.value == 10
    assert [op.name for op in block] == ["pt.const", "pt.sink", "pt.end"]
