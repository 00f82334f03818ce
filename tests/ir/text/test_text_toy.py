"""The toy dialect of the IR core's tests (ir_toy.py) and ops no dialect declares, through the
text: the generic form of every op, a declarative format, regions, successors, segment sizes."""

from textwrap import dedent

from ir_toy import AddOp, BranchOp, ConstantOp, FuncOp, LoopOp, ReturnOp, SelectOp, YieldOp
from text_helpers import round_trip

from naiad.ir import (
    Block,
    FileLineColLoc,
    IntegerAttr,
    ModuleOp,
    Region,
    StringAttr,
    UnregisteredOp,
    i32,
)
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module


def build():
    at = FileLineColLoc("toy.py", 1, 1)
    func = FuncOp(sym_name=StringAttr("f"), body=Region([Block([i32])]), location=at)
    entry = func.body.blocks[0]
    one = ConstantOp(value=IntegerAttr(1, i32), result=i32, location=at)
    two = AddOp(entry.arguments[0], one.result, location=at)
    loop = LoopOp([two.result], outs=[i32], body=Region([Block([i32])]), location=at)
    loop.body.blocks[0].append(YieldOp([loop.body.blocks[0].arguments[0]], location=at))
    select = SelectOp(None, [one.result], [two.result, loop.results[0]], outputs=[i32], location=at)
    exit_block = Block([i32])
    exit_block.append(ReturnOp([exit_block.arguments[0]], location=at))
    for op in (one, two, loop, select, BranchOp([select.results[0]], dest=exit_block)):
        entry.append(op)
    func.body.add_block(exit_block)
    weird = UnregisteredOp(
        "other.thing",
        [one.result],
        [i32, i32],
        {"flag": StringAttr("x")},
        [Region([Block()])],
        location=at,
    )
    weird.regions[0].blocks[0].append(UnregisteredOp("other.end", location=at))
    entry.insert_before(weird, select)
    return ModuleOp([func], location=at)


def test_toy_module_round_trips_in_every_form():
    module = build()
    text, _ = round_trip(module)
    round_trip(module, generic=True)
    round_trip(module, locations=False)
    assert "%1 = test.add %arg0, %0 : i32" in text


def test_toy_module_text():
    assert print_module(build(), locations=False) == dedent("""\
        module {
          "test.func"() <{sym_name = "f"}> ({
          ^bb0(%arg0: i32):
            %0 = "test.constant"() <{value = 1 : i32}> : () -> i32
            %1 = test.add %arg0, %0 : i32
            %2 = "test.loop"(%1) ({
            ^bb0(%arg1: i32):
              "test.yield"(%arg1) : (i32) -> ()
            }) : (i32) -> i32
            %3:2 = "other.thing"(%0) ({
              "other.end"() : () -> ()
            }) {flag = "x"} : (i32) -> (i32, i32)
            %4 = "test.select"(%0, %1, %2) <{operandSegmentSizes = array<i32: 0, 1, 2>}> : (i32, i32, i32) -> i32
            "test.br"(%4)[^bb1] : (i32) -> ()
          ^bb1(%5: i32):  // pred: ^bb0
            "test.return"(%5) : (i32) -> ()
          }) : () -> ()
        }
        """)  # noqa: E501


def test_unregistered_ops_keep_what_the_generic_form_says():
    text = dedent("""\
        module {
          %0:2 = "other.op"() <{prop = 1 : i32}> ({
          ^bb0(%x: i32):
            "other.yield"(%x) : (i32) -> ()
          }, {
          }) {attr = "a"} : () -> (i32, f32)
        }
        """)
    op = parse_module(text).body.first_op
    assert isinstance(op, UnregisteredOp)
    assert sorted(op.attributes) == ["attr", "prop"]
    assert len(op.regions) == 2 and not op.regions[1].blocks
    assert [str(r.type) for r in op.results] == ["i32", "f32"]
