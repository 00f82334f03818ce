"""The printer's names, location aliases, blocks and options, checked against what MLIR
prints for the same IR (AsmPrinter's SSANameState and AliasInitializer, with Triton's
`printNameLocAsPrefix`)."""

from textwrap import dedent

from text_helpers import round_trip

from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module

NAMES = """\
module {
  tt.func @f(%a: i32 loc("n"("f.py":1:1)), %b: i32 loc("f.py":1:1)) {
    %0 = arith.addi %a, %b : i32 loc("x"("f.py":2:1))
    %1 = arith.addi %0, %0 : i32 loc("x"("f.py":3:1))
    %2 = arith.cmpi slt, %0, %1 : i32 loc("f.py":4:1)
    %c = arith.constant 1024 : i32 loc(unknown)
    %d = arith.constant -1 : i64 loc(unknown)
    %e = arith.constant true loc(unknown)
    %f = arith.constant 1.0 : f32 loc(unknown)
    %g = arith.constant 2 : index loc(unknown)
    scf.if %2 {
      %3 = arith.addi %1, %1 : i32 loc("x"("f.py":5:1))
      %4 = arith.addi %3, %c : i32 loc("f.py":5:2)
    } else {
      %3 = arith.addi %1, %1 : i32 loc("x"("f.py":6:1))
    } loc("f.py":7:1)
    tt.return loc("f.py":8:1)
  } loc("f.py":1:1)
} loc("f.py":1:1)
"""


def test_names_and_aliases_as_mlir_prints_them():
    # Names: a NameLoc names a value (`%n`, `%x`), a taken name gets `_K` from a counter
    # (`%x_0`), arith.constant names itself (`%c1024_i32`, `%c-1_i64`, `%true`, `%cst`,
    # `%c2` for index), the rest are `%argN` / `%N`. Sibling regions start from the counters
    # their parent ended with, so both branches say `%x_1`.
    # Aliases: every location gets one, leaves first, in the order the printer meets them
    # (an op's location before its body); argument locations are printed in full, and they
    # and what they refer to are defined above the module.
    assert print_module(parse_module(NAMES)) == dedent("""\
        #loc = loc("f.py":1:1)
        #loc10 = loc("n"(#loc))
        module {
          tt.func @f(%n: i32 loc("n"(#loc)), %arg1: i32 loc("f.py":1:1)) {
            %x = arith.addi %n, %arg1 : i32 loc(#loc11)
            %x_0 = arith.addi %x, %x : i32 loc(#loc12)
            %0 = arith.cmpi slt, %x, %x_0 : i32 loc(#loc3)
            %c1024_i32 = arith.constant 1024 : i32 loc(#loc4)
            %c-1_i64 = arith.constant -1 : i64 loc(#loc4)
            %true = arith.constant true loc(#loc4)
            %cst = arith.constant 1.000000e+00 : f32 loc(#loc4)
            %c2 = arith.constant 2 : index loc(#loc4)
            scf.if %0 {
              %x_1 = arith.addi %x_0, %x_0 : i32 loc(#loc13)
              %1 = arith.addi %x_1, %c1024_i32 : i32 loc(#loc7)
            } else {
              %x_1 = arith.addi %x_0, %x_0 : i32 loc(#loc14)
            } loc(#loc5)
            tt.return loc(#loc9)
          } loc(#loc)
        } loc(#loc)
        #loc1 = loc("f.py":2:1)
        #loc2 = loc("f.py":3:1)
        #loc3 = loc("f.py":4:1)
        #loc4 = loc(unknown)
        #loc5 = loc("f.py":7:1)
        #loc6 = loc("f.py":5:1)
        #loc7 = loc("f.py":5:2)
        #loc8 = loc("f.py":6:1)
        #loc9 = loc("f.py":8:1)
        #loc11 = loc("x"(#loc1))
        #loc12 = loc("x"(#loc2))
        #loc13 = loc("x"(#loc6))
        #loc14 = loc("x"(#loc8))
        """)


CFG = """\
module {
  tt.func @g(%c: i1, %v: i32) -> i32 {
    cf.cond_br %c, ^bb2(%v : i32), ^bb1
  ^bb1:
    %z = "u.op"() : () -> i32
    cf.br ^bb2(%z : i32)
  ^bb2(%r: i32):
    %p:2 = "u.pair"(%r) : (i32) -> (i32, i32)
    %s = arith.addi %p#0, %p#1 : i32
    %0 = "u.use"(%later) : (i32) -> i32
    %later = "u.def"() : () -> i32
    cf.br ^bb3
  ^bb3:
    tt.return %s : i32
  ^bb4:
    cf.br ^bb3
  }
}
"""


def test_blocks_successors_result_groups_and_forward_references():
    module = parse_module(CFG)
    assert print_module(module, locations=False) == dedent("""\
        module {
          tt.func @g(%arg0: i1, %arg1: i32) -> i32 {
            cf.cond_br %arg0, ^bb2(%arg1 : i32), ^bb1
          ^bb1:  // pred: ^bb0
            %0 = "u.op"() : () -> i32
            cf.br ^bb2(%0 : i32)
          ^bb2(%1: i32):  // 2 preds: ^bb0, ^bb1
            %2:2 = "u.pair"(%1) : (i32) -> (i32, i32)
            %3 = arith.addi %2#0, %2#1 : i32
            %4 = "u.use"(%5) : (i32) -> i32
            %5 = "u.def"() : () -> i32
            cf.br ^bb3
          ^bb3:  // 2 preds: ^bb2, ^bb4
            tt.return %3 : i32
          ^bb4:  // no predecessors
            cf.br ^bb3
          }
        }
        """)
    uses = next(op for op in module.walk() if op.name == "u.use")
    assert uses.operands[0].owner.name == "u.def"
    round_trip(module)


def test_generic_form_puts_properties_apart_and_numbers_uniquely():
    text = print_module(parse_module(CFG), generic=True, locations=False)
    assert '"tt.func"() <{function_type = (i1, i32) -> i32, sym_name = "g"}> ({' in text
    assert "^bb0(%arg0: i1, %arg1: i32):" in text
    assert (
        '"cf.cond_br"(%arg0, %arg1)[^bb2, ^bb1] <{operandSegmentSizes = array<i32: 1, 1, 0>}>'
        " : (i1, i32) -> ()" in text
    )
    assert '%3 = "arith.addi"(%2#0, %2#1) : (i32, i32) -> i32' in text
    assert text.startswith('"builtin.module"() ({\n')


def test_multi_result_ops_name_each_result_after_its_field():
    # mlir-tblgen gives an op declaring several results getAsmResultNames: tt.split.
    text = """\
    module {
      tt.func @s(%t: tensor<8x2xf32>) {
        %a, %b = tt.split %t : tensor<8x2xf32> -> tensor<8xf32>
        tt.return
      }
    }
    """
    printed = print_module(parse_module(dedent(text)), locations=False)
    assert "%outLHS, %outRHS = tt.split %arg0 : tensor<8x2xf32> -> tensor<8xf32>" in printed


def test_location_aliases_may_be_defined_after_use_and_nested():
    text = """\
    #top = loc("k.py":1:1)
    #name = loc("x"(#top))
    module {
      "u.op"() : () -> () loc(#later)
      "u.op"() : () -> () loc(callsite(#name at #later))
      "u.op"() : () -> () loc(fused<"meta">[#top, "k.py":9:9])
      "u.op"() : () -> () loc("only")
    } loc(#top)
    #later = loc("k.py":2:2)
    """
    module = parse_module(dedent(text))
    locations = [str(op.location) for op in module.body]
    assert locations == [
        'loc("k.py":2:2)',
        'loc(callsite("x"("k.py":1:1) at "k.py":2:2))',
        'loc(fused<"meta">["k.py":1:1, "k.py":9:9])',
        'loc("only")',
    ]
    round_trip(module)


def test_without_locations():
    module = parse_module(NAMES)
    text = print_module(module, locations=False)
    assert "loc" not in text and "#" not in text
    round_trip(module, locations=False)


def test_empty_module_and_module_attributes():
    assert print_module(parse_module("module {\n}"), locations=False) == "module {\n}\n"
    text = 'module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {\n}\n'
    assert print_module(parse_module(text), locations=False) == text
    named = "module @m {\n}\n"
    assert print_module(parse_module(named), locations=False) == named


def test_ops_outside_a_module_are_wrapped_in_one():
    module = parse_module('"u.a"() : () -> ()\n"u.b"() : () -> ()\n')
    assert [op.name for op in module.body] == ["u.a", "u.b"]


SYNTAX = """\
module {
  tt.func private @decl(i32 {tt.divisibility = 16 : i32}, f32) -> (f32 {a.b}, i32)
  tt.func @h(%arg0: i32, %arg1: i1) -> i32 attributes {noinline = true} {
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %0 = scf.for unsigned %arg2 = %c0_i32 to %c4_i32 step %c4_i32 iter_args(%arg3 = %arg0) -> (i32)  : i32 {
      scf.yield %arg3 : i32
    } {tt.num_stages = 2 : i32}
    %1 = arith.select %arg1, %0, %c4_i32 : i32
    cf.cond_br %arg1 weights([1, 2]), ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    %2 = ub.poison : i32
    tt.return %2 : i32
  ^bb2:  // pred: ^bb0
    %3:2 = scf.while (%arg2 = %1) : (i32) -> (i32, i32) {
      scf.condition(%arg1) %arg2, %arg2 : i32, i32
    } do {
    ^bb0(%arg2: i32, %arg3: i32):
      scf.yield %arg2 : i32
    } attributes {foo}
    ttg.barrier local|global_read
    llvm.intr.assume %arg1 : i1
    tt.return %3#1 : i32
  }
}
"""  # noqa: E501


def test_custom_syntaxes_print_back():
    # Declarations with argument and result attributes, `unsigned` loops with attributes after
    # the body, branch weights, while loops (the `after` region shows its arguments), bit
    # enums, and the one-op dialects of TTIR.
    module = parse_module(SYNTAX)
    assert print_module(module, locations=False) == SYNTAX
    branch = next(op for op in module.walk() if op.name == "cf.cond_br")
    assert str(branch.attributes["branch_weights"]) == "array<i32: 1, 2>"
    barrier = next(op for op in module.walk() if op.name == "ttg.barrier")
    assert str(barrier.attributes["addrSpace"]) == "3 : i32"
    round_trip(module)
    round_trip(module, generic=True)
