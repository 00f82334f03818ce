"""The Builder: insertion points, their restoration, and the locations it stamps."""

import pytest
from ir_toy import ConstantOp, LoopOp, YieldOp

from naiad.ir import Block, Builder, FileLineColLoc, IntegerAttr, NameLoc, UnknownLoc, i32


def make(builder, value):
    return builder.create(ConstantOp, value=IntegerAttr(value, i32), result=i32)


def values(block):
    return [op.value.value for op in block if op.name == "test.constant"]


def test_insertion_points_and_their_restoration():
    block = Block()
    b = Builder()
    with b.at_end(block):
        first = make(b, 1)
        last = make(b, 9)
        with b.at_start(block):
            make(b, 0)
        with b.before(last):
            make(b, 5)
            make(b, 6)
        with b.after(first):
            make(b, 2)
            make(b, 3)
        make(b, 10)  # back at the end
    assert values(block) == [0, 1, 2, 3, 5, 6, 9, 10]
    assert b.block is None


def test_insertion_point_is_restored_after_an_error():
    block = Block()
    b = Builder()
    with pytest.raises(RuntimeError), b.at_end(block):
        raise RuntimeError
    assert b.block is None and b.anchor is None


def test_nested_regions():
    outer = Block()
    b = Builder()
    with b.at_end(outer):
        loop = b.create(LoopOp, outs=[])
        with b.at_end(loop.body.add_block()):
            make(b, 1)
            b.create(YieldOp, [])
        make(b, 2)
    assert values(outer) == [2] and values(loop.body.block) == [1]


def test_locations_are_stamped():
    pos = FileLineColLoc("k.py", 4, 2)
    b = Builder(location=pos)
    block = Block()
    with b.at_end(block):
        assert make(b, 1).location is pos
        with b.at_location(NameLoc("x", pos)):
            assert make(b, 2).location is NameLoc("x", pos)
        assert make(b, 3).location is pos
        explicit = b.create(ConstantOp, value=IntegerAttr(4, i32), result=i32, location=None)
    assert explicit.location is UnknownLoc()


def test_no_insertion_point():
    b = Builder()
    with pytest.raises(ValueError, match="no insertion point"):
        make(b, 1)
    with pytest.raises(ValueError, match="in no block"), b.before(make_detached()):
        pass


def make_detached():
    return ConstantOp(value=IntegerAttr(0, i32), result=i32)
