"""Values, operations, blocks and regions: use-lists, the linked list of ops, clone, walk."""

from types import SimpleNamespace

import pytest
from ir_toy import AddOp, BranchOp, ConstantOp, LoopOp, NegOp, PrintOp, ReturnOp, YieldOp

from naiad.ir import (
    Block,
    FileLineColLoc,
    IntegerAttr,
    ModuleOp,
    Region,
    i32,
    i64,
)


def const(value=1, type=i32):
    return ConstantOp(value=IntegerAttr(value, type), result=type)


def users_of(value):
    return [(op.name, index) for op, index in value.uses]


def test_operands_register_their_uses():
    a, b = const(1), const(2)
    add = AddOp(a.result, b.result)
    twice = AddOp(a.result, a.result)
    assert users_of(a.result) == [("test.add", 0), ("test.add", 0), ("test.add", 1)]
    assert a.result.users == [add, twice]
    assert a.result.use_count == 3 and b.result.has_one_use


def test_set_operand_moves_the_use():
    a, b = const(1), const(2)
    add = AddOp(a.result, a.result)
    add.set_operand(1, b.result)
    assert add.operands == (a.result, b.result)
    assert a.result.uses == ((add, 0),) and b.result.uses == ((add, 1),)
    add.rhs = a.result  # the generated setter goes through set_operand
    assert a.result.use_count == 2 and not b.result.has_uses


def test_replace_all_uses_with():
    a, b = const(1), const(2)
    users = [AddOp(a.result, a.result) for _ in range(3)]
    a.result.replace_all_uses_with(b.result)
    assert not a.result.has_uses
    assert b.result.use_count == 6
    assert all(op.operands == (b.result, b.result) for op in users)


def test_replace_uses_where():
    a, b = const(1), const(2)
    add = AddOp(a.result, a.result)
    a.result.replace_uses_where(b.result, lambda op, index: index == 1)
    assert add.operands == (a.result, b.result)


def test_erase_refuses_while_results_are_used():
    a = const()
    add = AddOp(a.result, a.result)
    module = ModuleOp([a, add])
    with pytest.raises(ValueError, match="still has 2 use"):
        a.erase()
    add.erase()
    assert not a.result.has_uses and len(module.body) == 1
    a.erase()
    assert module.body.is_empty and a.parent is None


def test_forced_erase_leaves_users_to_the_caller():
    a = const()
    add = AddOp(a.result, a.result)
    ModuleOp([a, add])
    a.erase(force=True)
    assert add.operands == (a.result, a.result)


def test_erase_drops_uses_made_by_nested_ops():
    outer = const()
    loop = LoopOp(outs=[])
    body = loop.body.add_block()
    body.append(NegOp(outer.result))
    body.append(YieldOp([]))
    ModuleOp([outer, loop])
    assert outer.result.has_one_use
    loop.erase()
    assert not outer.result.has_uses


def test_block_is_a_linked_list_safe_to_erase_while_iterating():
    ops = [const(i) for i in range(6)]
    block = Block()
    for op in ops:
        block.append(op)
    seen = []
    for op in block:
        seen.append(op.value.value)
        if op.value.value % 2 == 0:
            op.erase()
    assert seen == [0, 1, 2, 3, 4, 5]
    assert [op.value.value for op in block] == [1, 3, 5]
    assert len(block) == 3
    for op in reversed(block):
        op.erase()
    assert block.is_empty and len(block) == 0 and block.first_op is None


def test_insertion_and_moves():
    a, b, c, d = (const(i) for i in range(4))
    block = Block()
    block.append(a)
    block.prepend(b)
    block.insert_after(c, b)
    block.insert_before(d, a)
    assert [op.value.value for op in block] == [1, 2, 3, 0]
    b.move_after(a)
    assert [op.value.value for op in block] == [2, 3, 0, 1]
    b.move_before(c)
    assert [op.value.value for op in block] == [1, 2, 3, 0]
    assert c.prev_op is b and c.next_op is d
    with pytest.raises(ValueError, match="already in a block"):
        block.append(a)
    a.detach()
    assert a.parent is None and len(block) == 3 and block.last_op is d


def test_an_empty_block_is_still_true():
    assert Block()  # `if op.parent:` must not depend on the block's size


def test_block_arguments():
    block = Block([i32, i32])
    first, second = block.arguments
    middle = block.insert_argument(1, i64)
    assert [a.index for a in block.arguments] == [0, 1, 2]
    assert block.arguments == (first, middle, second)
    AddOp(second, second)
    with pytest.raises(ValueError, match="still has uses"):
        block.erase_argument(2)
    block.erase_argument(0)
    assert block.arguments == (middle, second) and second.index == 1


def make_loop():
    """outer constant, a loop whose body adds it to the block argument, and a print."""
    outer = const(7)
    loop = LoopOp([outer.result], outs=[i32])
    body = loop.body.add_block(Block([i32]))
    inner = body.append(AddOp(body.arguments[0], outer.result))
    body.append(YieldOp([inner.result]))
    printer = PrintOp([loop.outs[0]])
    module = ModuleOp([outer, loop, printer])
    return SimpleNamespace(module=module, outer=outer, loop=loop, inner=inner, printer=printer)


def test_walk_orders():
    ir = make_loop()
    module, outer, loop, inner, printer = ir.module, ir.outer, ir.loop, ir.inner, ir.printer
    yielded = loop.body.block.last_op
    assert list(module.walk()) == [module, outer, loop, inner, yielded, printer]
    post = list(module.walk(post_order=True))
    assert post == [outer, inner, yielded, loop, printer, module]


def test_walk_skips_the_body_of_an_op_erased_in_pre_order():
    ir = make_loop()
    module, loop, printer = ir.module, ir.loop, ir.printer
    printer.erase()
    seen = []
    for op in module.walk():
        seen.append(op.name)
        if op is loop:
            op.erase()
    assert seen == ["builtin.module", "test.constant", "test.loop"]


def test_parents_and_ancestry():
    ir = make_loop()
    module, outer, loop, inner = ir.module, ir.outer, ir.loop, ir.inner
    assert inner.parent_op() is loop and loop.parent_op() is module
    assert inner.parent_region() is loop.body and loop.body.parent_op() is loop
    assert module.body.parent_op() is module and module.parent_op() is None
    assert module.is_ancestor(inner) and loop.is_ancestor(loop) and not inner.is_ancestor(loop)
    assert outer.result.parent_block is module.body
    assert loop.body.block.arguments[0].parent_block is loop.body.block


def test_clone_copies_regions_and_maps_values():
    ir = make_loop()
    outer, loop, inner = ir.outer, ir.loop, ir.inner
    other = const(9)
    copy = loop.clone({outer.result: other.result})
    copied_body = copy.body.block
    copied_add = copied_body.first_op
    assert copied_add is not inner and copied_add.name == "test.add"
    assert copied_add.lhs is copied_body.arguments[0]
    assert copied_add.rhs is other.result  # mapped by the caller
    assert copy.inits == (other.result,)
    assert copied_body.last_op.values == (copied_add.result,)
    assert copy.parent is None and copy.outs[0].type is i32
    assert inner.rhs is outer.result and outer.result.use_count == 2  # the original is intact


def test_clone_keeps_unmapped_outer_values_and_copies_attributes():
    ir = make_loop()
    outer, inner = ir.outer, ir.inner
    copy = inner.clone()
    assert copy.rhs is outer.result and outer.result.use_count == 3
    located = const(3)
    located.location = FileLineColLoc("k.py", 1, 2)
    clone = located.clone()
    assert clone.value is located.value and clone.location is located.location
    assert clone.attributes is not located.attributes


def test_clone_of_a_cfg_region_remaps_forward_references():
    """Block 1 is listed before block 2 but uses a value defined there (block 2 dominates it
    through the branch order); the copy must use the copied definition."""
    region = Region()
    entry, late_user, definer = region.add_block(), region.add_block(), region.add_block()
    entry.append(BranchOp([], dest=definer))
    value = definer.append(const(5)).result
    definer.append(BranchOp([], dest=late_user))
    late_user.append(PrintOp([value]))
    late_user.append(ReturnOp([]))
    copy = Region()
    mapping = {}
    region.clone_into(copy, mapping)
    copied_print = copy.blocks[1].first_op
    assert copied_print.values == (copy.blocks[2].first_op.result,)
    assert copy.blocks[0].last_op.dest is copy.blocks[2]


def test_region_take_body():
    source = Region([Block(), Block()])
    blocks = list(source.blocks)
    dest = Region()
    dest.take_body(source)
    assert dest.blocks == blocks and source.is_empty and blocks[0].parent is dest


def test_module_symbol_lookup():
    from ir_toy import FuncOp

    from naiad.ir import StringAttr, SymbolRefAttr

    inner_module = ModuleOp(sym_name="inner")
    kernel = FuncOp(sym_name=StringAttr("kernel"))
    helper = FuncOp(sym_name=StringAttr("helper"))
    inner_module.body.append(helper)
    module = ModuleOp([kernel, inner_module])
    assert module.lookup_symbol("kernel") is kernel
    assert module.lookup_symbol(SymbolRefAttr("inner", ["helper"])) is helper
    assert module.lookup_symbol("missing") is None
