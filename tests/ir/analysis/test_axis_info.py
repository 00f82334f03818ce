"""AxisInfo on Triton's own TTIR (every fixture, and values Triton is known to derive), and the
lattice and query helpers on their own. The rules one by one are checked by axis-info.mlir;
test_axis_info_soundness.py checks the facts against values the reference evaluator computes."""

from pathlib import Path

import pytest

import naiad.dialects.syntax  # noqa: F401  (registers the ops and their syntax)
from naiad.dialects import arith, scf, tt, ub
from naiad.ir import IntegerAttr, i32
from naiad.ir.parser import parse_module
from naiad.passes.analysis import K_MAX_DIVISOR, AxisInfo, AxisInfoAnalysis, order_from_contiguity
from naiad.passes.analysis.axis_info_lattice import (
    hint_values,
    join,
    pow2_divisor,
    shape_of,
)
from naiad.passes.analysis.axis_info_rules import is_tracked

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TTIR = sorted(FIXTURES.glob("*.ttir"))


def fixture(name: str):
    return parse_module((FIXTURES / name).read_text(), name)


def ops(module, cls):
    return [op for op in module.walk() if isinstance(op, cls)]


def named(module, cls, name: str):
    """The first result of an op of class `cls` whose location is named `name` (Triton names
    values after the source variable they are assigned to)."""
    return next(
        op.results[0]
        for op in module.walk()
        if isinstance(op, cls) and getattr(op.location, "name", None) == name
    )


@pytest.mark.parametrize("path", TTIR, ids=[p.name for p in TTIR])
def test_every_fixture(path):
    """The analysis runs on every Triton dump; every fact has the value's rank and is positive,
    and contiguity and constancy never exceed the dimension."""
    module = parse_module(path.read_text(), str(path))
    analysis = AxisInfoAnalysis(module)
    for op in module.walk():
        values = list(op.results) + [a for r in op.regions for b in r.blocks for a in b.arguments]
        for value in values:
            info = analysis.info(value)
            shape = shape_of(value.type)
            assert info.rank == len(shape), (op.name, info)
            fields = info.divisibility + info.contiguity + info.constancy
            assert all(x >= 1 for x in fields), (op.name, info)
            if is_tracked(value.type) and not isinstance(op, ub.PoisonOp):
                assert all(c <= n for c, n in zip(info.contiguity, shape)), (op.name, info)
                assert all(c <= n for c, n in zip(info.constancy, shape)), (op.name, info)


def test_vector_add_loads_vectorize_by_four():
    """Tutorial 01: the loaded pointers are runs of 1024 f32 aligned to 16 bytes, so a thread
    loads 4 at once (Triton's ld.global.v4.b32); the mask holds over 16 lanes."""
    module = fixture("01_vector_add.ttir")
    analysis = AxisInfoAnalysis(module)
    loads = ops(module, tt.LoadOp)
    assert len(loads) == 2
    for load in loads:
        info = analysis.info(load.ptr)
        assert info.contiguity == (1024,)
        assert info.divisibility == (16,)
        assert analysis.max_vector_width(load.ptr) == 4
        assert analysis.mask_alignment(load.mask) == 16
    offsets = named(module, arith.AddIOp, "offsets")
    assert analysis.info(offsets) == AxisInfo((1024,), (1024,), (1,))


def test_matmul_tiles():
    """Tutorial 03: a_ptrs run along K (64 f16, 16-byte aligned: 8 per vector), b_ptrs along
    N, where `% N` (N % 16 == 0) cuts the runs to 16; the loop keeps them."""
    module = fixture("03_matmul.ttir")
    analysis = AxisInfoAnalysis(module)
    a_ptrs = named(module, tt.AddPtrOp, "a_ptrs")
    b_ptrs = named(module, tt.AddPtrOp, "b_ptrs")
    assert analysis.info(a_ptrs) == AxisInfo((2, 16), (1, 64), (1, 1))
    assert analysis.info(b_ptrs) == AxisInfo((2, 16), (1, 16), (1, 1))
    assert analysis.max_vector_width(a_ptrs) == 8
    (loop,) = ops(module, scf.ForOp)
    a_iter, b_iter = loop.region_iter_args[:2]
    assert analysis.info(a_iter) == analysis.info(a_ptrs)
    assert analysis.info(b_iter) == analysis.info(b_ptrs)
    for load in ops(module, tt.LoadOp):
        assert analysis.max_vector_width(load.ptr) == 8


def test_hints_fixture():
    """lang_hints: tl.multiple_of(start, 8) and max_contiguous(multiple_of(offs, 64), 64)."""
    module = fixture("lang_hints.ttir")
    analysis = AxisInfoAnalysis(module)
    start = named(module, arith.MulIOp, "start")
    assert analysis.info(start).divisibility == (8,)
    offs = named(module, arith.AddIOp, "offs")
    assert analysis.info(offs) == AxisInfo((64,), (64,), (1,))


def test_callee_arguments_join_call_sites():
    """A function's arguments get what every call site passes (Triton's ModuleAxisInfoAnalysis
    writes it into the callee's attributes)."""
    module = parse_module(
        """
        tt.func private @f(%a: i32, %b: i32 {tt.divisibility = 4 : i32}) -> i32 {
          %s = arith.addi %a, %b : i32
          tt.return %s : i32
        }
        tt.func public @k(%x: i32 {tt.divisibility = 16 : i32}) {
          %c32 = arith.constant 32 : i32
          %r0 = tt.call @f(%x, %c32) : (i32, i32) -> i32
          %r1 = tt.call @f(%c32, %x) : (i32, i32) -> i32
          tt.return
        }
        """
    )
    analysis = AxisInfoAnalysis(module)
    f = ops(module, tt.FuncOp)[0]
    a, b = f.arguments
    assert analysis.info(a).divisibility == (16,)
    assert analysis.info(b).divisibility == (4,)  # the attribute bounds what callers say
    (add,) = ops(module, arith.AddIOp)
    assert analysis.info(add.result).divisibility == (4,)


def test_unreached_values_fall_back_to_their_declaration():
    """A block no branch reaches gives its arguments no facts; what they feed falls back to the
    pessimistic state and its own hints."""
    module = parse_module(
        """
        tt.func public @k(%x: i32 {tt.divisibility = 16 : i32}) -> i32 {
          tt.return %x : i32
        ^bb1(%z: i32):
          %y = arith.muli %z, %z {tt.divisibility = 4 : i32} : i32
          tt.return %y : i32
        }
        """
    )
    analysis = AxisInfoAnalysis(module)
    (mul,) = ops(module, arith.MulIOp)
    assert analysis.info(mul.result) == AxisInfo((4,), (1,), (1,))


def test_lattice_helpers():
    assert pow2_divisor(0) == K_MAX_DIVISOR
    assert pow2_divisor(48) == 16
    assert pow2_divisor(-16) == 16
    assert pow2_divisor(1 << 70) == K_MAX_DIVISOR
    runs_of_4 = AxisInfo((16,), (4,), (1,))
    runs_of_2 = AxisInfo((4,), (2,), (1,))
    # A run of 2 may start in the middle of a run of 4 (at an offset of 2).
    assert join(runs_of_4, runs_of_2) == AxisInfo((2,), (2,), (1,))
    assert join(None, runs_of_4) is runs_of_4
    assert join(AxisInfo((8,), (1,), (4,), 8), AxisInfo((8,), (1,), (4,), 8)).constant == 8
    assert join(AxisInfo((8,), (1,), (4,), 8), AxisInfo((16,), (1,), (4,), 16)) == AxisInfo(
        (8,), (1,), (4,)
    )
    assert hint_values(IntegerAttr(16, i32), 2) == (16, 16)
    assert order_from_contiguity((1, 64)) == [1, 0]
    assert order_from_contiguity((64, 1)) == [0, 1]
    assert order_from_contiguity((1, 1)) == [1, 0]  # row-major when nothing is known


def test_vector_width_is_capped_at_128_bits():
    module = parse_module(
        """
        tt.func public @k(%p: !tt.ptr<i8> {tt.divisibility = 16 : i32},
                          %q: !tt.ptr<f64> {tt.divisibility = 16 : i32},
                          %u: !tt.ptr<f32>,
                          %b: !tt.ptr<i1> {tt.divisibility = 16 : i32}) {
          %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
          %ps = tt.splat %p : !tt.ptr<i8> -> tensor<256x!tt.ptr<i8>>
          %pp = tt.addptr %ps, %r : tensor<256x!tt.ptr<i8>>, tensor<256xi32>
          %qs = tt.splat %q : !tt.ptr<f64> -> tensor<256x!tt.ptr<f64>>
          %qp = tt.addptr %qs, %r : tensor<256x!tt.ptr<f64>>, tensor<256xi32>
          %us = tt.splat %u : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
          %up = tt.addptr %us, %r : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
          %bs = tt.splat %b : !tt.ptr<i1> -> tensor<256x!tt.ptr<i1>>
          %bp = tt.addptr %bs, %r : tensor<256x!tt.ptr<i1>>, tensor<256xi32>
          tt.return
        }
        """
    )
    analysis = AxisInfoAnalysis(module)
    i8_ptrs, f64_ptrs, f32_ptrs, i1_ptrs = (op.result for op in ops(module, tt.AddPtrOp))
    assert analysis.max_vector_width(i8_ptrs) == 16
    assert analysis.max_vector_width(f64_ptrs) == 2
    assert analysis.max_vector_width(f32_ptrs) == 1  # no alignment known
    assert analysis.max_vector_width(i1_ptrs) == 16  # a bool is a byte in memory
    assert analysis.max_vector_width(f64_ptrs, dim=0) == 2
    (r,) = (op.result for op in ops(module, tt.MakeRangeOp))
    assert analysis.max_vector_width(r, element_bits=16) == 8  # offsets of 16-bit elements
    with pytest.raises(ValueError):
        analysis.max_vector_width(r)


def test_division_by_a_constant_zero_keeps_no_divisibility():
    """x // 0 is all ones (docs/architecture.md): no power of two of the divisor to shift by."""
    module = parse_module(
        """
        tt.func public @k(%x: i32 {tt.divisibility = 16 : i32}) -> i32 {
          %zero = arith.constant 0 : i32
          %q = arith.divui %x, %zero : i32
          tt.return %q : i32
        }
        """
    )
    (div,) = ops(module, arith.DivUIOp)
    assert AxisInfoAnalysis(module).info(div.result).divisibility == (1,)
